// Package tokens issues and reads the provider's JWTs: access and id
// tokens signed by the active signing key of the client's algorithm, refresh tokens with an HMAC
// under the active refresh key's (or, for the clients that verify them, by the signing key).
package tokens

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/lestrrat-go/jwx/v2/jwa"

	"fris.dev/pkg/accesstoken"
	"fris.dev/services/auth/internal/keys"
)

// Token types, the `type` claim, besides the access token's
// (accesstoken.Type).
const (
	TypeID      = "ID_TOKEN"
	TypeRefresh = "REFRESH_TOKEN"
)

// types are all the provider issues.
var types = []string{accesstoken.Type, TypeID, TypeRefresh}

// Lifetimes of the three tokens, and how far in the past nbf is set so a
// resource server whose clock is slightly behind still accepts a new token.
type Lifetimes struct {
	Access, ID, Refresh time.Duration
	Skew                time.Duration
}

// Issuer signs and verifies tokens.
type Issuer struct {
	keys *keys.Manager
	iss  string
	life Lifetimes
	now  func() time.Time
	// null is the benchmark's stub signer (benchnull.go); nil always
	// but in the benchmark's build of auth.
	null *benchNull
}

// New returns an issuer for the issuer URL iss.
func New(k *keys.Manager, iss string, l Lifetimes) *Issuer {
	return &Issuer{keys: k, iss: iss, life: l, now: time.Now}
}

// Subject is who a token set is for.
type Subject struct {
	UserID        int32
	ClientID      string
	Email         string
	Name          string
	EmailVerified bool
	Scopes        []string
	Nonce         string
	// Session is the refresh token's chain: one per sign-in, kept by every
	// token rotated from it.
	Session string
	// RevokedBefore is the latest revoked-before of the user and the
	// client (unix seconds): tokens issued before it count as revoked, so
	// a token issued in the very second of a revocation gets it as its iat
	// (at most a second ahead, well within the skew every reader allows).
	RevokedBefore int64
	// RSARefresh signs the refresh token with the RSA signing key instead
	// of the refresh key's HMAC: for a client that verifies it with the
	// provider's public key (the Samply auth client does).
	RSARefresh bool
	// NoIDToken leaves the id token out (a refresh's response may: OpenID
	// Connect Core 12.2).
	NoIDToken bool
	// LinkAccess names the refresh token in the access token (Claims.
	// RefreshJTI), so the access token can be taken as spent with it.
	LinkAccess bool
	// Alg is the client's algorithm for the access and id tokens (ES256,
	// EdDSA); empty: the RSA key's.
	Alg jwa.SignatureAlgorithm
}

// Set is one token response.
type Set struct {
	Access, ID, Refresh string
	RefreshJTI          string
	RefreshExpires      time.Time
	// ExpiresIn is the access token's lifetime (the response's expires_in).
	ExpiresIn time.Duration
	// Subject is the tokens' sub (for the audit log).
	Subject string
	// Chain is the refresh chain, IssuedAt the tokens' iat (unix
	// seconds): a new sign-in's record (storage.Session).
	Chain    string
	IssuedAt int64
}

// RandomString returns n random bytes, base64url: codes, jtis, nonces.
func RandomString(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(fmt.Sprintf("crypto/rand failed: %v", err)) // the OS has no entropy: nothing is safe to issue
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// TimeOrderedID is a jti that starts with its issue time: the time in
// milliseconds as 12 hex digits, then 16 random bytes (RandomString). A
// refresh token's jti becomes a store key when the token is spent, and
// tokens issued close together are spent close together (a client refreshes
// when its access token expires), so their records share the store's pages:
// a commit of several spends writes one or two leaves of bbolt's tree
// instead of one per spend (docs/decisions.md, "The refresh token's jti
// starts with its issue time").
func TimeOrderedID(now time.Time) string {
	return fmt.Sprintf("%012x", uint64(now.UnixMilli())&(1<<48-1)) + RandomString(16)
}

// Claims are what every token of the provider carries (the access token's
// claims); the id token adds email, email_verified and name.
type Claims struct {
	accesstoken.Claims
	Email         string `json:"email,omitempty"`
	EmailVerified *bool  `json:"email_verified,omitempty"`
	Name          string `json:"name,omitempty"`
	// RefreshJTI is, in an access token, the jti of the refresh token
	// issued with it (Subject.LinkAccess): once that is spent, the access
	// token is superseded.
	RefreshJTI string `json:"rjti,omitempty"`
}

// ClientSubjectPrefix starts the subject of a client_credentials token:
// "client:" and the client ID. Client IDs may be all digits, and a bare one
// would read as a user's subject everywhere tokens are consumed.
const ClientSubjectPrefix = "client:"

// IsClient reports whether the token is a client's own (client_credentials),
// with no user behind it.
func (c *Claims) IsClient() bool {
	return c.Client != "" && c.Subject == ClientSubjectPrefix+c.Client
}

// UserID is the subject as the store numbers users (0 when it is not one).
func (c *Claims) UserID() int32 {
	n, err := strconv.ParseInt(c.Subject, 10, 32)
	if err != nil {
		return 0
	}
	return int32(n)
}

// Plan is a token set whose claims are fixed but not yet signed: the
// refresh token's jti and expiry are known, so its record can be written
// while the three signatures are made.
type Plan struct {
	i                   *Issuer
	access, id, refresh Claims
	rsaRefresh, noID    bool
	alg                 jwa.SignatureAlgorithm
	null                bool
	RefreshJTI          string
	RefreshExpires      time.Time
}

// Plan fixes the claims of an access, an id and a refresh token for s.
func (i *Issuer) Plan(s Subject) Plan {
	now := i.now()
	// The access and refresh tokens carry the request's nonce or a random
	// one (/tokeninfo reports it); the id token carries exactly the one the
	// authorization request sent, or none: an OpenID client that sent none
	// rejects an id token with one (OpenID Connect Core 3.1.3.7).
	nonce := s.Nonce
	if nonce == "" {
		nonce = RandomString(16)
	}
	// Every token has an audience (DESIGN, RFC 9068 2.2): its client, or
	// without one the issuer, whose resource servers are the only ones the
	// token opens.
	aud := accesstoken.Audience{i.iss}
	if s.ClientID != "" {
		aud = accesstoken.Audience{s.ClientID}
	}
	base := func(typ string, life time.Duration) Claims {
		return Claims{Claims: accesstoken.Claims{
			Issuer: i.iss, Subject: strconv.Itoa(int(s.UserID)), Audience: aud,
			IssuedAt: issuedAt(now, s.RevokedBefore), NotBefore: accesstoken.NumericDate(now.Add(-i.life.Skew).Unix()),
			ExpiresAt: accesstoken.NumericDate(now.Add(life).Unix()), ID: RandomString(16), Type: accesstoken.TokenType(typ), Nonce: nonce,
		}}
	}
	p := Plan{i: i, access: base(accesstoken.Type, i.life.Access), id: base(TypeID, i.life.ID), refresh: base(TypeRefresh, i.life.Refresh)}
	p.refresh.ID = TimeOrderedID(now)
	p.access.Scope = s.Scopes
	p.access.Client = s.ClientID
	p.id.Nonce = s.Nonce
	p.id.Email, p.id.EmailVerified, p.id.Name = s.Email, &s.EmailVerified, s.Name
	p.refresh.Session = s.Session
	p.access.Session = s.Session
	p.RefreshJTI, p.RefreshExpires = p.refresh.ID, p.refresh.Expiration()
	if s.LinkAccess {
		p.access.RefreshJTI = p.refresh.ID
	}
	p.rsaRefresh, p.noID, p.alg = s.RSARefresh, s.NoIDToken, s.Alg
	p.null = i.nullFor(s.ClientID)
	return p
}

// Sign signs the planned tokens: the access and id tokens with the active
// key of the client's algorithm, the refresh token with the active refresh
// key's HMAC unless the plan asks for the RSA signing key.
func (p Plan) Sign() (Set, error) {
	out := Set{RefreshJTI: p.RefreshJTI, RefreshExpires: p.RefreshExpires, ExpiresIn: p.i.life.Access, Subject: p.access.Subject,
		Chain: p.refresh.Session, IssuedAt: int64(p.refresh.IssuedAt)}
	sg := p.i.keys.SignerFor(p.alg)
	if p.null {
		sg = p.i.nullSigner()
	}
	// The parsed private key, not a jwk.Key: jwx would rebuild (and Go
	// re-validate) the private key on every signature.
	key, err := signer(sg.KID, sg.Alg, sg.Key)
	if err != nil {
		return Set{}, err
	}
	refreshKey := key
	if p.rsaRefresh && sg != p.i.keys.Signer() {
		rs := p.i.keys.Signer()
		if refreshKey, err = signer(rs.KID, rs.Alg, rs.Key); err != nil {
			return Set{}, err
		}
	}
	if !p.rsaRefresh {
		rs := p.i.keys.RefreshSigner()
		if refreshKey, err = signer(rs.KID, keys.RefreshAlg, rs.Key); err != nil {
			return Set{}, err
		}
	}
	if out.Access, err = sign(&p.access, key); err != nil {
		return Set{}, err
	}
	if !p.noID {
		if out.ID, err = sign(&p.id, key); err != nil {
			return Set{}, err
		}
	}
	if out.Refresh, err = sign(&p.refresh, refreshKey); err != nil {
		return Set{}, err
	}
	return out, nil
}

// signer is a key with its protected header (kid, typ JWT).
func signer(kid string, alg jwa.SignatureAlgorithm, key any) (accesstoken.Signer, error) {
	return accesstoken.NewSigner(alg, kid, key)
}

func sign(c *Claims, key accesstoken.Signer) (string, error) {
	payload, err := json.Marshal(c)
	if err != nil {
		return "", err
	}
	return key.Sign(payload)
}

// issuedAt is now, or revokedBefore when that is later: see
// Subject.RevokedBefore.
func issuedAt(now time.Time, revokedBefore int64) accesstoken.NumericDate {
	return accesstoken.NumericDate(max(now.Unix(), revokedBefore))
}

// Lifetimes returns the lifetimes tokens are issued with.
func (i *Issuer) Lifetimes() Lifetimes { return i.life }

// Issue signs an access, an id and a refresh token for s.
func (i *Issuer) Issue(s Subject) (Set, error) { return i.Plan(s).Sign() }

// IssueClient signs an access token for a client itself
// (client_credentials): its subject is ClientSubjectPrefix and the client
// ID; there is no user, so no id token, and no refresh token (RFC 6749
// 4.4.3: the client can always ask again).
func (i *Issuer) IssueClient(clientID string, scopes []string, revokedBefore int64, alg jwa.SignatureAlgorithm) (Set, error) {
	now := i.now()
	c := Claims{Claims: accesstoken.Claims{
		Issuer: i.iss, Subject: ClientSubjectPrefix + clientID, Audience: accesstoken.Audience{clientID},
		IssuedAt: issuedAt(now, revokedBefore), NotBefore: accesstoken.NumericDate(now.Add(-i.life.Skew).Unix()),
		ExpiresAt: accesstoken.NumericDate(now.Add(i.life.Access).Unix()), ID: RandomString(16), Type: accesstoken.Type,
		Nonce: RandomString(16), Scope: scopes, Client: clientID,
	}}
	sg := i.keys.SignerFor(alg)
	key, err := signer(sg.KID, sg.Alg, sg.Key)
	if err != nil {
		return Set{}, err
	}
	b, err := sign(&c, key)
	if err != nil {
		return Set{}, err
	}
	return Set{Access: b, ExpiresIn: i.life.Access, Subject: c.Subject}, nil
}

// Errors of Read.
var (
	// ErrMalformed: not a JWT of ours (bad syntax, unknown key, bad
	// signature).
	ErrMalformed = errors.New("malformed or unverifiable token")
	// ErrInvalid: ours, but expired, not yet valid, or of another type.
	ErrInvalid = errors.New("token expired, not yet valid or of the wrong type")
)

// Read verifies a token's signature against the published keys and the
// refresh keys, and its claims by accesstoken's rules (exp, nbf and iat
// with skew, issuer, subject, type; any of the provider's types when
// wantType is "").
func (i *Issuer) Read(ctx context.Context, raw, wantType string) (*Claims, error) {
	// The key's own alg decides the algorithm, never the token's header
	// (accesstoken.Verify refuses a header naming another): no `none`, no
	// HMAC keyed with a public key, no ES256 header on an RSA key. HS256
	// verifies only under the kid of a refresh key's MAC, whose key only
	// this service holds, and then only a refresh token (RefreshOnly).
	refreshOnly := false
	byKID := func(ctx context.Context, _ jwa.SignatureAlgorithm, kid string) (accesstoken.Key, error) {
		k, ok := i.keys.Verifier(ctx, kid)
		if !ok {
			return accesstoken.Key{}, ErrMalformed
		}
		refreshOnly = k.RefreshOnly
		return accesstoken.Key{Alg: k.Alg, Key: k.Key}, nil
	}
	payload, err := accesstoken.Verify(ctx, raw, byKID)
	if err != nil {
		return nil, ErrMalformed
	}
	var c Claims
	if err := json.Unmarshal(payload, &c); err != nil {
		return nil, ErrMalformed
	}
	want := types
	if wantType != "" {
		want = []string{wantType}
	}
	// A refresh key signs refresh tokens and nothing else: anything else
	// it verifies is not the provider's.
	if refreshOnly && c.Type != TypeRefresh {
		return nil, ErrMalformed
	}
	if err := c.Check(i.now(), accesstoken.Rules{Issuer: i.iss, Skew: i.life.Skew, Types: want}); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	return &c, nil
}
