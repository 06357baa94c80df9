package app

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"

	"fris.dev/pkg/identity"
	authv1 "fris.dev/proto/auth/v1"
)

func TestGroupADisabled(t *testing.T) {
	e := newEnv(t, false)
	for _, tc := range []struct{ method, path string }{
		{"GET", "/oauth2/clients"}, {"POST", "/oauth2/token"}, {"GET", "/oauth2/tokeninfo"},
		{"GET", "/oauth2/authorize?client_id=c1"}, {"POST", "/oauth2/authorize"}, {"GET", "/.well-known/openid-configuration"},
	} {
		jsonErr(t, e.do(t, tc.method, tc.path, ""), http.StatusServiceUnavailable, "temporarily_unavailable")
	}
	if rec := e.do(t, "GET", "/readyz", ""); rec.Code != 200 {
		t.Fatalf("readyz without auth: %d %s", rec.Code, rec.Body)
	}
	// Group B still works.
	if rec := e.do(t, "GET", "/v3/api/mdr/namespaces", ""); rec.Code != 200 {
		t.Fatalf("mdr: %d %s", rec.Code, rec.Body)
	}
}

func TestGroupAPublicRoutes(t *testing.T) {
	e := newEnv(t, true)
	for _, tc := range []struct {
		path, method string
		wantJSON     string
	}{
		{"/oauth2/clients", "ListClients", `[{"clientId":"c1","name":"Client","description":"","redirectUrl":"","type":"MDR"}]`},
		{"/oauth2/certs", "ListCerts", `[{"keyType":"RSA","use":"","keyId":"k1","n":"","e":"","derFormat":"","base64DerFormat":""}]`},
		{"/oauth2/jwks", "GetJWKS", `{"keys":[{"kty":"RSA","use":"","kid":"k1","alg":"RS256","n":"AQAB","e":"AQAB"}]}`},
		{"/.well-known/openid-configuration", "GetDiscovery", ""},
		// Where the Samply auth client looks for it.
		{"/oauth2/.well-known/openid-configuration", "GetDiscovery", ""},
	} {
		// A token, even a valid one, is ignored: not verified, not forwarded.
		rec := e.do(t, "GET", tc.path, "", "Authorization", "Bearer good", "X-Fris-Subject", "1", "Grpc-Metadata-Authorization", "Bearer x")
		if rec.Code != 200 {
			t.Fatalf("%s: %d %s", tc.path, rec.Code, rec.Body)
		}
		if tc.wantJSON != "" {
			jsonEqual(t, rec.Body.String(), tc.wantJSON)
		}
		c := e.auth.last(t)
		if c.method != tc.method {
			t.Fatalf("%s called %s", tc.path, c.method)
		}
		for _, k := range []string{"authorization", identity.KeySubject, identity.KeyScope, "grpcgateway-authorization"} {
			if v := c.md.Get(k); len(v) > 0 {
				t.Fatalf("%s: public route forwarded %s=%v", tc.path, k, v)
			}
		}
		if len(c.md.Get("x-request-id")) != 1 {
			t.Fatalf("%s: no request id", tc.path)
		}
		if rec.Header().Get("Access-Control-Allow-Origin") != "" {
			t.Fatal("CORS header without Origin")
		}
	}
	// (net/http drops the body of HEAD responses; the recorder keeps it.)
	if rec := e.do(t, "HEAD", "/oauth2/clients", ""); rec.Code != 200 {
		t.Fatalf("HEAD: %d %q", rec.Code, rec.Body)
	}
	rec := e.do(t, "GET", "/oauth2/clients", "", "Origin", "https://app.example")
	if rec.Header().Get("Access-Control-Allow-Origin") != "https://app.example" {
		t.Fatalf("CORS: %v", rec.Header())
	}
}

// basicCred is client_secret_basic's credential: each part form-urlencoded
// (RFC 6749 2.3.1), then base64.
func basicCred(id, secret string) string {
	return base64.StdEncoding.EncodeToString([]byte(url.QueryEscape(id) + ":" + url.QueryEscape(secret)))
}

func jsonEqual(t *testing.T, got, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal([]byte(got), &g); err != nil {
		t.Fatalf("got %q: %v", got, err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatal(err)
	}
	gb, _ := json.Marshal(g)
	wb, _ := json.Marshal(w)
	if string(gb) != string(wb) {
		t.Fatalf("got %s\nwant %s", gb, wb)
	}
}

func TestGroupARouting(t *testing.T) {
	e := newEnv(t, true)
	jsonErr(t, e.do(t, "GET", "/oauth2/nope", ""), 404, "not_found")
	for _, tc := range []struct{ method, path, allow string }{
		{"PUT", "/oauth2/token", "POST"},
		{"GET", "/oauth2/token", "POST"},
		{"GET", "/oauth2/access_token", "POST"},
		{"DELETE", "/oauth2/clients", "GET, HEAD"},
		{"POST", "/oauth2/tokeninfo", "GET, HEAD"},
		{"PUT", "/oauth2/authorize", "GET, HEAD, POST"},
		{"POST", "/.well-known/openid-configuration", "GET, HEAD"},
	} {
		rec := e.do(t, tc.method, tc.path, "")
		jsonErr(t, rec, 405, "method_not_allowed")
		if got := rec.Header().Get("Allow"); got != tc.allow {
			t.Errorf("%s %s: Allow %q, want %q", tc.method, tc.path, got, tc.allow)
		}
	}
}

func TestAuthPrefix(t *testing.T) {
	e := newEnv(t, true, "-auth-prefix", "/auth/")
	if rec := e.do(t, "GET", "/auth/clients", ""); rec.Code != 200 {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
	if rec := e.do(t, "POST", "/auth/access_token", `{"refresh_token":"r"}`); rec.Code != 200 {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
	jsonErr(t, e.do(t, "GET", "/oauth2/clients", ""), 404, "not_found")
	if rec := e.do(t, "GET", "/auth/clients", ""); rec.Code != 200 || len(e.auth.last(t).md.Get(identity.KeyAuthPrefix)) != 0 {
		t.Fatalf("the prefix goes with discovery calls only: %d %v", rec.Code, e.auth.last(t).md)
	}
	if rec := e.do(t, "GET", "/.well-known/openid-configuration", ""); rec.Code != 200 {
		t.Fatalf("discovery: %d", rec.Code)
	}
	// The auth service names its endpoints under the prefix the gateway sends.
	if got := e.auth.last(t).md.Get(identity.KeyAuthPrefix); len(got) != 1 || got[0] != "/auth" {
		t.Fatalf("discovery call metadata %s = %q, want [/auth]", identity.KeyAuthPrefix, got)
	}
	rec := e.do(t, "GET", "/auth/authorize?client_id=c1", "")
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), `action="/auth/authorize"`) || !strings.Contains(rec.Header().Get("Set-Cookie"), "Path=/auth;") {
		t.Fatalf("login under /auth: %d %v %s", rec.Code, rec.Header(), rec.Body)
	}
}

func TestTokenBodies(t *testing.T) {
	e := newEnv(t, true, "-max-body", "1024")
	full := &authv1.TokenRequest{Code: "c d", ClientId: "cid", ClientSecret: "s+/=", Signature: "sig", RefreshToken: "", CodeVerifier: "v", RedirectUri: "https://x/cb?a=1", GrantType: "authorization_code"}
	form := url.Values{"code": {"c d"}, "client_id": {"cid"}, "client_secret": {"s+/="}, "signature": {"sig"}, "code_verifier": {"v"},
		"redirect_uri": {"https://x/cb?a=1"}, "grant_type": {"authorization_code"}, "unknown": {"x"}}.Encode()
	for _, tc := range []struct {
		name, path, ct, body string
		want                 *authv1.TokenRequest
	}{
		{"json", "/oauth2/token", "application/json", `{"code":"c d","client_id":"cid","client_secret":"s+/=","signature":"sig","code_verifier":"v","redirect_uri":"https://x/cb?a=1","grant_type":"authorization_code","extra":1}`, full},
		{"json charset", "/oauth2/token", "application/json; charset=ISO-8859-1", `{"refresh_token":"r"}`, &authv1.TokenRequest{RefreshToken: "r"}},
		{"json camelCase", "/oauth2/token", "application/json", `{"refreshToken":"r"}`, &authv1.TokenRequest{RefreshToken: "r"}},
		{"no content type", "/oauth2/token", "", `{"refresh_token":"r"}`, &authv1.TokenRequest{RefreshToken: "r"}},
		{"form", "/oauth2/token", "application/x-www-form-urlencoded", form, full},
		{"form alias", "/oauth2/access_token", "application/x-www-form-urlencoded; charset=UTF-8", "refresh_token=r&grant_type=refresh_token", &authv1.TokenRequest{RefreshToken: "r", GrantType: "refresh_token"}},
		// client_secret_basic: id and secret form-urlencoded inside Basic
		// (RFC 6749 2.3.1), moved into the request the service reads.
		{"basic with form", "/oauth2/token", "application/x-www-form-urlencoded", "grant_type=refresh_token&refresh_token=r",
			&authv1.TokenRequest{RefreshToken: "r", GrantType: "refresh_token", ClientId: "c id", ClientSecret: "s+/=:x"}},
		{"basic with json", "/oauth2/access_token", "application/json", `{"code":"c","client_id":"c id"}`,
			&authv1.TokenRequest{Code: "c", ClientId: "c id", ClientSecret: "s+/=:x"}},
		{"basic alone", "/oauth2/token", "application/x-www-form-urlencoded", "grant_type=client_credentials",
			&authv1.TokenRequest{GrantType: "client_credentials", ClientId: "c id", ClientSecret: "s+/=:x"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var h []string
			if tc.ct != "" {
				h = []string{"Content-Type", tc.ct}
			}
			if strings.HasPrefix(tc.name, "basic") {
				h = append(h, "Authorization", "Basic "+basicCred("c id", "s+/=:x"))
			}
			rec := e.do(t, "POST", tc.path, tc.body, h...)
			if rec.Code != 200 {
				t.Fatalf("%d %s", rec.Code, rec.Body)
			}
			jsonEqual(t, rec.Body.String(), `{"access_token":"at","id_token":"it","refresh_token":"rt","token_type":"Bearer","expires_in":3600}`)
			if rec.Header().Get("Cache-Control") != "no-store" || rec.Header().Get("Pragma") != "no-cache" {
				t.Fatalf("cache headers: %v", rec.Header())
			}
			if got := e.auth.last(t).req; !proto.Equal(got, tc.want) {
				t.Fatalf("service got %v, want %v", got, tc.want)
			}
		})
	}

	// Errors.
	n := e.auth.count()
	for _, tc := range []struct {
		name, authz, body string
		code              int
		errCode           string
	}{
		{"basic not base64", "Basic %%%", `{"code":"c"}`, 401, "invalid_client"},
		{"basic without colon", "Basic " + base64.StdEncoding.EncodeToString([]byte("cid")), `{"code":"c"}`, 401, "invalid_client"},
		{"basic bad escape", "Basic " + base64.StdEncoding.EncodeToString([]byte("c%zz:s")), `{"code":"c"}`, 401, "invalid_client"},
		{"basic empty id", "Basic " + base64.StdEncoding.EncodeToString([]byte(":s")), `{"code":"c"}`, 401, "invalid_client"},
		{"basic and body disagree", "Basic " + basicCred("cid", "s"), `{"code":"c","client_id":"other"}`, 400, "invalid_request"},
		{"basic and body secrets disagree", "Basic " + basicCred("cid", "s"), `{"code":"c","client_secret":"t"}`, 400, "invalid_request"},
	} {
		rec := e.do(t, "POST", "/oauth2/token", tc.body, "Content-Type", "application/json", "Authorization", tc.authz)
		jsonErr(t, rec, tc.code, tc.errCode)
		if tc.code == 401 && rec.Header().Get("WWW-Authenticate") != `Basic realm="fris"` {
			t.Fatalf("%s: WWW-Authenticate %q", tc.name, rec.Header().Get("WWW-Authenticate"))
		}
	}
	jsonErr(t, e.do(t, "POST", "/oauth2/token", `{"code":`, "Content-Type", "application/json"), 400, "invalid_request")
	jsonErr(t, e.do(t, "POST", "/oauth2/token", `code=x`, "Content-Type", "text/plain"), 415, "unsupported_media_type")
	jsonErr(t, e.do(t, "POST", "/oauth2/token", `code=x`, "Content-Type", "multipart/form-data; boundary=x"), 415, "unsupported_media_type")
	jsonErr(t, e.do(t, "POST", "/oauth2/token", `code=x`, "Content-Type", "application/json;;"), 415, "unsupported_media_type")
	jsonErr(t, e.do(t, "POST", "/oauth2/sign_request", `keyId=1`, "Content-Type", "application/x-www-form-urlencoded"), 415, "unsupported_media_type")
	jsonErr(t, e.do(t, "POST", "/oauth2/register", `x`, "Content-Type", "application/xml"), 415, "unsupported_media_type")
	jsonErr(t, e.do(t, "POST", "/oauth2/token", `code=a&code=b`, "Content-Type", "application/x-www-form-urlencoded"), 400, "invalid_request")
	jsonErr(t, e.do(t, "POST", "/oauth2/token", `code=%zz`, "Content-Type", "application/x-www-form-urlencoded"), 400, "invalid_request")
	if e.auth.count() != n {
		t.Fatal("a refused body reached the service")
	}
	// The service's OAuth error codes reach the body.
	jsonErr(t, e.do(t, "POST", "/oauth2/token", `grant_type=magic`, "Content-Type", "application/x-www-form-urlencoded"), 400, "unsupported_grant_type")
	rec401 := e.do(t, "POST", "/oauth2/token", `grant_type=client_credentials`, "Content-Type", "application/x-www-form-urlencoded", "Authorization", "Basic "+basicCred("cid", "wrong"))
	jsonErr(t, rec401, 401, "invalid_client")
	if rec401.Header().Get("WWW-Authenticate") != `Basic realm="fris"` {
		t.Fatalf("invalid_client without a Basic challenge: %v", rec401.Header())
	}
	// Too large, without a Content-Length (chunked).
	req := httptest.NewRequest("POST", "/oauth2/token", io.MultiReader(strings.NewReader(`{"code":"`), strings.NewReader(strings.Repeat("x", 2048)+`"}`)))
	req.ContentLength = -1
	rec := httptest.NewRecorder()
	e.h.ServeHTTP(rec, req)
	jsonErr(t, rec, 413, "too_large")

	// An empty body, JSON or form, reaches the service, which refuses it.
	for _, ct := range []string{"", "application/json", "application/x-www-form-urlencoded"} {
		var h []string
		if ct != "" {
			h = []string{"Content-Type", ct}
		}
		if d := jsonErr(t, e.do(t, "POST", "/oauth2/token", "", h...), 400, "invalid_request"); d != "no payload" {
			t.Fatalf("empty body with %q: %q", ct, d)
		}
	}
}

func TestOtherPostRoutes(t *testing.T) {
	e := newEnv(t, true)
	for _, path := range []string{"/oauth2/sign_request", "/oauth2/signRequest"} {
		rec := e.do(t, "POST", path, `{"key_id":7,"sha512Hash":"ab"}`, "Content-Type", "application/json")
		if rec.Code != 200 || rec.Header().Get("Cache-Control") != "no-store" {
			t.Fatalf("%s: %d %v %s", path, rec.Code, rec.Header(), rec.Body)
		}
		jsonEqual(t, rec.Body.String(), `{"code":"c","expirationDate":1700000000,"algoritm":"SHA512withRSA","algorithm":"SHA512withRSA","exp":1700000000}`)
		if got := e.auth.last(t).req.(*authv1.SignRequestRequest); got.GetKeyIdAlias() != 7 || got.GetSha512Hash() != "ab" {
			t.Fatalf("service got %v", got)
		}
	}
	rec := e.do(t, "POST", "/oauth2/register", `{"email":"a@b.c","base64EncodedPublicKey":"x"}`)
	jsonErr(t, rec, 409, "conflict")
	if rec.Header().Get("Cache-Control") != "no-store" {
		t.Fatal("register without no-store")
	}
	// CORS preflight for a JSON POST from a configured origin.
	rec = e.do(t, "OPTIONS", "/oauth2/token", "", "Origin", "https://app.example", "Access-Control-Request-Method", "POST", "Access-Control-Request-Headers", "content-type")
	if rec.Header().Get("Access-Control-Allow-Origin") != "https://app.example" || !strings.Contains(strings.ToLower(rec.Header().Get("Access-Control-Allow-Headers")), "content-type") {
		t.Fatalf("preflight: %d %v", rec.Code, rec.Header())
	}
	rec = e.do(t, "OPTIONS", "/oauth2/token", "", "Origin", "https://evil.example", "Access-Control-Request-Method", "POST")
	if rec.Header().Get("Access-Control-Allow-Origin") != "" {
		t.Fatal("preflight allowed an unconfigured origin")
	}
	// A researcher's web app edits an inquiry with PUT.
	rec = e.do(t, "OPTIONS", "/broker/rest/searchbroker/researcher/inquiries/1", "", "Origin", "https://app.example",
		"Access-Control-Request-Method", "PUT", "Access-Control-Request-Headers", "authorization, content-type")
	if rec.Header().Get("Access-Control-Allow-Origin") != "https://app.example" || !strings.Contains(rec.Header().Get("Access-Control-Allow-Methods"), "PUT") {
		t.Fatalf("PUT preflight: %d %v", rec.Code, rec.Header())
	}
}

func TestBearerRoutes(t *testing.T) {
	e := newEnv(t, true)
	for _, path := range []string{"/oauth2/tokeninfo", "/oauth2/userinfo", "/oauth2/users/search?query=ad"} {
		n := e.auth.count()
		for _, tc := range []struct{ header, challenge string }{
			{"", `Bearer`},
			{"Bearer null", `Bearer`},
			{"Basic Zm9vOmJhcg==", `Bearer`},
			{"Bearer bad", `Bearer error="invalid_token"`},
		} {
			var h []string
			if tc.header != "" {
				h = []string{"Authorization", tc.header}
			}
			rec := e.do(t, "GET", path, "", h...)
			jsonErr(t, rec, 403, "access_denied")
			if got := rec.Header().Get("WWW-Authenticate"); got != tc.challenge {
				t.Fatalf("%s with %q: WWW-Authenticate %q", path, tc.header, got)
			}
		}
		if e.auth.count() != n {
			t.Fatalf("%s: refused request reached the service", path)
		}
		rec := e.do(t, "GET", path, "", "Authorization", "bearer  good ", "X-Fris-Subject", "1", "X-Fris-Scope", "mdr:*")
		if rec.Code != 200 {
			t.Fatalf("%s: %d %s", path, rec.Code, rec.Body)
		}
		if rec.Header().Get("Cache-Control") != "no-store" || rec.Header().Get("ETag") != "" {
			t.Fatalf("%s: cache headers %v", path, rec.Header())
		}
		c := e.auth.last(t)
		if got := c.md.Get("authorization"); len(got) != 1 || got[0] != "Bearer good" {
			t.Fatalf("%s: authorization metadata %v", path, got)
		}
		id := identity.FromIncoming(metadata.NewIncomingContext(context.Background(), c.md))
		if id.Subject != "42" || id.Client != "c1" || !id.HasScope("mdr:secret") || id.HasScope("mdr:*") {
			t.Fatalf("%s: identity %+v", path, id)
		}
	}
	if got := e.auth.last(t).req.(*authv1.SearchUsersRequest).GetQuery(); got != "ad" {
		t.Fatalf("query %q", got)
	}
	rec := e.do(t, "GET", "/oauth2/userinfo", "", "Authorization", "Bearer good")
	jsonEqual(t, rec.Body.String(), `{"real_name":"Ada","contact_information":"","locality":null,"email":"ada@example.org","email_verified":false,"sub":"42","name":"Ada","id":""}`)
}

// users/search lists names and addresses: a valid token without the scope
// is refused before the service is called, with the RFC 6750 challenge.
func TestUserSearchNeedsScope(t *testing.T) {
	e := newEnv(t, true)
	n := e.auth.count()
	rec := e.do(t, "GET", "/oauth2/users/search?query=@", "", "Authorization", "Bearer plain")
	jsonErr(t, rec, 403, "insufficient_scope")
	if got, want := rec.Header().Get("WWW-Authenticate"), `Bearer error="insufficient_scope", scope="users:search"`; got != want {
		t.Fatalf("WWW-Authenticate %q, want %q", got, want)
	}
	if e.auth.count() != n {
		t.Fatal("refused request reached the service")
	}
	// The other bearer routes need no role.
	if rec := e.do(t, "GET", "/oauth2/userinfo", "", "Authorization", "Bearer plain"); rec.Code != 200 {
		t.Fatalf("userinfo: %d %s", rec.Code, rec.Body)
	}
}

func TestLoginPageThroughGateway(t *testing.T) {
	e := newEnv(t, true)
	rec := e.do(t, "GET", "/oauth2/authorize?client_id=c1&state=s&response_type=code", "", "Origin", "https://app.example")
	if rec.Code != 200 || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/html") {
		t.Fatalf("%d %v", rec.Code, rec.Header())
	}
	h := rec.Header()
	if h.Get("ETag") != "" || h.Get("Access-Control-Allow-Origin") != "" || h.Get("Cache-Control") != "no-store" || h.Get("X-Frame-Options") != "DENY" {
		t.Fatalf("headers %v", h)
	}
	if !strings.Contains(h.Get("Content-Security-Policy"), "form-action 'self' https://client.example;") {
		t.Fatalf("CSP %q", h.Get("Content-Security-Policy"))
	}
	rec = e.do(t, "GET", "/oauth2/authorize?client_id=nope", "")
	if rec.Code != 404 || !strings.Contains(rec.Body.String(), "Unknown client.") {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
}

// The login page's CSRF cookie is Secure when a trusted proxy says the
// browser came over TLS (X-Forwarded-Proto: https), not when any client
// says so.
func TestForwardedProtoOnlyFromTrustedProxies(t *testing.T) {
	for _, c := range []struct {
		name    string
		proxies string
		secure  bool
	}{
		{"no trusted proxies", "", false},
		{"another proxy", "10.0.0.0/8", false},
		{"from a trusted proxy", "192.0.2.0/24", true}, // httptest's RemoteAddr is 192.0.2.1
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, true, "-trusted-proxies", c.proxies)
			rec := e.do(t, "GET", "/oauth2/authorize?client_id=c1", "", "X-Forwarded-Proto", "https")
			cookies := rec.Result().Cookies()
			if rec.Code != 200 || len(cookies) != 1 {
				t.Fatalf("authorize: %d, cookies %v", rec.Code, cookies)
			}
			if cookies[0].Secure != c.secure {
				t.Fatalf("CSRF cookie Secure = %v, want %v", cookies[0].Secure, c.secure)
			}
		})
	}
}
