package e2e

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/lestrrat-go/jwx/v2/jwk"
	"github.com/lestrrat-go/jwx/v2/jws"
	"github.com/lestrrat-go/jwx/v2/jwt"
)

const tokIssuer = "https://issuer.test"

// tokJWKS stands in for the auth service's key publication: the real
// gateway binary fetches it, the test signs tokens with its keys.
type tokJWKS struct {
	*httptest.Server
	mu   sync.Mutex
	keys []jwk.Key
}

func newTokJWKS(t *testing.T) *tokJWKS {
	t.Helper()
	j := &tokJWKS{}
	j.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		j.mu.Lock()
		set := jwk.NewSet()
		for _, k := range j.keys {
			_ = set.AddKey(k)
		}
		j.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(set)
	}))
	t.Cleanup(j.Close)
	return j
}

// publish adds a new RSA signing key and returns its private half.
func (j *tokJWKS) publish(t *testing.T, kid string) jwk.Key {
	t.Helper()
	raw, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	priv, _ := jwk.FromRaw(raw)
	pub, _ := jwk.FromRaw(&raw.PublicKey)
	for _, k := range []jwk.Key{priv, pub} {
		_ = k.Set(jwk.KeyIDKey, kid)
		_ = k.Set(jwk.AlgorithmKey, jwa.RS256)
		_ = k.Set(jwk.KeyUsageKey, "sig")
	}
	j.mu.Lock()
	j.keys = append(j.keys, pub)
	j.mu.Unlock()
	return priv
}

func tokSign(t *testing.T, key jwk.Key, mod func(jwt.Token)) string {
	t.Helper()
	now := time.Now()
	tok := jwt.New()
	for k, v := range map[string]any{
		"iss": tokIssuer, "sub": "42", "aud": "mdr-ui", "exp": now.Add(time.Hour).Unix(), "nbf": now.Add(-time.Minute).Unix(),
		"iat": now.Unix(), "jti": "j", "scope": []string{"openid", "mdr:secret"}, "type": "ACCESS_TOKEN", "nonce": "n",
	} {
		_ = tok.Set(k, v)
	}
	if mod != nil {
		mod(tok)
	}
	b, err := jwt.Sign(tok, jwt.WithKey(jwa.RS256, key))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestBearerTokensOpenPrivateNamespaces runs the real gateway against a
// JWKS: verified scopes widen group B, every flawed token stays anonymous.
func TestBearerTokensOpenPrivateNamespaces(t *testing.T) {
	t.Parallel()
	keys := newTokJWKS(t)
	k1 := keys.publish(t, "k1")
	// The auth service runs, but group A is switched off in this gateway
	// (-auth-addr ""), so the test's own JWKS is the only key source.
	s := NewStack(t, Options{GatewayArgs: []string{"-auth-addr", "", "-jwks-url", keys.URL + "/jwks", "-issuer", tokIssuer, "-jwks-min-refresh", "100ms"}})
	s.MDRCLI(t, 0, "import", filepath.Join("testdata", "extra.json"))
	secret := mdr + "/dataelements/urn:secret:dataelement:1:1"

	visible := func(t *testing.T, token string) bool {
		t.Helper()
		res, b := s.Do(t, http.MethodGet, secret, nil, "Authorization", "Bearer "+token)
		if res.Header.Get("X-Cache") != "" {
			t.Fatalf("a request with a token was served from the cache")
		}
		switch res.StatusCode {
		case 200:
			return true
		case 404:
			return false
		}
		t.Fatalf("GET %s = %d: %s", secret, res.StatusCode, b)
		return false
	}

	hs256 := func() string {
		// The classic confusion: HS256 keyed with the public key's bytes.
		var pub rsa.PublicKey
		pk, _ := k1.PublicKey()
		_ = pk.Raw(&pub)
		hdr := jws.NewHeaders()
		_ = hdr.Set(jws.KeyIDKey, "k1")
		tok := jwt.New()
		_ = tok.Set("sub", "42")
		_ = tok.Set("iss", tokIssuer)
		_ = tok.Set("exp", time.Now().Add(time.Hour).Unix())
		_ = tok.Set("type", "ACCESS_TOKEN")
		_ = tok.Set("scope", []string{"mdr:secret"})
		b, _ := jwt.Sign(tok, jwt.WithKey(jwa.HS256, pub.N.Bytes(), jws.WithProtectedHeaders(hdr)))
		return string(b)
	}
	none := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","kid":"k1"}`)) + "." +
		base64.RawURLEncoding.EncodeToString([]byte(`{"sub":"42","iss":"`+tokIssuer+`","type":"ACCESS_TOKEN","scope":["mdr:secret"],"exp":4102444800}`)) + "."

	for _, tc := range []struct {
		name  string
		token string
		want  bool
	}{
		{"scope mdr:secret", tokSign(t, k1, nil), true},
		{"scope mdr:*", tokSign(t, k1, func(tok jwt.Token) { _ = tok.Set("scope", []string{"mdr:*"}) }), true},
		{"scope as string", tokSign(t, k1, func(tok jwt.Token) { _ = tok.Set("scope", "openid mdr:secret") }), true},
		{"other scope", tokSign(t, k1, func(tok jwt.Token) { _ = tok.Set("scope", []string{"mdr:other"}) }), false},
		{"expired", tokSign(t, k1, func(tok jwt.Token) { _ = tok.Set("exp", time.Now().Add(-time.Hour).Unix()) }), false},
		{"not yet valid", tokSign(t, k1, func(tok jwt.Token) { _ = tok.Set("nbf", time.Now().Add(time.Hour).Unix()) }), false},
		{"other issuer", tokSign(t, k1, func(tok jwt.Token) { _ = tok.Set("iss", "https://evil.test") }), false},
		{"id token", tokSign(t, k1, func(tok jwt.Token) { _ = tok.Set("type", "ID_TOKEN") }), false},
		{"refresh token", tokSign(t, k1, func(tok jwt.Token) { _ = tok.Set("type", "REFRESH_TOKEN") }), false},
		{"alg none", none, false},
		{"HS256 with the public key", hs256(), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := visible(t, tc.token); got != tc.want {
				t.Fatalf("private element visible = %v, want %v", got, tc.want)
			}
		})
	}

	t.Run("KeyRotation", func(t *testing.T) {
		// A key published after the gateway loaded the set: its first token
		// makes the gateway refetch, and the old key keeps working.
		k2 := keys.publish(t, "k2")
		if !visible(t, tokSign(t, k2, nil)) {
			t.Fatal("token of the new key refused")
		}
		if !visible(t, tokSign(t, k1, nil)) {
			t.Fatal("token of the retired key refused")
		}
	})

	t.Run("GroupADisabled", func(t *testing.T) {
		for _, p := range []string{"/oauth2/clients", "/oauth2/authorize?client_id=x", "/.well-known/openid-configuration"} {
			res, b := s.Get(t, p, http.StatusServiceUnavailable)
			wantHeader(t, res, "Content-Type", "application/json; charset=utf-8")
			wantContains(t, string(b), "temporarily_unavailable")
		}
	})
}
