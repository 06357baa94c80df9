// Package service implements the identity provider's gRPC APIs.
package service

import (
	"context"
	"crypto"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/mail"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc/metadata"

	"fris.dev/pkg/audit"
	"fris.dev/pkg/identity"
	"fris.dev/pkg/inputlimit"
	"fris.dev/pkg/kv"
	"fris.dev/pkg/password"
	"fris.dev/pkg/ratelimit"
	"fris.dev/pkg/rpcerr"
	authv1 "fris.dev/proto/auth/v1"
	"fris.dev/services/auth/internal/keys"
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
}

// Guards limit failed credential checks per account and per client
// address (docs/security.md, "Abuse limits").
type Guards struct {
	// Login: the login form's password, per email address.
	Login *ratelimit.Guard
	// Secret: a client's secret (token, revocation and introspection
	// endpoints), per client ID.
	Secret *ratelimit.Guard
	// Signature: a signed sign-request code, per user key.
	Signature *ratelimit.Guard
}

// loginAccount is the key of an email address's sign-in budget: its case
// and surrounding spaces do not make another account.
func loginAccount(email string) string { return strings.ToLower(strings.TrimSpace(email)) }

// Service holds what every RPC needs.
type Service struct {
	cfg    Config
	store  storage.Store
	keys   *keys.Manager
	tokens *tokens.Issuer
	hash   *password.Hasher
	log    *slog.Logger
	now    func() time.Time
}

// New wires the service.
func New(cfg Config, store storage.Store, k *keys.Manager, t *tokens.Issuer, h *password.Hasher, log *slog.Logger) *Service {
	if cfg.MaxSearchResult <= 0 {
		cfg.MaxSearchResult = 100
	}
	if cfg.SpendWait <= 0 {
		cfg.SpendWait = defaultSpendWait
	}
	return &Service{cfg: cfg, store: store, keys: k, tokens: t, hash: h, log: log, now: time.Now}
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

// Client types of the spec's `type`.
var clientTypes = map[string]bool{"MDR": true, "FORMREPOSITORY": true, "UNDEFINED": true}

// validClientID: client IDs travel unescaped in query strings, form posts and
// the tokens' aud claim, and a store key must hold them.
var validClientID = regexp.MustCompile(`^[A-Za-z0-9._~-]{1,128}$`)

func apiClient(c storage.Client) *authv1.Client {
	return &authv1.Client{ClientId: c.ID, Name: c.Name, Description: c.Description, RedirectUrl: strings.Join(c.RedirectURLs, ","), Type: c.Type}
}

func userInfo(u storage.User) *authv1.UserInfo {
	return &authv1.UserInfo{
		RealName: u.RealName, ContactInformation: u.Contact, Email: u.Email, EmailVerified: u.EmailVerified,
		Sub: strconv.Itoa(int(u.ID)), Name: u.RealName,
		Locality: &authv1.Locality{Id: u.Locality.ID, Name: u.Locality.Name, Description: u.Locality.Description},
	}
}

func seconds(t time.Time) uint32 { return uint32(t.Unix()) }

// Public implements AuthService.
type Public struct {
	authv1.UnimplementedAuthServiceServer
	*Service
}

func (p Public) ListClients(ctx context.Context, _ *authv1.ListClientsRequest) (*authv1.ListClientsResponse, error) {
	cs, err := p.store.ListClients(ctx)
	if err != nil {
		return nil, p.err(ctx, err)
	}
	out := &authv1.ListClientsResponse{Clients: []*authv1.Client{}}
	for _, c := range cs {
		if !c.Disabled {
			out.Clients = append(out.Clients, apiClient(c))
		}
	}
	return out, nil
}

func (p Public) ListCerts(context.Context, *authv1.ListCertsRequest) (*authv1.ListCertsResponse, error) {
	return &authv1.ListCertsResponse{Keys: p.keys.Certs()}, nil
}

func (p Public) GetJWKS(context.Context, *authv1.GetJWKSRequest) (*authv1.JWKS, error) {
	return p.keys.JWKS(), nil
}

func (p Public) GetDiscovery(ctx context.Context, _ *authv1.GetDiscoveryRequest) (*authv1.Discovery, error) {
	base := strings.TrimRight(p.cfg.Issuer, "/")
	at := base + publicPrefix(ctx)
	return &authv1.Discovery{
		Issuer:                            base,
		AuthorizationEndpoint:             at + "/authorize",
		TokenEndpoint:                     at + "/token",
		JwksUri:                           at + "/jwks",
		UserinfoEndpoint:                  at + "/userinfo",
		ResponseTypesSupported:            []string{"code"},
		GrantTypesSupported:               []string{grantCode, grantRefresh, grantClient},
		SubjectTypesSupported:             []string{"public"},
		IdTokenSigningAlgValuesSupported:  []string{p.keys.Signer().Alg.String()},
		CodeChallengeMethodsSupported:     []string{"S256"},
		ScopesSupported:                   append([]string{"openid"}, p.cfg.DefaultScopes...),
		TokenEndpointAuthMethodsSupported: []string{"client_secret_basic", "client_secret_post"},
		ClaimsSupported:                   []string{"iss", "sub", "aud", "exp", "nbf", "iat", "jti", "nonce", "scope", "type", "email", "email_verified", "name", "sid"},
		RevocationEndpoint:                at + "/revoke",
		// none: a token issued to no client (the signature flow without
		// client_id) is revoked by whoever holds it.
		RevocationEndpointAuthMethodsSupported:    []string{"client_secret_basic", "client_secret_post", "none"},
		IntrospectionEndpoint:                     at + "/introspect",
		IntrospectionEndpointAuthMethodsSupported: []string{"client_secret_basic", "client_secret_post"},
	}, nil
}

// validPrefix is what the gateway accepts for -auth-prefix, tighter: path
// segments of URL-safe characters.
var validPrefix = regexp.MustCompile(`^(/[A-Za-z0-9._~-]+)+$`)

// publicPrefix is the path prefix the gateway serves group A under, which it
// sends with the discovery call; /oauth2 when it sent none or nothing sane.
func publicPrefix(ctx context.Context) string {
	md, _ := metadata.FromIncomingContext(ctx)
	if v := md.Get(identity.KeyAuthPrefix); len(v) == 1 && len(v[0]) <= 256 && validPrefix.MatchString(v[0]) {
		return v[0]
	}
	return "/oauth2"
}

// Grant types of the token endpoint (RFC 6749). The spec's clients send
// none: their flow follows from the fields they send.
const (
	grantCode    = "authorization_code"
	grantRefresh = "refresh_token"
	grantClient  = "client_credentials"
)

// OAuth 2.0 error codes (RFC 6749 5.2) the status code alone does not tell.
const (
	reasonUnsupportedGrant = "unsupported_grant_type"
	reasonInvalidClient    = "invalid_client"
)

// Token issues tokens by one of the spec's three flows, or by
// client_credentials.
func (p Public) Token(ctx context.Context, r *authv1.TokenRequest) (*authv1.TokenResponse, error) {
	var (
		set  tokens.Set
		err  error
		flow string
	)
	gt := r.GetGrantType()
	tooLong := tokenLimits(r)
	switch {
	case tooLong != nil:
		flow = "invalid"
		err = tooLong
	case gt == grantClient:
		flow = grantClient
		set, err = p.clientCredentials(ctx, r)
	case gt != "" && gt != grantCode && gt != grantRefresh:
		flow = "unsupported"
		err = rpcerr.WithReason(invalid("grant_type is not supported: use authorization_code, refresh_token or client_credentials"), reasonUnsupportedGrant)
	case r.GetRefreshToken() != "" && gt != grantCode:
		flow = grantRefresh
		set, err = p.refresh(ctx, r)
	case r.GetCode() != "" && gt != grantRefresh && r.GetSignature() != "":
		flow = "signature"
		set, err = p.signedCode(ctx, r)
	case r.GetCode() != "" && gt != grantRefresh:
		flow = grantCode
		set, err = p.clientCode(ctx, r)
	default:
		flow = "none"
		err = invalid("no payload: send code with client_id and client_secret, code with signature, or refresh_token")
	}
	if err != nil {
		err = p.err(ctx, err)
	}
	// Who signed in, by which flow; never the code, secret or token.
	ev := audit.Event{Action: "auth.token." + flow, Actor: set.Subject, Err: err}
	if id := r.GetClientId(); id != "" {
		ev.Attrs = append(ev.Attrs, slog.String("client_id", id))
	}
	p.cfg.Audit.Record(ctx, ev)
	if err != nil {
		return nil, err
	}
	res := &authv1.TokenResponse{AccessToken: set.Access, TokenType: "Bearer", ExpiresIn: uint32(set.ExpiresIn / time.Second)}
	if set.ID != "" {
		res.IdToken = &set.ID
	}
	if set.Refresh != "" {
		res.RefreshToken = &set.Refresh
	}
	return res, nil
}

// clientCredentials issues a client a token of its own (RFC 6749 4.4): the
// client authenticates with its secret, and the token names the client, not
// a user (tokens.IssueClient). It carries the deployment's default scopes
// except the role scopes: those name what a person may do, and a client's
// own token acts for no person (docs/security.md, Roles).
func (p Public) clientCredentials(ctx context.Context, r *authv1.TokenRequest) (tokens.Set, error) {
	failed := rpcerr.WithReason(unauth("client authentication failed"), reasonInvalidClient)
	if r.GetClientId() == "" || r.GetClientSecret() == "" {
		return tokens.Set{}, failed
	}
	c, err := p.store.GetClient(ctx, r.GetClientId())
	if errors.Is(err, storage.ErrNotFound) {
		return tokens.Set{}, p.unknownClient(ctx, r.GetClientId(), r.GetClientSecret(), failed)
	} else if err != nil {
		return tokens.Set{}, err
	}
	if err := p.checkSecret(ctx, c, r.GetClientSecret()); err != nil {
		return tokens.Set{}, err
	}
	if c.Disabled {
		return tokens.Set{}, rpcerr.WithReason(unauth("the client has been disabled"), reasonInvalidClient)
	}
	var scopes []string
	for _, s := range p.cfg.DefaultScopes {
		if !identity.IsRoleScope(s) {
			scopes = append(scopes, s)
		}
	}
	return p.tokens.IssueClient(c.ID, scopes, c.RevokedBefore)
}

// checkSecret verifies a client's secret: 401 invalid_client when wrong,
// 429 while the client ID or the caller's address failed too often (then
// without hashing anything).
func (p Public) checkSecret(ctx context.Context, c storage.Client, secret string) error {
	if p.hash.Remembered(c.SecretHash, secret) {
		// Right a moment ago: the client's every token request costs
		// no limiter round trip.
		return nil
	}
	if err := p.cfg.Guards.Secret.Check(ctx, c.ID); err != nil {
		return err
	}
	if err := p.hash.Check(ctx, c.SecretHash, secret); err != nil {
		if ctx.Err() != nil {
			// Gave up waiting for a hashing slot: not the client's mistake.
			return ctx.Err()
		}
		p.cfg.Guards.Secret.Failed(ctx, c.ID)
		return rpcerr.WithReason(unauth("client authentication failed"), reasonInvalidClient)
	}
	p.cfg.Guards.Secret.Succeeded(ctx)
	return nil
}

// unknownClient answers a secret presented for a client ID that does not
// exist exactly as a wrong secret: refused by the same abuse limit, after
// as long as a hash takes, counted as a failure; failed is the answer.
func (p Public) unknownClient(ctx context.Context, id, secret string, failed error) error {
	if err := p.cfg.Guards.Secret.Check(ctx, id); err != nil {
		return err
	}
	p.hash.Burn(ctx, secret)
	p.cfg.Guards.Secret.Failed(ctx, id)
	return failed
}

// clientCode is flow 1: a code from the browser login plus the client's
// secret.
func (p Public) clientCode(ctx context.Context, r *authv1.TokenRequest) (tokens.Set, error) {
	unknown := notFound("client ID, client secret or code unknown")
	c, err := p.store.GetClient(ctx, r.GetClientId())
	if errors.Is(err, storage.ErrNotFound) {
		return tokens.Set{}, p.unknownClient(ctx, r.GetClientId(), r.GetClientSecret(), unknown)
	} else if err != nil {
		return tokens.Set{}, err
	}
	if r.GetClientSecret() == "" {
		return tokens.Set{}, unknown
	}
	if err := p.cfg.Guards.Secret.Check(ctx, c.ID); err != nil {
		return tokens.Set{}, err
	}
	if err := p.hash.Check(ctx, c.SecretHash, r.GetClientSecret()); err != nil {
		if ctx.Err() != nil {
			// Gave up waiting for a hashing slot: not the client's mistake.
			return tokens.Set{}, ctx.Err()
		}
		p.cfg.Guards.Secret.Failed(ctx, c.ID)
		return tokens.Set{}, unknown
	}
	p.cfg.Guards.Secret.Succeeded(ctx)
	if c.Disabled {
		return tokens.Set{}, unauth("the client has been disabled")
	}
	g, err := p.store.TakeGrant(ctx, r.GetCode())
	if errors.Is(err, storage.ErrNotFound) || (err == nil && (g.Kind != storage.GrantAuthorization || g.ClientID != c.ID)) {
		return tokens.Set{}, notFound("client ID, client secret or code unknown")
	} else if err != nil {
		return tokens.Set{}, err
	}
	if g.Challenge != "" {
		sum := sha256.Sum256([]byte(r.GetCodeVerifier()))
		if r.GetCodeVerifier() == "" || base64.RawURLEncoding.EncodeToString(sum[:]) != g.Challenge {
			return tokens.Set{}, invalid("code_verifier does not match the code_challenge")
		}
	}
	if r.GetRedirectUri() != "" && r.GetRedirectUri() != g.RedirectURI {
		return tokens.Set{}, invalid("redirect_uri differs from the authorization request's")
	}
	u, err := p.activeUser(ctx, g.UserID)
	if err != nil {
		return tokens.Set{}, err
	}
	return p.issue(ctx, u, c, g.Nonce, nil)
}

// signedCode is flow 2: a code from a sign request, signed with the user's
// private key. client_id is optional: the sign request already names the key
// and its user, and the Samply auth client sends none. Without it the tokens
// are issued to no client (no aud).
func (p Public) signedCode(ctx context.Context, r *authv1.TokenRequest) (tokens.Set, error) {
	var c storage.Client
	if id := r.GetClientId(); id != "" {
		var err error
		c, err = p.store.GetClient(ctx, id)
		if errors.Is(err, storage.ErrNotFound) {
			return tokens.Set{}, notFound("client ID or sign request unknown")
		} else if err != nil {
			return tokens.Set{}, err
		}
		if c.Disabled {
			return tokens.Set{}, unauth("the client has been disabled")
		}
	}
	// The key is known once the sign request is taken (a lookup, no
	// work); an unknown code counts against the address alone.
	guard := p.cfg.Guards.Signature
	g, err := p.store.TakeGrant(ctx, r.GetCode())
	if errors.Is(err, storage.ErrNotFound) || (err == nil && g.Kind != storage.GrantSignRequest) {
		if err := guard.Check(ctx, ""); err != nil {
			return tokens.Set{}, err
		}
		guard.Failed(ctx, "")
		return tokens.Set{}, notFound("the sign request is unknown")
	} else if err != nil {
		return tokens.Set{}, err
	}
	account := "key:" + strconv.Itoa(int(g.KeyID))
	if err := guard.Check(ctx, account); err != nil {
		return tokens.Set{}, err
	}
	key, err := p.store.GetUserKey(ctx, g.KeyID)
	if err != nil {
		return tokens.Set{}, fmt.Errorf("key of a sign request: %w", err)
	}
	pub, err := parseRSA(key.DER, 0)
	if err != nil {
		return tokens.Set{}, err
	}
	sig, err := decodeSignature(r.GetSignature())
	if err != nil {
		guard.Failed(ctx, account)
		return tokens.Set{}, invalid("signature is not base64")
	}
	sum := sha512.Sum512([]byte(r.GetCode()))
	if rsa.VerifyPKCS1v15(pub, crypto.SHA512, sum[:], sig) != nil {
		guard.Failed(ctx, account)
		return tokens.Set{}, unauth("the signature does not verify with the registered key")
	}
	guard.Succeeded(ctx)
	u, err := p.activeUser(ctx, g.UserID)
	if err != nil {
		return tokens.Set{}, err
	}
	return p.issue(ctx, u, c, "", nil)
}

// decodeSignature reads standard base64, tolerating whitespace, missing
// padding and the URL alphabet, which clients produce in the wild.
func decodeSignature(s string) ([]byte, error) {
	s = strings.Map(func(r rune) rune {
		switch r {
		case ' ', '\n', '\r', '\t':
			return -1
		case '-':
			return '+'
		case '_':
			return '/'
		}
		return r
	}, s)
	return base64.RawStdEncoding.DecodeString(strings.TrimRight(s, "="))
}

// refresh is flow 3, with rotation and reuse detection. The refresh token
// alone is enough (the spec's clients send nothing else); a client that
// also authenticates, as standard libraries do, must be the token's client
// and present its right secret.
func (p Public) refresh(ctx context.Context, r *authv1.TokenRequest) (tokens.Set, error) {
	t, err := p.tokens.Read(ctx, r.GetRefreshToken(), tokens.TypeRefresh)
	switch {
	case errors.Is(err, tokens.ErrMalformed):
		return tokens.Set{}, invalid("the refresh token is not valid")
	case err != nil:
		return tokens.Set{}, denied("the refresh token is expired or not a refresh token")
	}
	if id := r.GetClientId(); id != "" && id != t.ClientID() {
		return tokens.Set{}, denied("the refresh token was issued to another client")
	}
	var c storage.Client
	if t.ClientID() != "" {
		c, err = p.store.GetClient(ctx, t.ClientID())
		if errors.Is(err, storage.ErrNotFound) {
			return tokens.Set{}, denied("the refresh token's client no longer exists")
		} else if err != nil {
			return tokens.Set{}, err
		}
	}
	u, err := p.store.GetUser(ctx, t.UserID())
	if errors.Is(err, storage.ErrNotFound) {
		return tokens.Set{}, denied("the user no longer exists")
	} else if err != nil {
		return tokens.Set{}, err
	}
	// Revoked (a disable, a new password, an operator's or RFC 7009
	// revocation after the token was issued) is 403 like any dead refresh
	// token, even once the user or client is enabled again.
	if revokedBy(t, u, c) {
		return tokens.Set{}, denied("the refresh token has been revoked")
	}
	if c.Disabled {
		return tokens.Set{}, unauth("the client has been disabled")
	}
	if sec := r.GetClientSecret(); sec != "" {
		if c.ID == "" {
			return tokens.Set{}, rpcerr.WithReason(unauth("client authentication failed: the refresh token was issued to no client"), reasonInvalidClient)
		}
		if err := p.checkSecret(ctx, c, sec); err != nil {
			return tokens.Set{}, err
		}
	}
	if u.Disabled {
		return tokens.Set{}, unauth("the user has been disabled")
	}
	if t.Session == "" {
		// Issued before refresh tokens carried their chain: its record
		// is not kept any more.
		return tokens.Set{}, denied("the refresh token is not valid any more; sign in again")
	}
	spent := storage.Refresh{JTI: t.ID, Chain: t.Session, UserID: u.ID, ClientID: c.ID, Expires: int64(t.ExpiresAt)}
	return p.issue(ctx, u, c, "", &spent)
}

// revokedBy reports whether the user's or the client's revocation (see
// storage.User.RevokedBefore) covers token t; c is zero for a token issued
// to no client.
func revokedBy(t *tokens.Claims, u storage.User, c storage.Client) bool {
	iat := int64(t.IssuedAt)
	return iat < u.RevokedBefore || iat < c.RevokedBefore
}

func (p Public) activeUser(ctx context.Context, id int32) (storage.User, error) {
	u, err := p.store.GetUser(ctx, id)
	if errors.Is(err, storage.ErrNotFound) {
		return u, denied("the user no longer exists")
	} else if err != nil {
		return u, err
	}
	if u.Disabled {
		return u, unauth("the user has been disabled")
	}
	return u, nil
}

// issue signs a token set. A sign-in starts a new refresh chain, which
// needs no write: the refresh token carries its chain, and the store only
// learns of a token when it is spent. A refresh spends the presented token
// (spent) and continues its chain; the spend is committed while the tokens
// are signed, so the response waits for the slower of the two rather than
// for both in turn, and is only answered once the spend is durable. Under
// load the spend shares its commit with others (defaultSpendWait). A
// refused spend (reuse, revoked chain) wastes the signatures, which is no
// more work than an accepted one. Signing cannot fail with a loaded key; if
// it did after a spend, the presented token would be gone and the client
// would sign in again.
func (p Public) issue(ctx context.Context, u storage.User, c storage.Client, nonce string, spent *storage.Refresh) (tokens.Set, error) {
	scopes := append([]string{"openid"}, p.cfg.DefaultScopes...)
	scopes = append(scopes, u.Scopes...)
	sub := tokens.Subject{
		UserID: u.ID, ClientID: c.ID, Email: u.Email, Name: u.RealName,
		EmailVerified: u.EmailVerified, Scopes: scopes, Nonce: nonce,
		RevokedBefore: max(u.RevokedBefore, c.RevokedBefore),
	}
	if spent == nil {
		sub.Session = tokens.RandomString(16)
		return p.tokens.Plan(sub).Sign()
	}
	sub.Session = spent.Chain
	plan := p.tokens.Plan(sub)
	recorded := make(chan error, 1)
	// The spend may wait up to SpendWait for others to share its commit;
	// signed() commits it at once if it is still waiting by then.
	wctx, signed := kv.WithFlush(ctx, p.cfg.SpendWait)
	go func() { recorded <- p.spend(wctx, *spent, plan.RefreshExpires) }()
	set, signErr := plan.Sign()
	signed()
	if err := <-recorded; err != nil {
		return tokens.Set{}, err
	}
	return set, signErr
}

// defaultSpendWait bounds how long a refresh's spend waits for others to
// share its commit. On an idle store the spend commits at once, while the
// tokens are signed. On a busy machine the spend's goroutine mostly gets no
// CPU until the signing is done; it then waits up to the bound, and the
// spends of that time share one commit: fewer commits, and less time the
// cores wait on fdatasync with nothing to sign (BENCHMARKS.md, suite auth,
// eighth series).
const defaultSpendWait = 10 * time.Millisecond

// spend marks a presented refresh token used. chainUntil is when the
// newest token of its chain, the one being issued, expires.
func (p Public) spend(ctx context.Context, r storage.Refresh, chainUntil time.Time) error {
	err := p.store.SpendRefresh(ctx, r, chainUntil)
	switch {
	case errors.Is(err, storage.ErrReused):
		p.log.WarnContext(ctx, "refresh token reused: chain revoked", "user", r.UserID, "client", r.ClientID)
		err := denied("the refresh token was already used; its chain is revoked")
		p.cfg.Audit.Record(ctx, audit.Event{Action: "auth.refresh.reuse", Actor: strconv.Itoa(int(r.UserID)), Err: err,
			Attrs: []slog.Attr{slog.String("client_id", r.ClientID), slog.Bool("chain_revoked", true)}})
		return err
	case errors.Is(err, storage.ErrRevoked):
		return denied("the refresh token has been revoked")
	case errors.Is(err, storage.ErrNotFound):
		return denied("the refresh token is not valid any more")
	}
	return err
}

// signAlgorithm is the Java name (Signature.getInstance) of
// RSASSA-PKCS1-v1_5 with SHA-512, the signature a signed code must carry.
const signAlgorithm = "SHA512withRSA"

// SignRequest hands out a code to be signed with the key named by id or by
// the SHA-512 of its SPKI DER.
func (p Public) SignRequest(ctx context.Context, r *authv1.SignRequestRequest) (*authv1.SignRequestResponse, error) {
	var (
		key storage.UserKey
		err error
	)
	id := r.GetKeyId()
	if id == 0 {
		id = r.GetKeyIdAlias()
	}
	hash := strings.ToLower(strings.TrimSpace(r.GetSha512Hash()))
	switch {
	case id > 0:
		key, err = p.store.GetUserKey(ctx, id)
	case hash != "":
		if _, derr := hex.DecodeString(hash); derr != nil || len(hash) != 128 {
			return nil, p.err(ctx, invalid("sha512Hash must be 128 hex digits"))
		}
		key, err = p.store.GetUserKeyByHash(ctx, hash)
	default:
		return nil, p.err(ctx, invalid("no payload: send keyId or sha512Hash"))
	}
	if errors.Is(err, storage.ErrNotFound) {
		return nil, p.err(ctx, notFound("the key could not be found"))
	} else if err != nil {
		return nil, p.err(ctx, err)
	}
	exp := p.now().Add(p.cfg.SignRequestTTL)
	code := tokens.RandomString(32)
	if err := p.store.PutGrant(ctx, code, storage.Grant{Kind: storage.GrantSignRequest, UserID: key.UserID, KeyID: key.ID, Expires: exp.Unix()}); err != nil {
		return nil, p.err(ctx, err)
	}
	return &authv1.SignRequestResponse{
		Code: code, ExpirationDate: seconds(exp), Algoritm: signAlgorithm,
		Algorithm: signAlgorithm, Exp: seconds(exp),
	}, nil
}

// bearer verifies the access token the gateway forwarded and returns it
// with its user; a client's own token (client_credentials) has none, and
// the user is zero.
func (p Public) bearer(ctx context.Context) (storage.User, *tokens.Claims, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	var raw string
	if v := md.Get("authorization"); len(v) > 0 {
		if scheme, tok, ok := strings.Cut(strings.TrimSpace(v[0]), " "); ok && strings.EqualFold(scheme, "Bearer") {
			raw = strings.TrimSpace(tok)
		}
	}
	if raw == "" {
		return storage.User{}, nil, denied("an access token is required")
	}
	t, err := p.tokens.Read(ctx, raw, tokens.TypeAccess)
	if err != nil {
		return storage.User{}, nil, denied("the access token is not valid")
	}
	u, _, err := p.current(ctx, t)
	if err != nil {
		return storage.User{}, nil, err
	}
	return u, t, nil
}

// errRevoked: a verified token that is no longer good (revoked, its user or
// client disabled or gone).
var errRevoked = rpcerr.New(rpcerr.ErrPermission, "the token has been revoked")

// current checks that a verified token still stands: not revoked by its
// chain or jti (or, for a refresh token, spent), its user and client still
// there, enabled and without a revocation since it was issued (a password
// change, a disable, an operator's revoke). It returns them (zero for a
// client's own token's user, or a token issued to no client); errRevoked
// when the token does not stand. The gateway checks the same from the
// revocation list; this is the service's own, current to the store.
func (p Public) current(ctx context.Context, t *tokens.Claims) (storage.User, storage.Client, error) {
	var (
		u storage.User
		c storage.Client
	)
	if revoked, err := p.store.Revoked(ctx, t.Session, t.ID); err != nil {
		return u, c, err
	} else if revoked {
		return u, c, errRevoked
	}
	var err error
	if id := t.ClientID(); id != "" {
		c, err = p.store.GetClient(ctx, id)
		if errors.Is(err, storage.ErrNotFound) {
			return u, c, errRevoked
		} else if err != nil {
			return u, c, err
		}
		if c.Disabled {
			return u, c, errRevoked
		}
	}
	if !t.IsClient() {
		u, err = p.store.GetUser(ctx, t.UserID())
		if errors.Is(err, storage.ErrNotFound) {
			return u, c, errRevoked
		} else if err != nil {
			return u, c, err
		}
		if u.Disabled {
			return u, c, errRevoked
		}
	}
	if revokedBy(t, u, c) {
		return u, c, errRevoked
	}
	return u, c, nil
}

func (p Public) GetTokenInfo(ctx context.Context, _ *authv1.GetTokenInfoRequest) (*authv1.TokenInfo, error) {
	_, t, err := p.bearer(ctx)
	if err != nil {
		return nil, p.err(ctx, err)
	}
	scopes := t.Scope
	if scopes == nil {
		scopes = []string{}
	}
	return &authv1.TokenInfo{
		ExpirationDate: seconds(t.Expiration()), Subject: t.Subject, Scope: scopes,
		Nonce: t.Nonce, NotBeofre: seconds(t.NotBeforeTime()), Issuer: t.Issuer,
	}, nil
}

func (p Public) GetUserInfo(ctx context.Context, _ *authv1.GetUserInfoRequest) (*authv1.UserInfo, error) {
	u, t, err := p.bearer(ctx)
	if err != nil {
		return nil, p.err(ctx, err)
	}
	if t.IsClient() {
		return nil, p.err(ctx, denied("the access token is a client's own: it has no user"))
	}
	return userInfo(u), nil
}

func (p Public) SearchUsers(ctx context.Context, r *authv1.SearchUsersRequest) (*authv1.SearchUsersResponse, error) {
	_, t, err := p.bearer(ctx)
	if err != nil {
		return nil, p.err(ctx, err)
	}
	// The gateway checks the scope first; this check keeps the names and
	// addresses closed to anyone who reaches the gRPC API another way.
	if !contains(t.Scope, identity.ScopeUserSearch) {
		return nil, p.err(ctx, denied("the access token lacks the scope %s", identity.ScopeUserSearch))
	}
	q := strings.ToLower(strings.TrimSpace(r.GetQuery()))
	if q == "" {
		return nil, p.err(ctx, invalid("query is required"))
	}
	us, err := p.store.ListUsers(ctx)
	if err != nil {
		return nil, p.err(ctx, err)
	}
	out := &authv1.SearchUsersResponse{Users: []*authv1.UserInfo{}}
	for _, u := range us {
		if u.Disabled {
			continue
		}
		if strings.Contains(strings.ToLower(u.RealName), q) || strings.Contains(strings.ToLower(u.Email), q) {
			out.Users = append(out.Users, userInfo(u))
			if len(out.Users) >= p.cfg.MaxSearchResult {
				break
			}
		}
	}
	return out, nil
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

func (p Public) Register(ctx context.Context, r *authv1.RegisterRequest) (res *authv1.RegisterResponse, err error) {
	defer func() {
		ev := audit.Event{Action: "auth.register", Target: auditEmail(r.GetEmail()), Err: err}
		if err == nil {
			ev.Actor = strconv.Itoa(int(res.GetUserId()))
			ev.Attrs = []slog.Attr{slog.Int("key_id", int(res.GetKeyId())), slog.String("scopes", strings.Join(p.cfg.RegisterScopes, ","))}
		}
		p.cfg.Audit.Record(ctx, ev)
	}()
	if !p.cfg.AllowRegister {
		return nil, p.err(ctx, rpcerr.New(rpcerr.ErrUnimplemented, "registration has been disabled"))
	}
	if err := registerLimits(r); err != nil {
		return nil, p.err(ctx, err)
	}
	email := strings.TrimSpace(r.GetEmail())
	if email == "" && r.GetBase64EncodedPublicKey() == "" {
		return nil, p.err(ctx, invalid("no payload"))
	}
	if !validEmail(email) {
		return nil, p.err(ctx, invalid("email is not a valid address"))
	}
	der, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(r.GetBase64EncodedPublicKey()), ""))
	if err != nil || len(der) == 0 {
		return nil, p.err(ctx, invalid("base64EncodedPublicKey is not base64"))
	}
	if _, err := parseRSA(der, p.cfg.MinKeyBits); err != nil {
		return nil, p.err(ctx, err)
	}
	sum := sha512.Sum512(der)
	u, k, err := p.store.CreateUser(ctx, storage.User{Email: email, RealName: r.GetName(), Scopes: append([]string(nil), p.cfg.RegisterScopes...), Created: p.now().Unix()},
		&storage.UserKey{DER: der, SHA512: hex.EncodeToString(sum[:]), Description: r.GetDescription(), Created: p.now().Unix()})
	if errors.Is(err, storage.ErrExists) {
		return nil, p.err(ctx, rpcerr.New(kv.ErrExists, "a user with this email address (or this key) already exists"))
	} else if err != nil {
		return nil, p.err(ctx, err)
	}
	p.log.InfoContext(ctx, "registered", "user", u.ID, "key", k.ID)
	return &authv1.RegisterResponse{UserId: u.ID, KeyId: k.ID, UserId_: u.ID, KeyId_: k.ID}, nil
}

// authorize checks an authorization request and picks the redirect URI.
func (p Public) authorize(ctx context.Context, r *authv1.AuthorizeRequest) (storage.Client, string, error) {
	if err := authorizeLimits(r); err != nil {
		return storage.Client{}, "", err
	}
	c, err := p.store.GetClient(ctx, r.GetClientId())
	if errors.Is(err, storage.ErrNotFound) {
		return c, "", notFound("unknown client_id")
	} else if err != nil {
		return c, "", err
	}
	if c.Disabled {
		return c, "", unauth("the client has been disabled")
	}
	redirect := r.GetRedirectUri()
	if redirect == "" {
		if len(c.RedirectURLs) == 0 {
			return c, "", invalid("the client has no registered redirect URL")
		}
		redirect = c.RedirectURLs[0]
	} else if !contains(c.RedirectURLs, redirect) {
		return c, "", invalid("redirect_uri is not registered for this client")
	}
	switch r.GetCodeChallengeMethod() {
	case "", "S256":
	default:
		return c, "", invalid("code_challenge_method must be S256")
	}
	if r.GetCodeChallengeMethod() == "S256" && r.GetCodeChallenge() == "" {
		return c, "", invalid("code_challenge is missing")
	}
	if ch := r.GetCodeChallenge(); ch != "" {
		if b, err := base64.RawURLEncoding.DecodeString(ch); err != nil || len(b) != sha256.Size {
			return c, "", invalid("code_challenge must be the base64url SHA-256 of the verifier (S256)")
		}
	}
	return c, redirect, nil
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func (p Public) Authorize(ctx context.Context, r *authv1.AuthorizeRequest) (*authv1.AuthorizeResponse, error) {
	c, redirect, err := p.authorize(ctx, r)
	if err != nil {
		return nil, p.err(ctx, err)
	}
	return &authv1.AuthorizeResponse{ClientName: c.Name, RedirectUri: redirect}, nil
}

func (p Public) Login(ctx context.Context, r *authv1.LoginRequest) (res *authv1.LoginResponse, err error) {
	var user int32
	defer func() {
		ev := audit.Event{Action: "auth.login", Target: auditEmail(r.GetEmail()), Err: err,
			Attrs: []slog.Attr{slog.String("client_id", r.GetRequest().GetClientId())}}
		if err == nil {
			ev.Actor = strconv.Itoa(int(user))
		}
		p.cfg.Audit.Record(ctx, ev)
	}()
	if err := inputlimit.Check(inputlimit.F("email", r.GetEmail(), inputlimit.Email), inputlimit.F("password", r.GetPassword(), inputlimit.Password)); err != nil {
		return nil, p.err(ctx, err)
	}
	c, redirect, err := p.authorize(ctx, r.GetRequest())
	if err != nil {
		return nil, p.err(ctx, err)
	}
	// Before the user is looked up, and the same for an address no
	// account has: a refusal tells nothing and costs no hash.
	account := loginAccount(r.GetEmail())
	if err := p.cfg.Guards.Login.Check(ctx, account); err != nil {
		return nil, p.err(ctx, err)
	}
	wrong := unauth("email or password is wrong")
	u, err := p.store.GetUserByEmail(ctx, r.GetEmail())
	if errors.Is(err, storage.ErrNotFound) || (err == nil && u.PasswordHash == "") {
		p.hash.Burn(ctx, r.GetPassword())
		p.cfg.Guards.Login.Failed(ctx, account)
		return nil, p.err(ctx, wrong)
	} else if err != nil {
		return nil, p.err(ctx, err)
	}
	if err := p.hash.Check(ctx, u.PasswordHash, r.GetPassword()); err != nil || u.Disabled {
		if ctx.Err() != nil {
			return nil, p.err(ctx, ctx.Err())
		}
		p.cfg.Guards.Login.Failed(ctx, account)
		return nil, p.err(ctx, wrong)
	}
	p.cfg.Guards.Login.Succeeded(ctx)
	code := tokens.RandomString(32)
	ar := r.GetRequest()
	g := storage.Grant{
		Kind: storage.GrantAuthorization, ClientID: c.ID, UserID: u.ID, RedirectURI: redirect,
		Challenge: ar.GetCodeChallenge(), ChallengeMeth: ar.GetCodeChallengeMethod(), Scope: ar.GetScope(), Nonce: ar.GetNonce(),
		Expires: p.now().Add(p.cfg.AuthCodeTTL).Unix(),
	}
	if err := p.store.PutGrant(ctx, code, g); err != nil {
		return nil, p.err(ctx, err)
	}
	user = u.ID
	return &authv1.LoginResponse{Code: code, RedirectUri: redirect}, nil
}

// Admin implements AuthAdmin.
type Admin struct {
	authv1.UnimplementedAuthAdminServer
	*Service
}

func clientRecord(c storage.Client) *authv1.ClientRecord {
	return &authv1.ClientRecord{Client: apiClient(c), Disabled: c.Disabled, Created: uint32(c.Created)}
}

func userRecord(u storage.User) *authv1.UserRecord {
	return &authv1.UserRecord{
		Id: u.ID, Email: u.Email, RealName: u.RealName, ContactInformation: u.Contact,
		Locality:      &authv1.Locality{Id: u.Locality.ID, Name: u.Locality.Name, Description: u.Locality.Description},
		EmailVerified: u.EmailVerified, Disabled: u.Disabled, Scopes: u.Scopes, HasPassword: u.PasswordHash != "",
		Created: uint32(u.Created),
	}
}

func splitURLs(s string) ([]string, error) {
	var out []string
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		u, err := url.Parse(part)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.Fragment != "" {
			return nil, invalid("redirect URL %q must be an absolute http(s) URL without fragment", part)
		}
		out = append(out, part)
	}
	return out, nil
}

func (a Admin) CreateClient(ctx context.Context, r *authv1.CreateClientRequest) (*authv1.CreateClientResponse, error) {
	if err := createClientLimits(r); err != nil {
		return nil, a.err(ctx, err)
	}
	typ := strings.ToUpper(r.GetType())
	if typ == "" {
		typ = "UNDEFINED"
	}
	if !clientTypes[typ] {
		return nil, a.err(ctx, invalid("type must be MDR, FORMREPOSITORY or UNDEFINED"))
	}
	if strings.TrimSpace(r.GetName()) == "" {
		return nil, a.err(ctx, invalid("name is required"))
	}
	urls, err := splitURLs(r.GetRedirectUrl())
	if err != nil {
		return nil, a.err(ctx, err)
	}
	id := r.GetClientId()
	if id == "" {
		id = tokens.RandomString(12)
	} else if !validClientID.MatchString(id) {
		return nil, a.err(ctx, invalid("a client ID is 1 to 128 of A-Z a-z 0-9 . _ ~ -"))
	}
	secret := r.GetSecret()
	if secret == "" {
		secret = tokens.RandomString(32)
	} else if len(secret) < 16 {
		return nil, a.err(ctx, invalid("a client secret needs at least 16 characters"))
	}
	h, err := a.hash.Hash(ctx, secret)
	if err != nil {
		return nil, a.err(ctx, err)
	}
	c := storage.Client{ID: id, Name: r.GetName(), Description: r.GetDescription(), RedirectURLs: urls, Type: typ, SecretHash: h, Created: a.now().Unix()}
	if err := a.store.CreateClient(ctx, c); err != nil {
		return nil, a.err(ctx, err)
	}
	return &authv1.CreateClientResponse{Client: clientRecord(c), Secret: secret}, nil
}

// revokeNow is the revoked-before a revocation made now sets, given the
// one before (prev): every token issued up to and including this second
// (iat has whole seconds) is revoked; tokens issued later in the same
// second carry it as their iat (tokens.Subject.RevokedBefore). It is
// always past prev, since tokens issued since prev may carry prev.
func (s *Service) revokeNow(prev int64) int64 { return max(s.now().Unix(), prev) + 1 }

func (a Admin) SetClientDisabled(ctx context.Context, r *authv1.SetClientDisabledRequest) (*authv1.SetClientDisabledResponse, error) {
	// Disabling revokes every token issued to the client; enabling it
	// again brings none of them back.
	err := a.store.UpdateClient(ctx, r.GetClientId(), func(c *storage.Client) error {
		c.Disabled = r.GetDisabled()
		if c.Disabled {
			c.RevokedBefore = a.revokeNow(c.RevokedBefore)
		}
		return nil
	})
	if err != nil {
		return nil, a.err(ctx, err)
	}
	return &authv1.SetClientDisabledResponse{}, nil
}

func (a Admin) ListAllClients(ctx context.Context, _ *authv1.ListAllClientsRequest) (*authv1.ListAllClientsResponse, error) {
	cs, err := a.store.ListClients(ctx)
	if err != nil {
		return nil, a.err(ctx, err)
	}
	out := &authv1.ListAllClientsResponse{}
	for _, c := range cs {
		out.Clients = append(out.Clients, clientRecord(c))
	}
	return out, nil
}

func (a Admin) CreateUser(ctx context.Context, r *authv1.CreateUserRequest) (*authv1.CreateUserResponse, error) {
	if err := createUserLimits(r); err != nil {
		return nil, a.err(ctx, err)
	}
	email := strings.TrimSpace(r.GetEmail())
	if !validEmail(email) {
		return nil, a.err(ctx, invalid("email is not a valid address"))
	}
	u := storage.User{
		Email: email, RealName: r.GetRealName(), Contact: r.GetContactInformation(),
		Locality:      storage.Locality{ID: r.GetLocality().GetId(), Name: r.GetLocality().GetName(), Description: r.GetLocality().GetDescription()},
		EmailVerified: r.GetEmailVerified(), Scopes: r.GetScopes(), Created: a.now().Unix(),
	}
	if pw := r.GetPassword(); pw != "" {
		if len(pw) < 8 {
			return nil, a.err(ctx, invalid("a password needs at least 8 characters"))
		}
		h, err := a.hash.Hash(ctx, pw)
		if err != nil {
			return nil, a.err(ctx, err)
		}
		u.PasswordHash = h
	}
	created, _, err := a.store.CreateUser(ctx, u, nil)
	if err != nil {
		return nil, a.err(ctx, err)
	}
	return &authv1.CreateUserResponse{User: userRecord(created)}, nil
}

func (a Admin) updateByEmail(ctx context.Context, email string, fn func(*storage.User) error) error {
	u, err := a.store.GetUserByEmail(ctx, email)
	if err != nil {
		return fmt.Errorf("user %q: %w", email, err)
	}
	return a.store.UpdateUser(ctx, u.ID, fn)
}

func (a Admin) SetUserDisabled(ctx context.Context, r *authv1.SetUserDisabledRequest) (*authv1.SetUserDisabledResponse, error) {
	err := a.updateByEmail(ctx, r.GetEmail(), func(u *storage.User) error {
		u.Disabled = r.GetDisabled()
		if u.Disabled {
			u.RevokedBefore = a.revokeNow(u.RevokedBefore)
		}
		return nil
	})
	if err != nil {
		return nil, a.err(ctx, err)
	}
	return &authv1.SetUserDisabledResponse{}, nil
}

func (a Admin) RevokeUser(ctx context.Context, r *authv1.RevokeUserRequest) (*authv1.RevokeUserResponse, error) {
	if err := a.updateByEmail(ctx, r.GetEmail(), func(u *storage.User) error { u.RevokedBefore = a.revokeNow(u.RevokedBefore); return nil }); err != nil {
		return nil, a.err(ctx, err)
	}
	return &authv1.RevokeUserResponse{}, nil
}

func (a Admin) RevokeClient(ctx context.Context, r *authv1.RevokeClientRequest) (*authv1.RevokeClientResponse, error) {
	if err := a.store.UpdateClient(ctx, r.GetClientId(), func(c *storage.Client) error { c.RevokedBefore = a.revokeNow(c.RevokedBefore); return nil }); err != nil {
		return nil, a.err(ctx, err)
	}
	return &authv1.RevokeClientResponse{}, nil
}

func (a Admin) SetPassword(ctx context.Context, r *authv1.SetPasswordRequest) (*authv1.SetPasswordResponse, error) {
	if len(r.GetPassword()) < 8 {
		return nil, a.err(ctx, invalid("a password needs at least 8 characters"))
	}
	if err := inputlimit.Check(inputlimit.F("password", r.GetPassword(), inputlimit.Password)); err != nil {
		return nil, a.err(ctx, err)
	}
	h, err := a.hash.Hash(ctx, r.GetPassword())
	if err != nil {
		return nil, a.err(ctx, err)
	}
	// A new password ends every session of the old one: whoever learnt
	// it may hold tokens.
	if err := a.updateByEmail(ctx, r.GetEmail(), func(u *storage.User) error {
		u.PasswordHash, u.RevokedBefore = h, a.revokeNow(u.RevokedBefore)
		return nil
	}); err != nil {
		return nil, a.err(ctx, err)
	}
	return &authv1.SetPasswordResponse{}, nil
}

func (a Admin) SetUserScopes(ctx context.Context, r *authv1.SetUserScopesRequest) (*authv1.SetUserScopesResponse, error) {
	if err := inputlimit.Each("scope", r.GetScopes(), inputlimit.Scope); err != nil {
		return nil, a.err(ctx, err)
	}
	for _, s := range r.GetScopes() {
		if s == "" || strings.ContainsAny(s, " \t\n") {
			return nil, a.err(ctx, invalid("scope %q must be one word", s))
		}
	}
	if err := a.updateByEmail(ctx, r.GetEmail(), func(u *storage.User) error { u.Scopes = r.GetScopes(); return nil }); err != nil {
		return nil, a.err(ctx, err)
	}
	return &authv1.SetUserScopesResponse{}, nil
}

func (a Admin) ListUsers(ctx context.Context, _ *authv1.ListUsersRequest) (*authv1.ListUsersResponse, error) {
	us, err := a.store.ListUsers(ctx)
	if err != nil {
		return nil, a.err(ctx, err)
	}
	out := &authv1.ListUsersResponse{}
	for _, u := range us {
		out.Users = append(out.Users, userRecord(u))
	}
	return out, nil
}

func signingKey(k storage.SigningKey) *authv1.SigningKey {
	return &authv1.SigningKey{Kid: k.KID, Alg: k.Alg, Created: uint32(k.Created / int64(time.Second)), Retired: uint32(k.Retired), PublishUntil: uint32(k.PublishUntil), Active: k.Active()}
}

func (a Admin) ListKeys(ctx context.Context, _ *authv1.ListKeysRequest) (*authv1.ListKeysResponse, error) {
	ks, err := a.store.SigningKeys(ctx)
	if err != nil {
		return nil, a.err(ctx, err)
	}
	out := &authv1.ListKeysResponse{}
	for _, k := range ks {
		out.Keys = append(out.Keys, signingKey(k))
	}
	return out, nil
}

func (a Admin) RotateKeys(ctx context.Context, _ *authv1.RotateKeysRequest) (*authv1.RotateKeysResponse, error) {
	k, err := a.keys.Rotate(ctx)
	if err != nil {
		return nil, a.err(ctx, err)
	}
	return &authv1.RotateKeysResponse{Key: signingKey(k)}, nil
}
