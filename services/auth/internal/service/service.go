// Package service implements the identity provider's gRPC APIs, a file per
// flow: discovery.go (client list, certificates, discovery), token.go (the
// token endpoint's grants and client authentication), bearer.go (tokens
// presented back: token info, user info, user search, introspection),
// register.go (key registration and sign requests), login.go (the login form
// and authorization codes), account.go (self-service: mailed links,
// password reset), revoke.go (RFC 7009 and the revocation list) and
// admin.go (AuthAdmin); limits.go holds the size limits of their fields.
// This file holds the Service and what they share.
package service

import (
	"context"
	"crypto/rsa"
	"crypto/x509"
	"log/slog"
	"net/mail"
	"strings"
	"time"

	"github.com/go-webauthn/webauthn/webauthn"

	"fris.dev/pkg/audit"
	"fris.dev/pkg/kv"
	"fris.dev/pkg/password"
	"fris.dev/pkg/ratelimit"
	"fris.dev/pkg/rpcerr"
	authv1 "fris.dev/proto/auth/v1"
	"fris.dev/services/auth/internal/keys"
	"fris.dev/services/auth/internal/pwpolicy"
	"fris.dev/services/auth/internal/storage"
	"fris.dev/services/auth/internal/tokens"
)

// Config is the service's behaviour.
type Config struct {
	Issuer         string
	AllowRegister  bool
	MinKeyBits     int
	SignRequestTTL time.Duration
	AuthCodeTTL    time.Duration
	DefaultScopes  []string
	// RegisterScopes are the scopes a user who registers a key through
	// POST /register starts with (none by default: role scopes such as
	// identity.ScopeResearcher are an operator's to grant).
	RegisterScopes  []string
	MaxSearchResult int
	// SpendWait bounds how long a refresh's spend waits for others to
	// share its commit (zero: 10ms).
	SpendWait time.Duration
	// Audit records sign-ins, registrations and refresh reuse; nil
	// records nothing.
	Audit *audit.Logger
	// Guards are the abuse limits of the credential checks; nil ones
	// limit nothing.
	Guards Guards
	// Mail sends people their links (account.go); nil writes the links
	// to the log instead.
	Mail Mailer
	// ResetTTL is how long a password-reset link may be used, VerifyTTL
	// an email verification link.
	ResetTTL  time.Duration
	VerifyTTL time.Duration
	// LegacyRefresh issues refresh responses as before the refresh key:
	// every refresh token signed with the RSA signing key, an id token in
	// every refresh response (the baseline of BENCHMARKS.md, suite auth).
	LegacyRefresh bool
	// RefreshSupersedesAccess: once a refresh token is spent, the access
	// token issued with it is no longer active to the provider's own
	// checks (introspection, userinfo, tokeninfo), as Hydra does.
	RefreshSupersedesAccess bool
	// Passkeys is the WebAuthn relying party (passkey.go); its zero value
	// turns passkeys off.
	Passkeys PasskeyConfig
	// Passwords is the policy of every new password (password_policy.go);
	// nil: pwpolicy.DefaultMinLength without the common list.
	Passwords *pwpolicy.Policy
	// RequireSecondFactor are the roles (scopes) whose holders sign in
	// with a second factor (-require-2fa-for; totp.go).
	RequireSecondFactor []string
}

// Guards limit failed credential checks per account and client address,
// per client address, and per account overall (docs/security.md, "Abuse limits").
type Guards struct {
	// Login: the login form's password, per email address.
	Login *ratelimit.Guard
	// Secret: a client's secret (token, revocation and introspection
	// endpoints), per client ID.
	Secret *ratelimit.Guard
	// Signature: a signed sign-request code, per user key.
	Signature *ratelimit.Guard
	// Register: registrations (POST /register) per client address, so
	// its 409 for a taken email cannot list the accounts at speed.
	Register *ratelimit.Guard
	// Reset: password-reset requests (each one spent, since each may send
	// a mail) per email address and client address, with the account's
	// ceiling, which the holder's known device skips.
	Reset *ratelimit.Guard
	// Link: mailed links' tokens that do not work, per client address.
	Link *ratelimit.Guard
	// Passkey: passkey sign-ins that fail, per client address only: a
	// passkey names no account until it is checked, and no stranger can
	// use up its holder's.
	Passkey *ratelimit.Guard
}

// Service holds what every RPC needs.
type Service struct {
	cfg    Config
	store  storage.Store
	keys   *keys.Manager
	tokens *tokens.Issuer
	hash   *password.Hasher
	log    *slog.Logger
	now    func() time.Time
	// spawn runs work the answer must not wait for (sending a mail).
	spawn func(func())
	// rp is the passkeys' relying party; nil when they are off.
	rp *webauthn.WebAuthn
}

// New wires the service.
func New(cfg Config, store storage.Store, k *keys.Manager, t *tokens.Issuer, h *password.Hasher, log *slog.Logger) *Service {
	if cfg.MaxSearchResult <= 0 {
		cfg.MaxSearchResult = 100
	}
	if cfg.SpendWait <= 0 {
		cfg.SpendWait = defaultSpendWait
	}
	if cfg.ResetTTL <= 0 {
		cfg.ResetTTL = 30 * time.Minute
	}
	if cfg.VerifyTTL <= 0 {
		cfg.VerifyTTL = 72 * time.Hour
	}
	if cfg.Passwords == nil {
		cfg.Passwords, _ = pwpolicy.New(pwpolicy.DefaultMinLength, false) // cannot fail
	}
	// The flags were checked (CheckPasskeys): a refusal here leaves
	// passkeys off, said in the log, rather than the service down.
	rp, err := newRelyingParty(cfg.Passkeys)
	if err != nil {
		log.Error("passkeys are off: the relying party is not valid", "err", err)
	}
	return &Service{cfg: cfg, store: store, keys: k, tokens: t, hash: h, log: log, now: time.Now, spawn: func(f func()) { go f() }, rp: rp}
}

// Ready reports whether the store answers.
func (s *Service) Ready(ctx context.Context) error { return s.store.Ping(ctx) }

func (s *Service) err(ctx context.Context, err error) error { return rpcerr.From(ctx, s.log, err) }

func invalid(format string, a ...any) error  { return rpcerr.New(rpcerr.ErrInvalid, format, a...) }
func notFound(format string, a ...any) error { return rpcerr.New(kv.ErrNotFound, format, a...) }
func denied(format string, a ...any) error   { return rpcerr.New(rpcerr.ErrPermission, format, a...) }
func unauth(format string, a ...any) error {
	return rpcerr.New(rpcerr.ErrUnauthenticated, format, a...)
}

func apiClient(c storage.Client) *authv1.Client {
	return &authv1.Client{ClientId: c.ID, Name: c.Name, Description: c.Description, RedirectUrl: strings.Join(c.RedirectURLs, ","), Type: c.Type}
}

func seconds(t time.Time) uint32 { return uint32(t.Unix()) }

// Public implements AuthService.
type Public struct {
	authv1.UnimplementedAuthServiceServer
	*Service
}

// revokedBy reports whether the user's or the client's revocation (see
// storage.User.RevokedBefore) covers token t; c is zero for a token issued
// to no client.
func revokedBy(t *tokens.Claims, u storage.User, c storage.Client) bool {
	iat := int64(t.IssuedAt)
	return iat < u.RevokedBefore || iat < c.RevokedBefore
}

// parseRSA reads an SPKI DER RSA public key of at least minBits.
func parseRSA(der []byte, minBits int) (*rsa.PublicKey, error) {
	k, err := x509.ParsePKIXPublicKey(der)
	if err != nil {
		return nil, invalid("the key is not a DER encoded public key: %v", err)
	}
	pub, ok := k.(*rsa.PublicKey)
	if !ok {
		return nil, invalid("the key is not an RSA key")
	}
	if pub.N.BitLen() < minBits {
		return nil, invalid("the RSA key has %d bits; at least %d are required", pub.N.BitLen(), minBits)
	}
	return pub, nil
}

// signedIn is the audit class of an event whose caller proved who it is in
// the call itself (a password, a code, a refresh token, a bearer token the
// service checked, a mailed link), as the gateway's identity would tell:
// signed-in when it did, else what the call's identity says (anonymous
// without one), so a stranger's refusals are folded (pkg/audit).
func signedIn(proved bool) string {
	if proved {
		return audit.ClassSignedIn
	}
	return ""
}

// auditEmail is an email address as a caller typed it, for the audit log:
// trimmed and bounded, since a failed sign-in's "address" may be anything.
func auditEmail(e string) string {
	e = strings.TrimSpace(e)
	if len(e) > 254 {
		e = e[:254]
	}
	return e
}

// validEmail accepts a bare address (no display name).
func validEmail(e string) bool {
	a, err := mail.ParseAddress(e)
	return err == nil && a.Address == e && len(e) <= 254
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
