package service

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/lestrrat-go/jwx/v2/jws"
	"google.golang.org/grpc/codes"

	authv1 "fris.dev/proto/auth/v1"
	"fris.dev/services/auth/internal/tokens"
)

// algOf is a token's header alg.
func algOf(t *testing.T, tok string) string {
	t.Helper()
	b, err := base64.RawURLEncoding.DecodeString(strings.Split(tok, ".")[0])
	if err != nil {
		t.Fatal(err)
	}
	var h struct{ Alg string }
	if err := json.Unmarshal(b, &h); err != nil {
		t.Fatal(err)
	}
	return h.Alg
}

// published reports whether kid is in /certs and in the JWKS.
func published(t *testing.T, e *env, kid string) bool {
	t.Helper()
	ctx := context.Background()
	certs, err := e.pub.ListCerts(ctx, &authv1.ListCertsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	jwks, err := e.pub.GetJWKS(ctx, &authv1.GetJWKSRequest{})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, k := range certs.GetKeys() {
		found = found || k.GetKeyId() == kid
	}
	for _, k := range jwks.GetKeys() {
		found = found || k.GetKid() == kid
	}
	return found
}

// TestRefreshKeyOAuthShape: a request with a grant_type (every OAuth 2.0
// library) gets a refresh token signed with the refresh key's MAC (HS256,
// a kid that /certs and the JWKS never show), and its refresh's response carries
// no id token; the access and id tokens stay RS256.
func TestRefreshKeyOAuthShape(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	clientID, secret := e.seed(t)
	res, err := e.pub.Token(ctx, &authv1.TokenRequest{GrantType: "authorization_code", Code: e.login(t, clientID, nil), ClientId: clientID, ClientSecret: secret})
	if err != nil {
		t.Fatal(err)
	}
	if algOf(t, res.GetAccessToken()) != "RS256" || algOf(t, res.GetIdToken()) != "RS256" || algOf(t, res.GetRefreshToken()) != "HS256" {
		t.Fatalf("algs: access %s id %s refresh %s", algOf(t, res.GetAccessToken()), algOf(t, res.GetIdToken()), algOf(t, res.GetRefreshToken()))
	}
	rkid := kidOf(t, res.GetRefreshToken())
	if rkid != e.svc.keys.RefreshSigner().KID || rkid == kidOf(t, res.GetAccessToken()) || published(t, e, rkid) {
		t.Fatalf("refresh kid %s: not the refresh key's, or published", rkid)
	}
	next, err := e.pub.Token(ctx, &authv1.TokenRequest{GrantType: "refresh_token", RefreshToken: res.GetRefreshToken()})
	if err != nil {
		t.Fatal(err)
	}
	if next.IdToken != nil || next.GetAccessToken() == "" || algOf(t, next.GetRefreshToken()) != "HS256" {
		t.Fatalf("refresh response: id token %v, refresh alg %s", next.IdToken != nil, algOf(t, next.GetRefreshToken()))
	}
	// Rotation and reuse detection work as before.
	_, err = e.pub.Token(ctx, &authv1.TokenRequest{GrantType: "refresh_token", RefreshToken: res.GetRefreshToken()})
	wantCode(t, err, codes.PermissionDenied)
	_, err = e.pub.Token(ctx, &authv1.TokenRequest{GrantType: "refresh_token", RefreshToken: next.GetRefreshToken()})
	wantCode(t, err, codes.PermissionDenied)
}

// TestRefreshKeySpecShape: a request without grant_type (the spec's
// clients, the Samply auth client) gets what it verifies: all three tokens
// RS256 with the published key, the refresh's response with an id token.
func TestRefreshKeySpecShape(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	clientID, secret := e.seed(t)
	res, err := e.pub.Token(ctx, &authv1.TokenRequest{Code: e.login(t, clientID, nil), ClientId: clientID, ClientSecret: secret})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		for _, tok := range []string{res.GetAccessToken(), res.GetIdToken(), res.GetRefreshToken()} {
			if algOf(t, tok) != "RS256" || !published(t, e, kidOf(t, tok)) {
				t.Fatalf("round %d: a token is %s with kid %s", i, algOf(t, tok), kidOf(t, tok))
			}
		}
		if res, err = e.pub.Token(ctx, &authv1.TokenRequest{RefreshToken: res.GetRefreshToken()}); err != nil {
			t.Fatal(err)
		}
		if res.IdToken == nil {
			t.Fatal("a spec-shaped refresh without id token")
		}
	}
	// The same chain refreshed by an OAuth 2.0 request moves to the
	// refresh key.
	next, err := e.pub.Token(ctx, &authv1.TokenRequest{GrantType: "refresh_token", RefreshToken: res.GetRefreshToken()})
	if err != nil || algOf(t, next.GetRefreshToken()) != "HS256" {
		t.Fatalf("OAuth refresh of a spec chain: %v", err)
	}
}

// TestRefreshKeyOldTokensStillAccepted: a refresh token minted the old ways
// (RS256 with the signing key, EdDSA with the refresh key itself) is
// accepted until it expires, by either shape, and the refresh key's own
// tokens survive a rotation of the keys.
func TestRefreshKeyOldTokensStillAccepted(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	clientID, _ := e.seed(t)
	uid := e.uid(t, "ada@example.org")
	old := func() string {
		set, err := e.svc.tokens.Plan(tokens.Subject{UserID: atoi(t, uid), ClientID: clientID, Session: tokens.RandomString(16), RSARefresh: true}).Sign()
		if err != nil {
			t.Fatal(err)
		}
		if algOf(t, set.Refresh) != "RS256" {
			t.Fatalf("old-style refresh token is %s", algOf(t, set.Refresh))
		}
		return set.Refresh
	}
	for _, gt := range []string{"", "refresh_token"} {
		if _, err := e.pub.Token(ctx, &authv1.TokenRequest{GrantType: gt, RefreshToken: old()}); err != nil {
			t.Fatalf("grant_type %q: old RS256 refresh token refused: %v", gt, err)
		}
		ed := resignWithRefreshKey(t, e, old(), jwa.EdDSA)
		if _, err := e.pub.Token(ctx, &authv1.TokenRequest{GrantType: gt, RefreshToken: ed}); err != nil {
			t.Fatalf("grant_type %q: old EdDSA refresh token refused: %v", gt, err)
		}
	}

	// A refresh key's token, then a rotation of all keys (rotate-keys):
	// the token still refreshes, and the new tokens carry the new kid.
	fresh, err := e.svc.tokens.Plan(tokens.Subject{UserID: atoi(t, uid), ClientID: clientID, Session: tokens.RandomString(16)}).Sign()
	if err != nil {
		t.Fatal(err)
	}
	before := e.svc.keys.RefreshSigner().KID
	if _, err := e.adm.RotateKeys(ctx, &authv1.RotateKeysRequest{}); err != nil {
		t.Fatal(err)
	}
	after := e.svc.keys.RefreshSigner().KID
	if after == before || kidOf(t, fresh.Refresh) != before {
		t.Fatalf("rotate-keys left the refresh key %s (was %s)", after, before)
	}
	next, err := e.pub.Token(ctx, &authv1.TokenRequest{GrantType: "refresh_token", RefreshToken: fresh.Refresh})
	if err != nil {
		t.Fatalf("a refresh token of the retired refresh key: %v", err)
	}
	if kidOf(t, next.GetRefreshToken()) != after || published(t, e, after) {
		t.Fatalf("after rotation: refresh kid %s, want %s and unpublished", kidOf(t, next.GetRefreshToken()), after)
	}
}

// TestRefreshKeySignsNothingElse: an access token signed with the refresh
// key is not one of the provider's.
func TestRefreshKeySignsNothingElse(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	clientID, secret := e.seed(t)
	res, err := e.pub.Token(ctx, &authv1.TokenRequest{GrantType: "authorization_code", Code: e.login(t, clientID, nil), ClientId: clientID, ClientSecret: secret})
	if err != nil {
		t.Fatal(err)
	}
	// Re-sign the access token's claims with the refresh key, and with its
	// MAC key.
	for _, alg := range []jwa.SignatureAlgorithm{jwa.EdDSA, jwa.HS256} {
		forged := resignWithRefreshKey(t, e, res.GetAccessToken(), alg)
		if _, err := e.pub.GetUserInfo(bearer(forged), &authv1.GetUserInfoRequest{}); err == nil {
			t.Fatalf("an access token signed %s with the refresh key was accepted", alg)
		}
		in, err := e.pub.Introspect(ctx, &authv1.IntrospectRequest{Token: forged, ClientId: clientID, ClientSecret: secret})
		if err != nil || in.GetActive() {
			t.Fatalf("introspection of a refresh-key %s access token: %v %v", alg, in, err)
		}
	}
	// The refresh token itself introspects as one.
	in, err := e.pub.Introspect(ctx, &authv1.IntrospectRequest{Token: res.GetRefreshToken(), ClientId: clientID, ClientSecret: secret})
	if err != nil || !in.GetActive() || in.GetTokenType() != "refresh_token" {
		t.Fatalf("introspection of an HS256 refresh token: %v %v", in, err)
	}
}

// TestLegacyRefresh: -legacy-refresh gives every refresh the old response:
// RS256 refresh token, an id token.
func TestLegacyRefresh(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.LegacyRefresh = true })
	ctx := context.Background()
	clientID, secret := e.seed(t)
	res, err := e.pub.Token(ctx, &authv1.TokenRequest{GrantType: "authorization_code", Code: e.login(t, clientID, nil), ClientId: clientID, ClientSecret: secret})
	if err != nil {
		t.Fatal(err)
	}
	next, err := e.pub.Token(ctx, &authv1.TokenRequest{GrantType: "refresh_token", RefreshToken: res.GetRefreshToken()})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []*authv1.TokenResponse{res, next} {
		if r.IdToken == nil || algOf(t, r.GetRefreshToken()) != "RS256" {
			t.Fatalf("legacy: id token %v, refresh %s", r.IdToken != nil, algOf(t, r.GetRefreshToken()))
		}
	}
}

func atoi(t *testing.T, s string) int32 {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return int32(n)
}

// resignWithRefreshKey signs tok's claims with the active refresh key:
// EdDSA with the key itself (as before the MAC), HS256 with its MAC key.
func resignWithRefreshKey(t *testing.T, e *env, tok string, alg jwa.SignatureAlgorithm) string {
	t.Helper()
	payload, err := base64.RawURLEncoding.DecodeString(strings.Split(tok, ".")[1])
	if err != nil {
		t.Fatal(err)
	}
	rs := e.svc.keys.RefreshSigner()
	kid, key := rs.KID, any(rs.Key)
	if alg == jwa.EdDSA {
		kid, key = rs.EdKID, rs.EdKey
	}
	hdr := jws.NewHeaders()
	_ = hdr.Set(jws.KeyIDKey, kid)
	b, err := jws.Sign(payload, jws.WithKey(alg, key, jws.WithProtectedHeaders(hdr)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
