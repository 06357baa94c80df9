package e2e

import (
	"net/url"
	"strings"
	"testing"
)

// TestRefreshKey, over HTTP: an OAuth 2.0 refresh (form, grant_type)
// gets a refresh token signed HS256 under the MAC key derived from the
// refresh key, whose kid (nor the refresh key's own) neither /certs nor
// /jwks publishes, which hold no symmetric key, and no id token; it
// refreshes again, revokes and introspects like any, and the gateway
// refuses it as a bearer token. With -refresh-supersedes-access the
// previous access token introspects as inactive after the refresh.
func TestRefreshKey(t *testing.T) {
	t.Parallel()
	s := NewStack(t, Options{AuthArgs: []string{"-refresh-supersedes-access"}})
	seedAuth(t, s)
	s.MDRCLI(t, 0, "import", "testdata/extra.json")
	published := map[string]bool{}
	_, certs := s.Get(t, oauth+"/certs", 200)
	for _, k := range JSON(t, certs).([]any) {
		published[k.(map[string]any)["keyId"].(string)] = true
	}
	_, jwks := s.Get(t, oauth+"/jwks", 200)
	for _, k := range field(t, JSON(t, jwks), "keys").([]any) {
		published[k.(map[string]any)["kid"].(string)] = true
		if kty := k.(map[string]any)["kty"]; kty != "RSA" && kty != "EC" && kty != "OKP" {
			t.Fatalf("the JWKS publishes a %v key: %v", kty, k)
		}
	}

	form := url.Values{"grant_type": {"authorization_code"}, "code": {login(t, s, "client_id="+demoClient)}}
	res, v := postForm(t, s, oauth+"/token", form, demoClient, demoSecret)
	wantStatus(t, res, v, 200)
	first := v.(map[string]any)
	refresh := first["refresh_token"].(string)
	hdr := jwtPart(t, refresh, 0).(map[string]any)
	kid, _ := hdr["kid"].(string)
	edKID, isMAC := strings.CutSuffix(kid, ".hs256")
	if hdr["alg"] != "HS256" || !isMAC || published[kid] || published[edKID] {
		t.Fatalf("refresh token header %v: want HS256 with an unpublished kid", hdr)
	}
	for _, b := range [][]byte{certs, jwks} {
		if strings.Contains(string(b), edKID) || strings.Contains(string(b), `"oct"`) {
			t.Fatalf("the refresh key shows in %s", b)
		}
	}
	// The gateway verifies access tokens against the JWKS: the refresh
	// token is none, and HS256 is no algorithm it takes. The access token
	// opens the private data element; the refresh token leaves the
	// request anonymous (404), and a bearer route refuses it in the
	// gateway (invalid_token) before auth is asked.
	secret := mdr + "/dataelements/urn:secret:dataelement:1:1"
	s.Get(t, secret, 200, "Authorization", "Bearer "+first["access_token"].(string))
	s.Get(t, secret, 404, "Authorization", "Bearer "+refresh)
	res, _ = s.Get(t, oauth+"/userinfo", 403, "Authorization", "Bearer "+refresh)
	wantContains(t, res.Header.Get("WWW-Authenticate"), `error="invalid_token"`)
	if first["id_token"] == nil || jwtPart(t, first["access_token"].(string), 0).(map[string]any)["alg"] != "RS256" {
		t.Fatalf("sign-in response %v: want an RS256 access token and an id token", first)
	}

	res, v = postForm(t, s, oauth+"/token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refresh}}, demoClient, demoSecret)
	wantStatus(t, res, v, 200)
	next := v.(map[string]any)
	if _, has := next["id_token"]; has || next["access_token"] == nil || next["refresh_token"] == nil {
		t.Fatalf("refresh response %v: want access and refresh token, no id token", next)
	}
	active := func(tok string) any {
		t.Helper()
		res, v := postForm(t, s, oauth+"/introspect", url.Values{"token": {tok}}, demoClient, demoSecret)
		wantStatus(t, res, v, 200)
		return v.(map[string]any)["active"]
	}
	if active(first["access_token"].(string)) != false || active(next["access_token"].(string)) != true {
		t.Fatal("-refresh-supersedes-access: the previous access token is still active, or the new one is not")
	}
	if m := next["refresh_token"].(string); active(m) != true {
		t.Fatal("the new refresh token does not introspect as active")
	}
	// Revoking the new refresh token ends the chain.
	res, v = postForm(t, s, oauth+"/revoke", url.Values{"token": {next["refresh_token"].(string)}}, demoClient, demoSecret)
	wantStatus(t, res, v, 200)
	res, v = postForm(t, s, oauth+"/token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {next["refresh_token"].(string)}}, demoClient, demoSecret)
	if res.StatusCode < 400 {
		t.Fatalf("a revoked refresh token refreshed: %d %v", res.StatusCode, v)
	}
}
