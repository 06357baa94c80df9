// Package tokens issues and reads the provider's JWTs: access, id and
// refresh tokens, all signed by the active key.
package tokens

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/lestrrat-go/jwx/v2/jws"
	"github.com/lestrrat-go/jwx/v2/jwt"

	"fris.dev/services/auth/internal/keys"
)

// Token types, the `type` claim.
const (
	TypeAccess  = "ACCESS_TOKEN"
	TypeID      = "ID_TOKEN"
	TypeRefresh = "REFRESH_TOKEN"
)

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
}

// Set is one token response.
type Set struct {
	Access, ID, Refresh string
	RefreshJTI          string
	RefreshExpires      time.Time
}

// RandomString returns n random bytes, base64url: codes, jtis, nonces.
func RandomString(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(fmt.Sprintf("crypto/rand failed: %v", err)) // the OS has no entropy: nothing is safe to issue
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// Issue signs an access, an id and a refresh token for s.
func (i *Issuer) Issue(s Subject) (Set, error) {
	now := i.now()
	nonce := s.Nonce
	if nonce == "" {
		nonce = RandomString(16)
	}
	base := func(typ string, life time.Duration) jwt.Token {
		t := jwt.New()
		for k, v := range map[string]any{
			jwt.IssuerKey: i.iss, jwt.SubjectKey: strconv.Itoa(int(s.UserID)), jwt.AudienceKey: []string{s.ClientID},
			jwt.IssuedAtKey: now, jwt.NotBeforeKey: now.Add(-i.life.Skew), jwt.ExpirationKey: now.Add(life),
			jwt.JwtIDKey: RandomString(16), "type": typ, "nonce": nonce,
		} {
			_ = t.Set(k, v)
		}
		return t
	}
	access := base(TypeAccess, i.life.Access)
	_ = access.Set("scope", s.Scopes)
	id := base(TypeID, i.life.ID)
	_ = id.Set("email", s.Email)
	_ = id.Set("email_verified", s.EmailVerified)
	_ = id.Set("name", s.Name)
	refresh := base(TypeRefresh, i.life.Refresh)
	var out Set
	out.RefreshJTI = refresh.JwtID()
	out.RefreshExpires = refresh.Expiration()

	sg := i.keys.Signer()
	hdr := jws.NewHeaders()
	if err := hdr.Set(jws.KeyIDKey, sg.KID); err != nil {
		return Set{}, err
	}
	var err error
	sign := func(t jwt.Token) string {
		if err != nil {
			return ""
		}
		var b []byte
		b, err = jwt.Sign(t, jwt.WithKey(sg.Alg, sg.Key, jws.WithProtectedHeaders(hdr)))
		return string(b)
	}
	out.Access, out.ID, out.Refresh = sign(access), sign(id), sign(refresh)
	return out, err
}

// Errors of Read.
var (
	// ErrMalformed: not a JWT of ours (bad syntax, unknown key, bad
	// signature).
	ErrMalformed = errors.New("malformed or unverifiable token")
	// ErrInvalid: ours, but expired, not yet valid, or of another type.
	ErrInvalid = errors.New("token expired, not yet valid or of the wrong type")
)

// Read verifies a token's signature against the published keys and its
// validity (exp, nbf with skew, issuer, type).
func (i *Issuer) Read(ctx context.Context, raw, wantType string) (jwt.Token, error) {
	msg, err := jws.Parse([]byte(raw))
	if err != nil || len(msg.Signatures()) != 1 {
		return nil, ErrMalformed
	}
	kid := msg.Signatures()[0].ProtectedHeaders().KeyID()
	if kid == "" || !i.keys.ReloadFor(ctx, kid) {
		return nil, ErrMalformed
	}
	// The key's own alg decides the algorithm, never the token's header:
	// no `none`, no HMAC keyed with the public key.
	t, err := jwt.Parse([]byte(raw), jwt.WithKeySet(i.keys.Public(), jws.WithRequireKid(true), jws.WithUseDefault(false)), jwt.WithValidate(false))
	if err != nil {
		return nil, ErrMalformed
	}
	if err := jwt.Validate(t, jwt.WithClock(jwt.ClockFunc(i.now)), jwt.WithAcceptableSkew(i.life.Skew), jwt.WithIssuer(i.iss)); err != nil {
		return nil, ErrInvalid
	}
	if typ, _ := t.Get("type"); typ != wantType {
		return nil, ErrInvalid
	}
	return t, nil
}

// Claims extracts what the service needs from a verified token.
func Claims(t jwt.Token) (userID int32, clientID string, scopes []string, nonce string) {
	n, _ := strconv.Atoi(t.Subject())
	if aud := t.Audience(); len(aud) > 0 {
		clientID = aud[0]
	}
	if v, ok := t.Get("scope"); ok {
		switch s := v.(type) {
		case []any:
			for _, x := range s {
				if str, ok := x.(string); ok {
					scopes = append(scopes, str)
				}
			}
		case []string:
			scopes = s
		}
	}
	if v, ok := t.Get("nonce"); ok {
		nonce, _ = v.(string)
	}
	return int32(n), clientID, scopes, nonce
}
