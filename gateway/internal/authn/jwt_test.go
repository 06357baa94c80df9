package authn

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/lestrrat-go/jwx/v2/jwk"
	"github.com/lestrrat-go/jwx/v2/jws"
	"github.com/lestrrat-go/jwx/v2/jwt"

	"fris.dev/pkg/accesstoken"
	"fris.dev/pkg/identity"
)

const testIssuer = "http://127.0.0.1:8080"

// testKey is an RSA key pair with the JWK forms a test needs.
type testKey struct {
	kid  string
	alg  jwa.SignatureAlgorithm
	priv *rsa.PrivateKey
}

var (
	keysOnce sync.Once
	rsaKeys  []*rsa.PrivateKey // 2048 bits
	weakKey  *rsa.PrivateKey   // 1024 bits
)

func rsaKey(t testing.TB, i int) *rsa.PrivateKey {
	t.Helper()
	keysOnce.Do(func() {
		for range 4 {
			k, err := rsa.GenerateKey(rand.Reader, 2048)
			if err != nil {
				panic(err)
			}
			rsaKeys = append(rsaKeys, k)
		}
		var err error
		if weakKey, err = rsa.GenerateKey(rand.Reader, 1024); err != nil { //nolint:gosec // the test proves weak keys are refused
			panic(err)
		}
	})
	if i < 0 {
		return weakKey
	}
	return rsaKeys[i]
}

func newKey(t testing.TB, kid string, alg jwa.SignatureAlgorithm, i int) testKey {
	return testKey{kid: kid, alg: alg, priv: rsaKey(t, i)}
}

// public is the key as the auth service publishes it.
func (k testKey) public(t testing.TB) jwk.Key {
	t.Helper()
	pk, err := jwk.FromRaw(&k.priv.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	_ = pk.Set(jwk.KeyIDKey, k.kid)
	_ = pk.Set(jwk.KeyUsageKey, "sig")
	if k.alg != "" {
		_ = pk.Set(jwk.AlgorithmKey, k.alg)
	}
	return pk
}

// jwksServer serves a JWK Set that tests can change, and counts fetches.
type jwksServer struct {
	*httptest.Server
	mu      sync.Mutex
	body    []byte
	status  int
	fetches int
}

func newJWKSServer(t testing.TB, keys ...jwk.Key) *jwksServer {
	t.Helper()
	s := &jwksServer{status: http.StatusOK}
	s.setKeys(t, keys...)
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.fetches++
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(s.status)
		_, _ = w.Write(s.body)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *jwksServer) setKeys(t testing.TB, keys ...jwk.Key) {
	t.Helper()
	set := jwk.NewSet()
	for _, k := range keys {
		if err := set.AddKey(k); err != nil {
			t.Fatal(err)
		}
	}
	b, err := json.Marshal(set)
	if err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	s.body = b
	s.mu.Unlock()
}

func (s *jwksServer) setStatus(code int) {
	s.mu.Lock()
	s.status = code
	s.mu.Unlock()
}

func (s *jwksServer) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.fetches
}

func newVerifier(t testing.TB, s *jwksServer, mod ...func(*JWTConfig)) *JWT {
	t.Helper()
	cfg := JWTConfig{JWKSURL: s.URL, Issuer: testIssuer, Skew: 30 * time.Second, MinRefreshInterval: 50 * time.Millisecond}
	for _, m := range mod {
		m(&cfg)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	v, err := NewJWT(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// claims are a valid access token's, relative to now.
func claims(now time.Time) map[string]any {
	return map[string]any{
		"iss":   testIssuer,
		"sub":   "42",
		"aud":   "mdr-ui",
		"exp":   now.Add(time.Hour).Unix(),
		"nbf":   now.Add(-time.Minute).Unix(),
		"iat":   now.Unix(),
		"jti":   "j1",
		"scope": []string{"openid", "mdr:secret"},
		"type":  accesstoken.Type,
		"nonce": "n",
	}
}

func sign(t testing.TB, k testKey, alg jwa.SignatureAlgorithm, c map[string]any) string {
	t.Helper()
	tok := jwt.New()
	for name, v := range c {
		if err := tok.Set(name, v); err != nil {
			t.Fatal(err)
		}
	}
	hdr := jws.NewHeaders()
	if k.kid != "" {
		_ = hdr.Set(jws.KeyIDKey, k.kid)
	}
	b, err := jwt.Sign(tok, jwt.WithKey(alg, k.priv, jws.WithProtectedHeaders(hdr)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// rawJWS builds a compact JWS by hand: header and claims as given,
// signature as given (attacks jwx would refuse to produce).
func rawJWS(header, payload map[string]any, sig []byte) string {
	h, _ := json.Marshal(header)
	p, _ := json.Marshal(payload)
	enc := base64.RawURLEncoding
	return enc.EncodeToString(h) + "." + enc.EncodeToString(p) + "." + enc.EncodeToString(sig)
}

// hmacWith signs header.payload with HS256 and secret: the key-confusion
// attack that uses the RSA public key as HMAC secret.
func hmacWith(t testing.TB, kid string, c map[string]any, secret []byte) string {
	t.Helper()
	tok := jwt.New()
	for name, v := range c {
		_ = tok.Set(name, v)
	}
	hdr := jws.NewHeaders()
	_ = hdr.Set(jws.KeyIDKey, kid)
	b, err := jwt.Sign(tok, jwt.WithKey(jwa.HS256, secret, jws.WithProtectedHeaders(hdr)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func with(c map[string]any, kv ...any) map[string]any {
	out := map[string]any{}
	for k, v := range c {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == nil {
			delete(out, kv[i].(string))
			continue
		}
		out[kv[i].(string)] = kv[i+1]
	}
	return out
}

func TestVerify(t *testing.T) {
	k1 := newKey(t, "k1", jwa.RS256, 0)
	k512 := newKey(t, "k512", jwa.RS512, 1)
	noAlg := newKey(t, "noalg", "", 2)
	impostor := newKey(t, "k1", jwa.RS256, 3) // same kid, other key
	weak := newKey(t, "weak", jwa.RS256, -1)
	enc := newKey(t, "enc", jwa.RS256, 3)
	encPub := enc.public(t)
	_ = encPub.Set(jwk.KeyUsageKey, "enc")
	srv := newJWKSServer(t, k1.public(t), k512.public(t), noAlg.public(t), weak.public(t), encPub)
	v := newVerifier(t, srv)

	now := time.Now()
	good := claims(now)
	pubDER, _ := x509.MarshalPKIXPublicKey(&k1.priv.PublicKey)
	pubPEM := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER})
	hdr := func(alg string, kid string) map[string]any {
		h := map[string]any{"alg": alg, "typ": "JWT"}
		if kid != "" {
			h["kid"] = kid
		}
		return h
	}
	valid := sign(t, k1, jwa.RS256, good)
	parts := strings.Split(valid, ".")
	tamperedClaims, _ := json.Marshal(with(good, "sub", "1"))
	tampered := parts[0] + "." + base64.RawURLEncoding.EncodeToString(tamperedClaims) + "." + parts[2]
	jsonSer, err := jws.Sign([]byte(parts[1]), jws.WithJSON(), jws.WithKey(jwa.RS256, k1.priv))
	if err != nil {
		t.Fatal(err)
	}

	want := identity.Identity{Subject: "42", Client: "mdr-ui", Scopes: []string{"openid", "mdr:secret"}}
	for _, tc := range []struct {
		name  string
		token string
		want  *identity.Identity // nil: must be refused
		err   error
	}{
		{name: "valid RS256", token: valid, want: &want},
		{name: "valid RS512", token: sign(t, k512, jwa.RS512, good), want: &want},
		{name: "key without alg, RS256", token: sign(t, noAlg, jwa.RS256, good), want: &want},
		{name: "key without alg, RS512", token: sign(t, noAlg, jwa.RS512, good), want: &want},
		{name: "scope as string", token: sign(t, k1, jwa.RS256, with(good, "scope", "openid  mdr:secret")), want: &want},
		{name: "azp wins over aud", token: sign(t, k1, jwa.RS256, with(good, "azp", "other", "aud", []string{"mdr-ui", "x"})),
			want: &identity.Identity{Subject: "42", Client: "other", Scopes: want.Scopes}},
		// The auth service's tokens issued to no client (a signed code
		// without client_id) name the issuer as their audience.
		{name: "aud is the issuer: no client", token: sign(t, k1, jwa.RS256, with(good, "aud", []string{testIssuer})),
			want: &identity.Identity{Subject: "42", Scopes: want.Scopes}},
		{name: "no scope", token: sign(t, k1, jwa.RS256, with(good, "scope", nil)), want: &identity.Identity{Subject: "42", Client: "mdr-ui"}},
		{name: "expired within skew", token: sign(t, k1, jwa.RS256, with(good, "exp", now.Add(-10*time.Second).Unix())), want: &want},
		{name: "nbf within skew", token: sign(t, k1, jwa.RS256, with(good, "nbf", now.Add(10*time.Second).Unix())), want: &want},

		{name: "alg none", token: rawJWS(hdr("none", "k1"), good, nil), err: ErrAlgorithm},
		{name: "alg None", token: rawJWS(hdr("None", "k1"), good, nil)},
		{name: "alg none with signature", token: rawJWS(hdr("none", "k1"), good, []byte("sig"))},
		{name: "unsigned two parts", token: strings.Join(parts[:2], ".")},
		{name: "HS256 with public key PEM", token: hmacWith(t, "k1", good, pubPEM), err: ErrAlgorithm},
		{name: "HS256 with public key DER", token: hmacWith(t, "k1", good, pubDER), err: ErrAlgorithm},
		{name: "HS256 with modulus", token: hmacWith(t, "k1", good, k1.priv.N.Bytes()), err: ErrAlgorithm},
		{name: "HS512 with public key PEM", token: func() string {
			tok := jwt.New()
			for n, x := range good {
				_ = tok.Set(n, x)
			}
			h := jws.NewHeaders()
			_ = h.Set(jws.KeyIDKey, "k1")
			b, _ := jwt.Sign(tok, jwt.WithKey(jwa.HS512, pubPEM, jws.WithProtectedHeaders(h)))
			return string(b)
		}(), err: ErrAlgorithm},
		{name: "RS384", token: sign(t, k1, jwa.RS384, good), err: ErrAlgorithm},
		{name: "PS256", token: sign(t, k1, jwa.PS256, good), err: ErrAlgorithm},
		{name: "RS512 with an RS256 key", token: sign(t, k1, jwa.RS512, good), err: ErrAlgorithm},
		{name: "RS256 with an RS512 key", token: sign(t, k512, jwa.RS256, good), err: ErrAlgorithm},
		{name: "header alg swapped", token: func() string {
			// Signed RS512, header claims RS256.
			s := sign(t, k512, jwa.RS512, good)
			p := strings.Split(s, ".")
			h, _ := json.Marshal(hdr("RS256", "k1"))
			return base64.RawURLEncoding.EncodeToString(h) + "." + p[1] + "." + p[2]
		}()},
		{name: "other key, same kid", token: sign(t, impostor, jwa.RS256, good), err: ErrInvalidClaims},
		{name: "tampered claims", token: tampered, err: ErrInvalidClaims},
		{name: "unknown kid", token: sign(t, testKey{kid: "nope", priv: k1.priv}, jwa.RS256, good), err: ErrUnknownKey},
		{name: "no kid", token: sign(t, testKey{priv: k1.priv}, jwa.RS256, good), err: ErrUnknownKey},
		{name: "weak key", token: sign(t, weak, jwa.RS256, good), err: ErrUnknownKey},
		{name: "encryption key", token: sign(t, enc, jwa.RS256, good), err: ErrUnknownKey},
		{name: "expired", token: sign(t, k1, jwa.RS256, with(good, "exp", now.Add(-31*time.Second).Unix())), err: ErrInvalidClaims},
		{name: "not yet valid", token: sign(t, k1, jwa.RS256, with(good, "nbf", now.Add(time.Minute).Unix())), err: ErrInvalidClaims},
		{name: "issued in the future", token: sign(t, k1, jwa.RS256, with(good, "iat", now.Add(time.Minute).Unix())), err: ErrInvalidClaims},
		{name: "no exp", token: sign(t, k1, jwa.RS256, with(good, "exp", nil)), err: ErrInvalidClaims},
		// jwx read exp 0 as no expiry to check; accesstoken as no exp.
		{name: "exp zero", token: sign(t, k1, jwa.RS256, with(good, "exp", 0)), err: ErrInvalidClaims},
		{name: "scope not strings", token: sign(t, k1, jwa.RS256, with(good, "scope", []any{"openid", 7})), err: ErrInvalidClaims},
		{name: "no sub", token: sign(t, k1, jwa.RS256, with(good, "sub", nil)), err: ErrInvalidClaims},
		{name: "empty sub", token: sign(t, k1, jwa.RS256, with(good, "sub", "")), err: ErrInvalidClaims},
		{name: "id token", token: sign(t, k1, jwa.RS256, with(good, "type", "ID_TOKEN")), err: ErrTokenType},
		{name: "refresh token", token: sign(t, k1, jwa.RS256, with(good, "type", "REFRESH_TOKEN")), err: ErrTokenType},
		{name: "no type", token: sign(t, k1, jwa.RS256, with(good, "type", nil)), err: ErrTokenType},
		{name: "type not a string", token: sign(t, k1, jwa.RS256, with(good, "type", []string{accesstoken.Type})), err: ErrTokenType},
		{name: "other issuer", token: sign(t, k1, jwa.RS256, with(good, "iss", "http://evil.example")), err: ErrInvalidClaims},
		{name: "no issuer", token: sign(t, k1, jwa.RS256, with(good, "iss", nil)), err: ErrInvalidClaims},
		{name: "JSON serialization", token: string(jsonSer), err: ErrMalformed},
		{name: "garbage", token: "not-a-jwt", err: ErrMalformed},
		{name: "too long", token: valid + strings.Repeat("A", accesstoken.MaxLen), err: ErrMalformed},
		{name: "JWE shape", token: "a.b.c.d.e", err: ErrMalformed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := v.Verify(context.Background(), tc.token)
			if tc.want == nil {
				if err == nil {
					t.Fatalf("accepted: %+v", got)
				}
				if tc.err != nil && !errors.Is(err, tc.err) {
					t.Fatalf("err = %v, want %v", err, tc.err)
				}
				if !got.Anonymous() {
					t.Fatalf("refused token still yields identity %+v", got)
				}
				return
			}
			if err != nil {
				t.Fatalf("refused: %v", err)
			}
			if !reflect.DeepEqual(got, *tc.want) {
				t.Fatalf("got %+v, want %+v", got, *tc.want)
			}
		})
	}
}

func TestVerifyIssuerUnchecked(t *testing.T) {
	k1 := newKey(t, "k1", jwa.RS256, 0)
	v := newVerifier(t, newJWKSServer(t, k1.public(t)), func(c *JWTConfig) { c.Issuer = "" })
	for _, iss := range []any{"http://elsewhere", nil} {
		if _, err := v.Verify(context.Background(), sign(t, k1, jwa.RS256, with(claims(time.Now()), "iss", iss))); err != nil {
			t.Fatalf("iss %v: %v", iss, err)
		}
	}
}

func TestVerifyClockAndSkew(t *testing.T) {
	k1 := newKey(t, "k1", jwa.RS256, 0)
	srv := newJWKSServer(t, k1.public(t))
	issued := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	tok := sign(t, k1, jwa.RS256, with(claims(issued), "nbf", issued.Unix(), "exp", issued.Add(time.Hour).Unix()))
	for _, tc := range []struct {
		now  time.Time
		skew time.Duration
		ok   bool
	}{
		{issued, 0, true},
		{issued.Add(-5 * time.Second), 0, false},
		{issued.Add(-5 * time.Second), 10 * time.Second, true},
		{issued.Add(time.Hour + 5*time.Second), 0, false},
		{issued.Add(time.Hour + 5*time.Second), 10 * time.Second, true},
		{issued.Add(time.Hour + 11*time.Second), 10 * time.Second, false},
	} {
		v := newVerifier(t, srv, func(c *JWTConfig) { c.Now = func() time.Time { return tc.now }; c.Skew = tc.skew })
		_, err := v.Verify(context.Background(), tok)
		if (err == nil) != tc.ok {
			t.Errorf("now %s skew %s: err %v, want ok=%v", tc.now.Sub(issued), tc.skew, err, tc.ok)
		}
	}
}

func FuzzVerify(f *testing.F) {
	// The JWKS holds k1's public key; the seeds are signed by other keys or
	// are attacks, so no mutation of them can be valid without forging RSA.
	k1 := newKey(f, "k1", jwa.RS256, 0)
	forger := testKey{kid: "k1", priv: rsaKey(f, 1)}
	srv := newJWKSServer(f, k1.public(f))
	// Unknown kids refetch the set (at most once a millisecond) and wait
	// for it; the JWKS is local, so that stays fast.
	v := newVerifier(f, srv, func(c *JWTConfig) { c.MinRefreshInterval = time.Millisecond })
	good := claims(time.Now())
	pubDER, _ := x509.MarshalPKIXPublicKey(&k1.priv.PublicKey)
	for _, s := range []string{
		"",
		".",
		"..",
		"a.b.c",
		"not-a-jwt",
		"eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4Iiwic2NvcGUiOlsibWRyOnNlY3JldCJdfQ.",
		rawJWS(map[string]any{"alg": "none", "kid": "k1"}, good, nil),
		rawJWS(map[string]any{"alg": "RS256", "kid": "k1"}, good, []byte("x")),
		rawJWS(map[string]any{"alg": "RS256", "kid": "k1", "b64": false, "crit": []string{"b64"}}, good, []byte("x")),
		hmacWith(f, "k1", good, pubDER),
		sign(f, forger, jwa.RS256, good),
		sign(f, forger, jwa.RS512, good),
		`{"payload":"e30","signatures":[{"protected":"eyJhbGciOiJSUzI1NiJ9","signature":"AA"}]}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, token string) {
		id, err := v.Verify(context.Background(), token)
		if err == nil || !id.Anonymous() {
			t.Fatalf("accepted %q as %+v", token, id)
		}
	})
}
