package e2e

import (
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/lestrrat-go/jwx/v2/jwk"
	"github.com/lestrrat-go/jwx/v2/jws"
	"golang.org/x/oauth2"
)

// TestTokenAlgorithms: clients an operator set to ES256 and EdDSA get
// access and id tokens signed with the published key of that algorithm:
// each signature verifies with the JWKS key of its kid (jwx), go-oidc
// verifies the id token against the discovered keys, the gateway accepts
// the access token on a private registry path, a refresh keeps the
// algorithm, and /certs stays RSA-only for the Samply clients. The RS256
// demo client is unchanged; discovery lists the three algorithms.
func TestTokenAlgorithms(t *testing.T) {
	t.Parallel()
	s, ctx, p := oidcSetup(t, Options{})
	s.MDRCLI(t, 0, "import", "testdata/extra.json")
	var d struct {
		Algs []string `json:"id_token_signing_alg_values_supported"`
	}
	if err := p.Claims(&d); err != nil || strings.Join(d.Algs, " ") != "RS256 ES256 EdDSA" {
		t.Fatalf("id_token_signing_alg_values_supported = %v %v", d.Algs, err)
	}
	_, b := s.Get(t, oauth+"/certs", 200)
	for _, c := range JSON(t, b).([]any) {
		if c.(map[string]any)["keyType"] != "RSA" {
			t.Fatalf("/certs lists a key that is not RSA: %v", c)
		}
	}
	_, b = s.Get(t, oauth+"/jwks", 200)
	// Each key carries its own type's members and no empty others.
	for _, k := range field(t, JSON(t, b), "keys").([]any) {
		m := k.(map[string]any)
		want := map[string][]string{"RSA": {"n", "e"}, "EC": {"crv", "x", "y"}, "OKP": {"crv", "x"}}[m["kty"].(string)]
		if len(m) != 4+len(want) {
			t.Errorf("JWKS entry %v: want kty, use, kid, alg and %v", m, want)
		}
		for _, f := range want {
			if v, _ := m[f].(string); v == "" {
				t.Errorf("JWKS entry %v lacks %s", m, f)
			}
		}
	}
	set, err := jwk.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	// verifies checks tok's header names alg and a published key of that
	// alg, and that the signature verifies with that key.
	verifies := func(t *testing.T, tok string, alg jwa.SignatureAlgorithm) {
		t.Helper()
		msg, err := jws.Parse([]byte(tok))
		if err != nil {
			t.Fatal(err)
		}
		h := msg.Signatures()[0].ProtectedHeaders()
		key, ok := set.LookupKeyID(h.KeyID())
		if h.Algorithm() != alg || !ok || key.Algorithm().String() != alg.String() {
			t.Fatalf("token header alg %s kid %s; the JWKS key: %v %v", h.Algorithm(), h.KeyID(), ok, key)
		}
		if _, err := jws.Verify([]byte(tok), jws.WithKey(alg, key)); err != nil {
			t.Fatalf("%s signature does not verify with the JWKS key %s: %v", alg, h.KeyID(), err)
		}
	}

	for _, tc := range []struct {
		alg        jwa.SignatureAlgorithm
		client     string
		kty, curve string
	}{
		{jwa.ES256, "e2e-es256", "EC", "P-256"},
		{jwa.EdDSA, "e2e-eddsa", "OKP", "Ed25519"},
		{jwa.RS256, demoClient, "RSA", ""},
	} {
		t.Run(tc.alg.String(), func(t *testing.T) {
			if tc.client != demoClient {
				s.AuthCLI(t, 0, "create-client", "-client-id", tc.client, "-secret", demoSecret, "-name", "Fast "+tc.alg.String(),
					"-redirect-url", callback, "-alg", tc.alg.String())
			}
			cfg := oauthConfig(p, oauth2.AuthStyleInHeader, "mdr:secret")
			cfg.ClientID = tc.client
			verifier := oauth2.GenerateVerifier()
			q := authorizeVia(t, s, cfg.AuthCodeURL("st", oauth2.S256ChallengeOption(verifier), oidc.Nonce("n-1")))
			tok, err := cfg.Exchange(ctx, q.Get("code"), oauth2.VerifierOption(verifier))
			if err != nil {
				t.Fatal(err)
			}
			idTok, _ := tok.Extra("id_token").(string)
			verifies(t, tok.AccessToken, tc.alg)
			verifies(t, idTok, tc.alg)
			kid := jwtPart(t, tok.AccessToken, 0).(map[string]any)["kid"].(string)
			key, _ := set.LookupKeyID(kid)
			if string(key.KeyType()) != tc.kty {
				t.Fatalf("key %s is %s, want %s", kid, key.KeyType(), tc.kty)
			}
			if tc.curve != "" {
				if crv, _ := key.Get("crv"); crv == nil || crv.(interface{ String() string }).String() != tc.curve {
					t.Fatalf("key %s curve %v, want %s", kid, crv, tc.curve)
				}
			}
			// go-oidc, as a relying party, verifies the id token with the
			// discovered key set and algorithms.
			idt, err := p.Verifier(&oidc.Config{ClientID: tc.client}).Verify(ctx, idTok)
			if err != nil || idt.Nonce != "n-1" {
				t.Fatalf("go-oidc: %v %v", idt, err)
			}
			// The gateway verifies it on a path that needs the token's scope.
			s.Get(t, mdr+"/dataelements/urn:secret:dataelement:1:1", 200, "Authorization", "Bearer "+tok.AccessToken)
			s.Get(t, oauth+"/userinfo", 200, "Authorization", "Bearer "+tok.AccessToken)

			// A refresh keeps the client's algorithm.
			res, v := postForm(t, s, oauth+"/token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok.RefreshToken}}, tc.client, demoSecret)
			wantStatus(t, res, v, 200)
			next := v.(map[string]any)["access_token"].(string)
			verifies(t, next, tc.alg)
			s.Get(t, mdr+"/dataelements/urn:secret:dataelement:1:1", 200, "Authorization", "Bearer "+next)
		})
	}

	if out := s.AuthCLI(t, 0, "clients"); !regexp.MustCompile(`e2e-es256\s+Fast ES256\s+UNDEFINED\s+ES256\s`).MatchString(out) {
		t.Errorf("bin/auth clients does not show the algorithm:\n%s", out)
	}
	// An operator's change applies from the next token on; tokens already
	// issued keep verifying.
	s.AuthCLI(t, 0, "update-client", "-alg", "RS256", "e2e-es256")
	code := login(t, s, "client_id=e2e-es256")
	res, v := postForm(t, s, oauth+"/token", url.Values{"grant_type": {"authorization_code"}, "code": {code}}, "e2e-es256", demoSecret)
	wantStatus(t, res, v, 200)
	verifies(t, v.(map[string]any)["access_token"].(string), jwa.RS256)
	s.AuthCLI(t, 1, "update-client", "-alg", "HS256", "e2e-es256")
}
