package e2e

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

const (
	oauth      = "/oauth2"
	demoClient = "e2e-client"
	demoSecret = "e2e-client-secret-0123456789"
	demoEmail  = "ada@fris.test"
	demoPass   = "correct horse battery"
	callback   = "https://app.fris.test/callback"
	// demoScopes are the demo user's: a private registry namespace and both
	// roles (the researcher API, users/search), as make run's researcher.
	demoScopes = "mdr:secret broker:researcher users:search"
)

// seedAuth creates the client and the user the tests log in with.
func seedAuth(t *testing.T, s *Stack) {
	t.Helper()
	s.AuthCLI(t, 0, "create-client", "-client-id", demoClient, "-secret", demoSecret, "-name", "E2E Client",
		"-type", "MDR", "-redirect-url", callback+",https://app.fris.test/other?keep=1")
	s.AuthCLI(t, 0, "create-user", "-email", demoEmail, "-password", demoPass, "-name", "Ada Lovelace",
		"-scopes", strings.ReplaceAll(demoScopes, " ", ","))
}

func postJSON(t *testing.T, s *Stack, path, body string) (*http.Response, any) {
	t.Helper()
	res, b := s.Do(t, http.MethodPost, path, strings.NewReader(body), "Content-Type", "application/json")
	var v any
	if len(b) > 0 {
		v = JSON(t, b)
	}
	return res, v
}

func wantStatus(t *testing.T, res *http.Response, v any, code int) {
	t.Helper()
	if res.StatusCode != code {
		t.Fatalf("%s %s = %d, want %d: %v", res.Request.Method, res.Request.URL.Path, res.StatusCode, code, v)
	}
	if code >= 400 {
		if _, ok := field(t, v, "error").(string); !ok {
			t.Fatalf("error body without error: %v", v)
		}
	}
}

var hiddenRE = regexp.MustCompile(`<input type="hidden" name="([^"]+)" value="([^"]*)">`)

// browser is a cookie-keeping client that does not follow redirects, the
// way a test wants to see them.
func browser(t *testing.T) *http.Client {
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{Jar: jar, Timeout: 30 * time.Second, Transport: checked(t, nil, nil), CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// loginForm gets the login page and returns the form fields it carries.
func loginForm(t *testing.T, s *Stack, c *http.Client, query string) url.Values {
	t.Helper()
	res, err := c.Get(s.URL + oauth + "/authorize?" + query)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("login page = %d %s: %s", res.StatusCode, res.Header.Get("Content-Type"), b)
	}
	form := url.Values{}
	for _, m := range hiddenRE.FindAllStringSubmatch(string(b), -1) {
		form.Set(m[1], html.UnescapeString(m[2]))
	}
	if form.Get("csrf_token") == "" {
		t.Fatalf("no CSRF token on the page:\n%s", b)
	}
	return form
}

func submit(t *testing.T, s *Stack, c *http.Client, form url.Values) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, s.URL+oauth+"/authorize", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res, string(b)
}

// login goes through the browser login and returns the code.
func login(t *testing.T, s *Stack, query string) string {
	t.Helper()
	c := browser(t)
	form := loginForm(t, s, c, query)
	form.Set("email", demoEmail)
	form.Set("password", demoPass)
	res, body := submit(t, s, c, form)
	if res.StatusCode != http.StatusFound {
		t.Fatalf("login = %d: %s", res.StatusCode, body)
	}
	loc, err := url.Parse(res.Header.Get("Location"))
	if err != nil || loc.Query().Get("code") == "" {
		t.Fatalf("redirect %q has no code", res.Header.Get("Location"))
	}
	return loc.Query().Get("code")
}

// tokens reads a sign-in's token response: the spec's three tokens and,
// beside them, what OAuth 2.0 clients need (token_type, expires_in as a
// JSON number of seconds).
func tokens(t *testing.T, v any) (access, id, refresh string) {
	t.Helper()
	m := v.(map[string]any)
	if len(m) != 5 || m["token_type"] != "Bearer" {
		t.Fatalf("token response = %v, want access_token, id_token, refresh_token, token_type Bearer, expires_in", m)
	}
	if exp, ok := m["expires_in"].(float64); !ok || exp <= 0 || exp > 3600 {
		t.Fatalf("expires_in = %#v, want a number of seconds", m["expires_in"])
	}
	return m["access_token"].(string), m["id_token"].(string), m["refresh_token"].(string)
}

func codeRequest(code string) string {
	return fmt.Sprintf(`{"code":%q,"client_id":%q,"client_secret":%q}`, code, demoClient, demoSecret)
}

func jwtPart(t *testing.T, tok string, i int) any {
	t.Helper()
	b, err := base64.RawURLEncoding.DecodeString(strings.Split(tok, ".")[i])
	if err != nil {
		t.Fatal(err)
	}
	return JSON(t, b)
}

func TestAuth(t *testing.T) {
	t.Parallel()
	s := NewStack(t, Options{})
	seedAuth(t, s)

	t.Run("PublicListsAndKeys", func(t *testing.T) {
		_, b := s.Get(t, oauth+"/clients", 200)
		cl := JSON(t, b).([]any)
		if len(cl) != 1 {
			t.Fatalf("clients = %s", b)
		}
		c := cl[0].(map[string]any)
		if len(c) != 5 || c["clientId"] != demoClient || c["name"] != "E2E Client" || c["type"] != "MDR" ||
			c["redirectUrl"] != callback+",https://app.fris.test/other?keep=1" {
			t.Fatalf("client = %v", c)
		}
		_, b = s.Get(t, oauth+"/certs", 200)
		certs := JSON(t, b).([]any)
		if len(certs) != 1 {
			t.Fatalf("certs = %s", b)
		}
		k := certs[0].(map[string]any)
		for _, f := range []string{"keyType", "use", "keyId", "n", "e", "derFormat", "base64DerFormat"} {
			if v, _ := k[f].(string); v == "" {
				t.Fatalf("cert field %s missing: %v", f, k)
			}
		}
		der, _ := base64.RawURLEncoding.DecodeString(k["derFormat"].(string))
		std, _ := base64.StdEncoding.DecodeString(k["base64DerFormat"].(string))
		if _, err := x509.ParsePKIXPublicKey(der); err != nil || string(der) != string(std) {
			t.Fatalf("DER forms disagree or do not parse: %v", err)
		}
		_, b = s.Get(t, oauth+"/jwks", 200)
		if field(t, JSON(t, b), "keys", 0, "kid") != k["keyId"] || field(t, JSON(t, b), "keys", 0, "kty") != "RSA" {
			t.Fatalf("jwks = %s", b)
		}
		_, b = s.Get(t, "/.well-known/openid-configuration", 200)
		d := JSON(t, b)
		if field(t, d, "issuer") != Issuer || field(t, d, "token_endpoint") != Issuer+"/oauth2/token" || field(t, d, "jwks_uri") != Issuer+"/oauth2/jwks" {
			t.Fatalf("discovery = %s", b)
		}
		res, _ := s.Do(t, http.MethodGet, oauth+"/token", nil)
		if res.StatusCode != 405 || !strings.Contains(res.Header.Get("Allow"), "POST") {
			t.Fatalf("GET /token = %d Allow %q", res.StatusCode, res.Header.Get("Allow"))
		}
	})

	t.Run("ClientSecretFlow", func(t *testing.T) {
		code := login(t, s, "client_id="+demoClient+"&state=st-1&nonce=n-1")
		res, v := postJSON(t, s, oauth+"/token", codeRequest(code))
		wantStatus(t, res, v, 200)
		wantHeader(t, res, "Cache-Control", "no-store")
		access, id, refresh := tokens(t, v)
		hdr := jwtPart(t, access, 0)
		cl := jwtPart(t, access, 1)
		if field(t, cl, "type") != "ACCESS_TOKEN" || field(t, cl, "iss") != Issuer || field(t, cl, "nonce") != "n-1" {
			t.Fatalf("access claims = %v", cl)
		}
		// One space-separated string (RFC 9068), as the Samply auth client
		// reads it; /tokeninfo lists the same scopes as an array.
		if sc, ok := field(t, cl, "scope").(string); !ok || sc != "openid "+demoScopes {
			t.Fatalf("scope is not the string %q: %v", "openid "+demoScopes, cl)
		}
		_, b := s.Get(t, oauth+"/certs", 200)
		if field(t, hdr, "kid") != field(t, JSON(t, b), 0, "keyId") {
			t.Fatalf("kid %v is not the /certs keyId", field(t, hdr, "kid"))
		}
		if field(t, jwtPart(t, id, 1), "type") != "ID_TOKEN" || field(t, jwtPart(t, id, 1), "name") != "Ada Lovelace" ||
			field(t, jwtPart(t, refresh, 1), "type") != "REFRESH_TOKEN" {
			t.Fatal("id or refresh token claims wrong")
		}
		// Single use.
		res, v = postJSON(t, s, oauth+"/token", codeRequest(code))
		wantStatus(t, res, v, 404)
	})

	t.Run("FormAndAlias", func(t *testing.T) {
		code := login(t, s, "client_id="+demoClient)
		form := url.Values{"code": {code}, "client_id": {demoClient}, "client_secret": {demoSecret}, "grant_type": {"authorization_code"}}
		res, b := s.Do(t, http.MethodPost, oauth+"/access_token", strings.NewReader(form.Encode()), "Content-Type", "application/x-www-form-urlencoded")
		if res.StatusCode != 200 {
			t.Fatalf("form token request = %d %s", res.StatusCode, b)
		}
		tokens(t, JSON(t, b))
		res, b = s.Do(t, http.MethodPost, oauth+"/token", strings.NewReader("<xml/>"), "Content-Type", "text/xml")
		if res.StatusCode != 415 {
			t.Fatalf("xml body = %d %s", res.StatusCode, b)
		}
	})

	t.Run("TokenErrorTable", func(t *testing.T) {
		for _, tc := range []struct {
			name, body string
			code       int
		}{
			{"no payload", ``, 400},
			{"empty object", `{}`, 400},
			{"malformed JSON", `{"code":`, 400},
			{"unknown client", `{"code":"x","client_id":"nope","client_secret":"whatever-whatever"}`, 404},
			{"wrong secret", `{"code":"x","client_id":"` + demoClient + `","client_secret":"wrong-wrong-wrong"}`, 404},
			{"unknown code", codeRequest("no-such-code"), 404},
			{"unknown sign request", `{"code":"x","client_id":"` + demoClient + `","signature":"AAAA"}`, 404},
			// Fields over their documented limit (docs/security.md, Input
			// limits): 400 naming the field, before any lookup.
			{"overlong client id", `{"code":"0","client_id":"` + strings.Repeat("+", 1100) + `","signature":"AAAA"}`, 400},
			{"overlong code", `{"code":"` + strings.Repeat("c", 1100) + `","client_id":"` + demoClient + `","client_secret":"` + demoSecret + `"}`, 400},
			{"unparseable refresh token", `{"refresh_token":"garbage"}`, 400},
		} {
			res, v := postJSON(t, s, oauth+"/token", tc.body)
			if res.StatusCode != tc.code {
				t.Errorf("%s: %d, want %d: %v", tc.name, res.StatusCode, tc.code, v)
			}
		}
	})

	t.Run("PKCE", func(t *testing.T) {
		verifier := strings.Repeat("v", 50)
		sum := sha256.Sum256([]byte(verifier))
		ch := base64.RawURLEncoding.EncodeToString(sum[:])
		code := login(t, s, "client_id="+demoClient+"&code_challenge="+ch+"&code_challenge_method=S256")
		res, v := postJSON(t, s, oauth+"/token", fmt.Sprintf(`{"code":%q,"client_id":%q,"client_secret":%q,"code_verifier":%q}`, code, demoClient, demoSecret, verifier))
		wantStatus(t, res, v, 200)
		code = login(t, s, "client_id="+demoClient+"&code_challenge="+ch+"&code_challenge_method=S256")
		res, v = postJSON(t, s, oauth+"/token", codeRequest(code))
		wantStatus(t, res, v, 400)
	})

	t.Run("LoginPage", func(t *testing.T) {
		c := browser(t)
		form := loginForm(t, s, c, "client_id="+demoClient+"&state=abc&redirect_uri="+url.QueryEscape("https://app.fris.test/other?keep=1"))
		form.Set("email", demoEmail)
		form.Set("password", "wrong password")
		res, body := submit(t, s, c, form)
		if res.StatusCode != 401 || !strings.Contains(body, "Email or password is wrong.") || strings.Contains(body, "wrong password") {
			t.Fatalf("wrong password = %d:\n%s", res.StatusCode, body)
		}
		form.Set("email", "nobody@fris.test")
		_, other := submit(t, s, c, form)
		// Equal but for the email echoed back and the per-response CSP nonce.
		nonce := regexp.MustCompile(`nonce="[^"]*"`)
		if nonce.ReplaceAllString(strings.ReplaceAll(other, "nobody@fris.test", demoEmail), "") != nonce.ReplaceAllString(body, "") {
			t.Fatal("the page for an unknown email differs from the one for a wrong password")
		}
		form.Set("email", demoEmail)
		form.Set("password", demoPass)
		res, body = submit(t, s, c, form)
		loc, _ := url.Parse(res.Header.Get("Location"))
		if res.StatusCode != 302 || loc.Host != "app.fris.test" || loc.Path != "/other" || loc.Query().Get("keep") != "1" || loc.Query().Get("state") != "abc" {
			t.Fatalf("redirect = %d %q %s", res.StatusCode, res.Header.Get("Location"), body)
		}
		// No redirect anywhere the client did not register.
		res, _ = s.Do(t, http.MethodGet, oauth+"/authorize?client_id="+demoClient+"&redirect_uri="+url.QueryEscape("https://evil.test/cb"), nil)
		if res.StatusCode != 400 || res.Header.Get("Location") != "" {
			t.Fatalf("foreign redirect_uri = %d %q", res.StatusCode, res.Header.Get("Location"))
		}
		res, _ = s.Do(t, http.MethodGet, oauth+"/authorize?client_id=nope", nil)
		if res.StatusCode != 404 {
			t.Fatalf("unknown client = %d", res.StatusCode)
		}
		// A form without the CSRF cookie is refused.
		form = loginForm(t, s, browser(t), "client_id="+demoClient)
		form.Set("email", demoEmail)
		form.Set("password", demoPass)
		res, _ = submit(t, s, browser(t), form)
		if res.StatusCode != 400 {
			t.Fatalf("login without CSRF cookie = %d", res.StatusCode)
		}
	})

	t.Run("RefreshRotationAndReuse", func(t *testing.T) {
		res, v := postJSON(t, s, oauth+"/token", codeRequest(login(t, s, "client_id="+demoClient)))
		wantStatus(t, res, v, 200)
		_, _, r1 := tokens(t, v)
		res, v = postJSON(t, s, oauth+"/token", fmt.Sprintf(`{"refresh_token":%q}`, r1))
		wantStatus(t, res, v, 200)
		_, _, r2 := tokens(t, v)
		if r2 == r1 {
			t.Fatal("refresh token not rotated")
		}
		res, v = postJSON(t, s, oauth+"/token", fmt.Sprintf(`{"refresh_token":%q}`, r1))
		wantStatus(t, res, v, 403)
		res, v = postJSON(t, s, oauth+"/token", fmt.Sprintf(`{"refresh_token":%q}`, r2))
		wantStatus(t, res, v, 403)
	})

	t.Run("BearerEndpoints", func(t *testing.T) {
		res, v := postJSON(t, s, oauth+"/token", codeRequest(login(t, s, "client_id="+demoClient)))
		wantStatus(t, res, v, 200)
		access, id, _ := tokens(t, v)
		_, b := s.Get(t, oauth+"/tokeninfo", 200, "Authorization", "Bearer "+access)
		ti := JSON(t, b).(map[string]any)
		for _, f := range []string{"expirationDate", "subject", "scope", "nonce", "notBeofre", "issuer"} {
			if _, ok := ti[f]; !ok {
				t.Fatalf("tokeninfo lacks %s: %s", f, b)
			}
		}
		if _, ok := ti["expirationDate"].(float64); !ok {
			t.Fatalf("expirationDate is not a number: %s", b)
		}
		if exp := ti["expirationDate"].(float64); exp < float64(time.Now().Unix()) || exp > float64(time.Now().Add(2*time.Hour).Unix()) {
			t.Fatalf("expirationDate %v is not seconds since the epoch", exp)
		}
		_, b = s.Get(t, oauth+"/userinfo", 200, "Authorization", "Bearer "+access)
		ui := JSON(t, b).(map[string]any)
		if ui["email"] != demoEmail || ui["real_name"] != "Ada Lovelace" || ui["email_verified"] != false {
			t.Fatalf("userinfo = %s", b)
		}
		for _, f := range []string{"contact_information", "locality"} {
			if _, ok := ui[f]; !ok {
				t.Fatalf("userinfo lacks %s: %s", f, b)
			}
		}
		_, b = s.Get(t, oauth+"/users/search?query=LOVE", 200, "Authorization", "Bearer "+access)
		if arr := JSON(t, b).([]any); len(arr) != 1 || field(t, arr[0], "email") != demoEmail {
			t.Fatalf("search = %s", b)
		}
		s.Get(t, oauth+"/users/search", 400, "Authorization", "Bearer "+access)
		for _, h := range []string{"", "Bearer null", "Bearer garbage", "Bearer " + id} {
			for _, p := range []string{"/tokeninfo", "/userinfo", "/users/search?query=a"} {
				var res *http.Response
				if h == "" {
					res, _ = s.Get(t, oauth+p, 403)
				} else {
					res, _ = s.Get(t, oauth+p, 403, "Authorization", h)
				}
				wantContains(t, res.Header.Get("WWW-Authenticate"), "Bearer")
			}
		}
	})

	t.Run("PrivateNamespaceWithRealToken", func(t *testing.T) {
		s.MDRCLI(t, 0, "import", "testdata/extra.json")
		res, v := postJSON(t, s, oauth+"/token", codeRequest(login(t, s, "client_id="+demoClient)))
		wantStatus(t, res, v, 200)
		access, _, _ := tokens(t, v)
		s.Get(t, mdr+"/dataelements/urn:secret:dataelement:1:1", 200, "Authorization", "Bearer "+access)
		s.Get(t, mdr+"/dataelements/urn:secret:dataelement:1:1", 404)
	})

	t.Run("KeyRotationThroughCLI", func(t *testing.T) {
		res, v := postJSON(t, s, oauth+"/token", codeRequest(login(t, s, "client_id="+demoClient)))
		wantStatus(t, res, v, 200)
		oldAccess, _, oldRefresh := tokens(t, v)
		out := s.AuthCLI(t, 0, "rotate-keys")
		newKid := strings.Fields(out)[0]
		wantContains(t, s.AuthCLI(t, 0, "keys"), "published until")
		_, b := s.Get(t, oauth+"/certs", 200)
		if n := len(JSON(t, b).([]any)); n < 2 {
			t.Fatalf("after rotation /certs has %d keys", n)
		}
		// New tokens carry the new kid; the gateway, which has only seen the
		// old key so far, fetches the key set again and accepts them.
		res, v = postJSON(t, s, oauth+"/token", fmt.Sprintf(`{"refresh_token":%q}`, oldRefresh))
		wantStatus(t, res, v, 200)
		newAccess, _, _ := tokens(t, v)
		if field(t, jwtPart(t, newAccess, 0), "kid") != newKid {
			t.Fatalf("new token kid %v, rotated key %s", field(t, jwtPart(t, newAccess, 0), "kid"), newKid)
		}
		s.MDRCLI(t, 0, "import", "testdata/extra.json")
		for _, tok := range []string{newAccess, oldAccess} {
			s.Get(t, mdr+"/dataelements/urn:secret:dataelement:1:1", 200, "Authorization", "Bearer "+tok)
			s.Get(t, oauth+"/userinfo", 200, "Authorization", "Bearer "+tok)
		}
	})

	t.Run("DisabledClient", func(t *testing.T) {
		code := login(t, s, "client_id="+demoClient)
		s.AuthCLI(t, 0, "disable-client", demoClient)
		defer s.AuthCLI(t, 0, "enable-client", demoClient)
		res, v := postJSON(t, s, oauth+"/token", codeRequest(code))
		wantStatus(t, res, v, 401)
		_, b := s.Get(t, oauth+"/clients", 200)
		if len(JSON(t, b).([]any)) != 0 {
			t.Fatalf("disabled client listed: %s", b)
		}
	})
}

var signingKey = sync.OnceValue(func() *rsa.PrivateKey {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		panic(err)
	}
	return k
})

// With another -auth-prefix, discovery names the paths the gateway serves,
// and a client that follows it reaches them.
func TestAuthDiscoveryUnderAnotherPrefix(t *testing.T) {
	t.Parallel()
	s := NewStack(t, Options{GatewayArgs: []string{"-auth-prefix", "/idp"}})
	_, b := s.Get(t, "/.well-known/openid-configuration", 200)
	d := JSON(t, b)
	for f, want := range map[string]string{
		"issuer": Issuer, "authorization_endpoint": Issuer + "/idp/authorize", "token_endpoint": Issuer + "/idp/token",
		"jwks_uri": Issuer + "/idp/jwks", "userinfo_endpoint": Issuer + "/idp/userinfo",
	} {
		if got := field(t, d, f); got != want {
			t.Errorf("%s = %v, want %s", f, got, want)
		}
	}
	_, b = s.Get(t, strings.TrimPrefix(field(t, d, "jwks_uri").(string), Issuer), 200)
	if field(t, JSON(t, b), "keys", 0, "kty") != "RSA" {
		t.Fatalf("jwks under /idp = %s", b)
	}
	res, v := postJSON(t, s, strings.TrimPrefix(field(t, d, "token_endpoint").(string), Issuer), `{}`)
	wantStatus(t, res, v, 400)
	s.Get(t, "/oauth2/jwks", 404)
}
