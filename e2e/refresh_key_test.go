package e2e

import (
	"net/url"
	"testing"
)

// TestRefreshKey, over HTTP: an OAuth 2.0 refresh (form, grant_type)
// gets a refresh token signed with the Ed25519 refresh key, whose kid
// neither /certs nor /jwks publishes, and no id token; it refreshes again,
// revokes and introspects like any. With -refresh-supersedes-access the
// previous access token introspects as inactive after the refresh.
func TestRefreshKey(t *testing.T) {
	t.Parallel()
	s := NewStack(t, Options{AuthArgs: []string{"-refresh-supersedes-access"}})
	seedAuth(t, s)
	published := map[string]bool{}
	_, b := s.Get(t, oauth+"/certs", 200)
	for _, k := range JSON(t, b).([]any) {
		published[k.(map[string]any)["keyId"].(string)] = true
	}
	_, b = s.Get(t, oauth+"/jwks", 200)
	for _, k := range field(t, JSON(t, b), "keys").([]any) {
		published[k.(map[string]any)["kid"].(string)] = true
	}

	form := url.Values{"grant_type": {"authorization_code"}, "code": {login(t, s, "client_id="+demoClient)}}
	res, v := postForm(t, s, oauth+"/token", form, demoClient, demoSecret)
	wantStatus(t, res, v, 200)
	first := v.(map[string]any)
	refresh := first["refresh_token"].(string)
	hdr := jwtPart(t, refresh, 0).(map[string]any)
	if hdr["alg"] != "EdDSA" || published[hdr["kid"].(string)] {
		t.Fatalf("refresh token header %v: want EdDSA with an unpublished kid", hdr)
	}
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
