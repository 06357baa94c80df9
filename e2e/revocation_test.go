package e2e

import (
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// revocationBound guards against a revocation that never arrives: the
// gateway polls auth's revocation list every second (-revocation-poll), so
// a revocation usually reaches every bearer path in about a second (logged
// below), while without it a token stays good for its hour. The bound is
// generous so that a busy machine does not fail the test.
const revocationBound = 30 * time.Second

// signInClient runs the browser login and the code exchange for the demo
// client; it returns the access and refresh tokens.
func signInClient(t *testing.T, s *Stack) (access, refresh string) {
	t.Helper()
	res, v := postJSON(t, s, oauth+"/token", codeRequest(login(t, s, "client_id="+demoClient)))
	wantStatus(t, res, v, 200)
	access, _, refresh = tokens(t, v)
	return access, refresh
}

// postForm posts an urlencoded form, with HTTP Basic client credentials
// when user is not empty, and returns the status and the JSON body.
func postForm(t *testing.T, s *Stack, path string, form url.Values, user, pass string) (*http.Response, any) {
	t.Helper()
	h := []string{"Content-Type", "application/x-www-form-urlencoded"}
	if user != "" {
		req, _ := http.NewRequest(http.MethodGet, "http://x", nil)
		req.SetBasicAuth(url.QueryEscape(user), url.QueryEscape(pass))
		h = append(h, "Authorization", req.Header.Get("Authorization"))
	}
	res, b := s.Do(t, http.MethodPost, path, strings.NewReader(form.Encode()), h...)
	var v any
	if len(b) > 0 {
		v = JSON(t, b)
	}
	return res, v
}

// bearerPath is one path that takes a bearer token, and the status it
// answers with a good token and with a revoked one.
type bearerPath struct {
	path          string
	good, revoked int
}

var bearerPaths = []bearerPath{
	{oauth + "/userinfo", 200, 403},
	{oauth + "/tokeninfo", 200, 403},
	// A private namespace's element: a revoked token reads as anonymous.
	{mdr + "/dataelements/urn:secret:dataelement:1:1", 200, 404},
	{sb + "/researcher/inquiries", 200, 401},
}

// wantBearer checks every bearer path answers as a good or revoked token.
func wantBearer(t *testing.T, s *Stack, tok string, good bool) {
	t.Helper()
	for _, p := range bearerPaths {
		want := p.revoked
		if good {
			want = p.good
		}
		if res, b := s.Do(t, http.MethodGet, p.path, nil, bearer(tok)...); res.StatusCode != want {
			t.Fatalf("GET %s = %d, want %d: %s", p.path, res.StatusCode, want, b)
		}
	}
}

// waitRevoked waits until every bearer path refuses tok and returns how
// long that took from since; it fails beyond revocationBound.
func waitRevoked(t *testing.T, s *Stack, tok string, since time.Time) time.Duration {
	t.Helper()
	for _, p := range bearerPaths {
		for {
			res, b := s.Do(t, http.MethodGet, p.path, nil, bearer(tok)...)
			if res.StatusCode == p.revoked {
				break
			}
			if res.StatusCode != p.good {
				t.Fatalf("GET %s = %d: %s", p.path, res.StatusCode, b)
			}
			if time.Since(since) > revocationBound {
				t.Fatalf("GET %s still accepts the token %v after its revocation", p.path, time.Since(since))
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	d := time.Since(since)
	t.Logf("revoked on every bearer path after %v", d.Round(time.Millisecond))
	return d
}

func refresh(t *testing.T, s *Stack, tok string) (*http.Response, any) {
	t.Helper()
	return postJSON(t, s, oauth+"/token", `{"refresh_token":"`+tok+`"}`)
}

func TestRevocation(t *testing.T) {
	t.Parallel()
	s := NewStack(t, Options{})
	seedAuth(t, s)
	s.MDRCLI(t, 0, "import", filepath.Join("testdata", "extra.json"))
	var worst time.Duration
	measure := func(d time.Duration) { worst = max(worst, d) }

	t.Run("DisabledUser", func(t *testing.T) {
		access, refreshTok := signInClient(t, s)
		wantBearer(t, s, access, true) // verified and remembered by the gateway
		start := time.Now()
		s.AuthCLI(t, 0, "disable-user", demoEmail)
		measure(waitRevoked(t, s, access, start))
		// Enabling the user again brings no old token back.
		s.AuthCLI(t, 0, "enable-user", demoEmail)
		time.Sleep(1500 * time.Millisecond) // more than a poll
		wantBearer(t, s, access, false)
		res, v := refresh(t, s, refreshTok)
		wantStatus(t, res, v, 403)
		fresh, _ := signInClient(t, s)
		wantBearer(t, s, fresh, true)
	})

	t.Run("PasswordChange", func(t *testing.T) {
		access, refreshTok := signInClient(t, s)
		wantBearer(t, s, access, true)
		start := time.Now()
		s.AuthCLI(t, 0, "set-password", "-password", demoPass, demoEmail)
		res, v := refresh(t, s, refreshTok)
		wantStatus(t, res, v, 403)
		measure(waitRevoked(t, s, access, start))
	})

	t.Run("RevokeUserCommand", func(t *testing.T) {
		access, refreshTok := signInClient(t, s)
		wantBearer(t, s, access, true)
		start := time.Now()
		s.AuthCLI(t, 0, "revoke-user", demoEmail)
		measure(waitRevoked(t, s, access, start))
		res, v := refresh(t, s, refreshTok)
		wantStatus(t, res, v, 403)
	})

	t.Run("ReusedRefreshToken", func(t *testing.T) {
		access, first := signInClient(t, s)
		wantBearer(t, s, access, true)
		res, v := refresh(t, s, first)
		wantStatus(t, res, v, 200)
		rotated, _, _ := tokens(t, v)
		wantBearer(t, s, rotated, true)
		start := time.Now()
		res, v = refresh(t, s, first) // reuse: the chain is revoked
		wantStatus(t, res, v, 403)
		// The chain's access tokens (tokeninfo among the paths: 403, not
		// "valid").
		for _, tok := range []string{access, rotated} {
			measure(waitRevoked(t, s, tok, start))
		}
	})

	t.Run("RFC7009RefreshToken", func(t *testing.T) {
		access, refreshTok := signInClient(t, s)
		wantBearer(t, s, access, true)
		start := time.Now()
		res, v := postForm(t, s, oauth+"/revoke", url.Values{"token": {refreshTok}, "token_type_hint": {"refresh_token"}}, demoClient, demoSecret)
		wantStatus(t, res, v, 200)
		res, v = refresh(t, s, refreshTok)
		wantStatus(t, res, v, 403)
		// The chain's access token goes with it (RFC 7009 2.1).
		measure(waitRevoked(t, s, access, start))
	})

	t.Run("RFC7009AccessToken", func(t *testing.T) {
		access, refreshTok := signInClient(t, s)
		wantBearer(t, s, access, true)
		start := time.Now()
		res, v := postForm(t, s, oauth+"/revoke", url.Values{"token": {access}, "client_id": {demoClient}, "client_secret": {demoSecret}}, "", "")
		wantStatus(t, res, v, 200)
		measure(waitRevoked(t, s, access, start))
		// Only that token: its refresh token still works.
		res, v = refresh(t, s, refreshTok)
		wantStatus(t, res, v, 200)
		next, _, _ := tokens(t, v)
		wantBearer(t, s, next, true)
	})

	t.Run("RFC7009Answers", func(t *testing.T) {
		access, _ := signInClient(t, s)
		for _, tc := range []struct {
			name       string
			form       url.Values
			user, pass string
			want       int
		}{
			{"unknown token", url.Values{"token": {"not-a-token"}}, demoClient, demoSecret, 200},
			{"unknown token, no client", url.Values{"token": {"a.b.c"}}, "", "", 200},
			{"no token", url.Values{}, demoClient, demoSecret, 400},
			{"a client's token without its client", url.Values{"token": {access}}, "", "", 401},
			{"wrong secret", url.Values{"token": {access}}, demoClient, "wrong-secret-0123456789", 401},
		} {
			res, v := postForm(t, s, oauth+"/revoke", tc.form, tc.user, tc.pass)
			if res.StatusCode != tc.want {
				t.Fatalf("%s: %d %v, want %d", tc.name, res.StatusCode, v, tc.want)
			}
		}
		wantBearer(t, s, access, true) // none of these revoked it
	})

	t.Run("Introspection", func(t *testing.T) {
		access, refreshTok := signInClient(t, s)
		res, v := postForm(t, s, oauth+"/introspect", url.Values{"token": {access}}, demoClient, demoSecret)
		wantStatus(t, res, v, 200)
		m := v.(map[string]any)
		claims := jwtPart(t, access, 1).(map[string]any)
		for k, want := range map[string]any{
			"active": true, "scope": "openid " + demoScopes, "client_id": demoClient, "aud": demoClient, "sub": claims["sub"],
			"exp": claims["exp"], "iat": claims["iat"], "nbf": claims["nbf"], "iss": Issuer, "token_type": "Bearer", "jti": claims["jti"],
		} {
			if m[k] != want {
				t.Fatalf("introspection %s = %#v, want %#v (%v)", k, m[k], want, m)
			}
		}
		wantHeader(t, res, "Cache-Control", "no-store")
		res, v = postForm(t, s, oauth+"/introspect", url.Values{"token": {refreshTok}}, demoClient, demoSecret)
		wantStatus(t, res, v, 200)
		if v.(map[string]any)["active"] != true || v.(map[string]any)["token_type"] != "refresh_token" {
			t.Fatalf("refresh token introspection = %v", v)
		}
		res, v = postForm(t, s, oauth+"/introspect", url.Values{"token": {access}}, "", "")
		wantStatus(t, res, v, 401)
		res, v = postForm(t, s, oauth+"/revoke", url.Values{"token": {refreshTok}}, demoClient, demoSecret)
		wantStatus(t, res, v, 200)
		for name, tok := range map[string]string{"revoked chain's access token": access, "revoked refresh token": refreshTok, "garbage": "x.y.z"} {
			res, b := s.Do(t, http.MethodPost, oauth+"/introspect", strings.NewReader(url.Values{"token": {tok}, "client_id": {demoClient}, "client_secret": {demoSecret}}.Encode()),
				"Content-Type", "application/x-www-form-urlencoded")
			if res.StatusCode != 200 || strings.TrimSpace(string(b)) != `{"active":false}` {
				t.Fatalf("%s: %d %s, want exactly {\"active\":false}", name, res.StatusCode, b)
			}
		}
	})

	t.Run("Discovery", func(t *testing.T) {
		_, b := s.Get(t, "/.well-known/openid-configuration", 200)
		d := JSON(t, b)
		if field(t, d, "revocation_endpoint") != Issuer+oauth+"/revoke" || field(t, d, "introspection_endpoint") != Issuer+oauth+"/introspect" ||
			field(t, d, "introspection_endpoint_auth_methods_supported", 0) != "client_secret_basic" ||
			field(t, d, "revocation_endpoint_auth_methods_supported", 0) != "client_secret_basic" {
			t.Fatalf("discovery = %s", b)
		}
	})

	t.Run("DisabledClient", func(t *testing.T) {
		const machine, machineSecret = "e2e-machine", "e2e-machine-secret-0123456789"
		s.AuthCLI(t, 0, "create-client", "-client-id", machine, "-secret", machineSecret, "-name", "Machine", "-redirect-url", callback)
		res, v := postForm(t, s, oauth+"/token", url.Values{"grant_type": {"client_credentials"}}, machine, machineSecret)
		wantStatus(t, res, v, 200)
		tok := v.(map[string]any)["access_token"].(string)
		if res, b := s.Do(t, http.MethodGet, oauth+"/tokeninfo", nil, bearer(tok)...); res.StatusCode != 200 {
			t.Fatalf("tokeninfo = %d: %s", res.StatusCode, b)
		}
		start := time.Now()
		s.AuthCLI(t, 0, "disable-client", machine)
		for {
			res, b := s.Do(t, http.MethodGet, oauth+"/tokeninfo", nil, bearer(tok)...)
			if res.StatusCode == 403 {
				break
			}
			if res.StatusCode != 200 || time.Since(start) > revocationBound {
				t.Fatalf("tokeninfo of a disabled client's token = %d after %v: %s", res.StatusCode, time.Since(start), b)
			}
			time.Sleep(20 * time.Millisecond)
		}
		measure(time.Since(start))
		s.AuthCLI(t, 0, "enable-client", machine)
		time.Sleep(1500 * time.Millisecond)
		if res, _ := s.Do(t, http.MethodGet, oauth+"/tokeninfo", nil, bearer(tok)...); res.StatusCode != 403 {
			t.Fatalf("enabling the client brought its old token back: %d", res.StatusCode)
		}
	})

	t.Logf("slowest revocation to reach every bearer path: %v (bound %v)", worst.Round(time.Millisecond), revocationBound)
}
