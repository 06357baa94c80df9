package login

import (
	"crypto/tls"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"fris.dev/gateway/internal/httpx"
	authv1 "fris.dev/proto/auth/v1"
)

const goodCSRF = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA" // 43 characters of base64url

var hiddenRE = regexp.MustCompile(`<input type="hidden" name="([^"]+)" value="([^"]*)">`)

func hiddenFields(body string) map[string]string {
	out := map[string]string{}
	for _, m := range hiddenRE.FindAllStringSubmatch(body, -1) {
		out[m[1]] = m[2]
	}
	return out
}

func checkSecurityHeaders(t *testing.T, h http.Header) {
	t.Helper()
	csp := h.Get("Content-Security-Policy")
	for _, want := range []string{"default-src 'none'", "form-action 'self'", "frame-ancestors 'none'", "base-uri 'none'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("CSP %q lacks %q", csp, want)
		}
	}
	for k, want := range map[string]string{"X-Frame-Options": "DENY", "Referrer-Policy": "no-referrer", "Cache-Control": "no-store", "X-Content-Type-Options": "nosniff"} {
		if got := h.Get(k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
}

func newHandler(f *fakeAuth) *Handler {
	return New(Config{Client: f, Prefix: "/oauth2", MaxForm: 4096})
}

func TestShow(t *testing.T) {
	q := url.Values{"client_id": {"c1"}, "redirect_uri": {registered}, "state": {`s"<x>`}, "code_challenge": {"ch"},
		"code_challenge_method": {"S256"}, "scope": {"openid mdr:x"}, "nonce": {"n1"}, "response_type": {"code"}}
	for _, tc := range []struct {
		name       string
		query      string
		cookie     string
		authErr    error
		wantStatus int
		wantText   string
		authorizes int
	}{
		{name: "login page", query: q.Encode(), wantStatus: 200, wantText: "Client &lt;One&gt;", authorizes: 1},
		{name: "reuses the cookie token", query: q.Encode(), cookie: goodCSRF, wantStatus: 200, authorizes: 1},
		{name: "unknown client", query: "client_id=nope&redirect_uri=https://evil.example/", wantStatus: 404, wantText: "Unknown client.", authorizes: 1},
		{name: "unregistered redirect", query: "client_id=c1&redirect_uri=https://evil.example/steal", wantStatus: 400, wantText: "Redirect_uri is not registered", authorizes: 1},
		{name: "plain PKCE", query: "client_id=c1&code_challenge=x&code_challenge_method=plain", wantStatus: 400, wantText: "plain is not supported", authorizes: 1},
		{name: "other response type", query: "client_id=c1&response_type=token&redirect_uri=https://evil.example/", wantStatus: 400, wantText: "response_type=code", authorizes: 0},
		{name: "repeated parameter", query: "client_id=c1&state=a&state=b", wantStatus: 400, wantText: "state was sent more than once", authorizes: 0},
		{name: "service down", query: "client_id=c1", authErr: status.Error(codes.Unavailable, "connection refused"), wantStatus: 503, wantText: "temporarily not possible", authorizes: 1},
		{name: "service bug", query: "client_id=c1", authErr: status.Error(codes.Internal, "db at 10.0.0.1 broke"), wantStatus: 500, wantText: "temporarily not possible", authorizes: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeAuth{authErr: tc.authErr}
			req := httptest.NewRequest("GET", "/oauth2/authorize?"+tc.query, nil)
			if tc.cookie != "" {
				req.AddCookie(&http.Cookie{Name: CSRFCookie, Value: tc.cookie})
			}
			rec := httptest.NewRecorder()
			newHandler(f).ServeHTTP(rec, req)
			body := rec.Body.String()
			if rec.Code != tc.wantStatus || !strings.Contains(body, tc.wantText) {
				t.Fatalf("%d, want %d with %q:\n%s", rec.Code, tc.wantStatus, tc.wantText, body)
			}
			checkSecurityHeaders(t, rec.Header())
			if rec.Header().Get("Content-Type") != "text/html; charset=utf-8" {
				t.Fatalf("Content-Type %q", rec.Header().Get("Content-Type"))
			}
			if rec.Header().Get("Location") != "" {
				t.Fatal("redirected")
			}
			if n, _ := f.counts(); n != tc.authorizes {
				t.Fatalf("%d Authorize calls, want %d", n, tc.authorizes)
			}
			// Never a link to where the request wanted to go.
			if strings.Contains(body, "evil.example") && strings.Contains(body, `href="https://evil`) {
				t.Fatal("page links to the unvalidated redirect URI")
			}
			for _, want := range []string{`<html lang="en">`, "<main>", "<h1>"} {
				if !strings.Contains(body, want) {
					t.Errorf("page lacks %s", want)
				}
			}
			if strings.Contains(body, "10.0.0.1") {
				t.Fatal("internal error text shown")
			}
			if tc.wantStatus != 200 {
				if !strings.Contains(body, `role="alert"`) {
					t.Fatal("error not announced")
				}
				return
			}
			// The login page proper.
			for _, want := range []string{`<label for="email">`, `<label for="password">`, `id="email"`, `id="password"`,
				`autocomplete="username"`, `autocomplete="current-password"`, `method="post" action="/oauth2/authorize"`, ":focus-visible"} {
				if !strings.Contains(body, want) {
					t.Errorf("page lacks %s", want)
				}
			}
			csp := rec.Header().Get("Content-Security-Policy")
			// One script, the passkey sign-in's, of this origin.
			scripts := strings.ReplaceAll(body, `<script src="/oauth2/passkey.js" defer></script>`, "")
			if strings.Contains(body, `role="alert"`) || strings.Contains(scripts, "<script") || strings.Contains(body, "http://") {
				t.Error("unexpected alert, script or external resource")
			}
			if !strings.Contains(csp, "script-src 'self';") || !strings.Contains(body, `data-begin="/oauth2/passkey"`) {
				t.Errorf("passkey sign-in: CSP %q", csp)
			}
			nonce := regexp.MustCompile(`<style nonce="([^"]+)">`).FindStringSubmatch(body)
			if nonce == nil || !strings.Contains(csp, "style-src 'nonce-"+nonce[1]+"'") {
				t.Fatalf("style nonce %v not in CSP %q", nonce, csp)
			}
			if !strings.Contains(csp, "form-action 'self' https://client.example;") {
				t.Fatalf("CSP form-action: %q", csp)
			}
			fields := hiddenFields(body)
			res := rec.Result()
			var cookie *http.Cookie
			for _, c := range res.Cookies() {
				if c.Name == CSRFCookie {
					cookie = c
				}
			}
			if cookie == nil || !cookie.HttpOnly || cookie.SameSite != http.SameSiteStrictMode || cookie.Path != "/oauth2" || cookie.Secure {
				t.Fatalf("CSRF cookie %+v", cookie)
			}
			if fields[CSRFField] != cookie.Value || !wellFormed(cookie.Value) {
				t.Fatalf("CSRF field %q, cookie %q", fields[CSRFField], cookie.Value)
			}
			if tc.cookie != "" && cookie.Value != tc.cookie {
				t.Fatal("existing token not reused")
			}
			for name, v := range q {
				if got := htmlUnescape(fields[name]); got != v[0] {
					t.Errorf("hidden %s = %q, want %q", name, got, v[0])
				}
			}
			want := &authv1.AuthorizeRequest{ClientId: "c1", RedirectUri: registered, CodeChallenge: "ch", CodeChallengeMethod: "S256", Scope: "openid mdr:x", Nonce: "n1"}
			if !proto.Equal(f.authorizes[0], want) {
				t.Fatalf("Authorize got %v", f.authorizes[0])
			}
		})
	}
}

func htmlUnescape(s string) string {
	r := strings.NewReplacer("&#34;", `"`, "&lt;", "<", "&gt;", ">", "&amp;", "&", "&#39;", "'", "&#43;", "+")
	return r.Replace(s)
}

func TestSubmit(t *testing.T) {
	base := url.Values{"client_id": {"c1"}, "redirect_uri": {registered}, "state": {"st ate&1"}, "code_challenge": {"ch"},
		"code_challenge_method": {"S256"}, "response_type": {"code"}, CSRFField: {goodCSRF}, "email": {"ada@example.org"}, "password": {"right"}}
	with := func(kv ...string) url.Values {
		v := url.Values{}
		for k, x := range base {
			v[k] = append([]string(nil), x...)
		}
		for i := 0; i+1 < len(kv); i += 2 {
			if kv[i+1] == "" {
				v.Del(kv[i])
			} else {
				v.Set(kv[i], kv[i+1])
			}
		}
		return v
	}
	for _, tc := range []struct {
		name         string
		form         url.Values
		rawBody      string
		contentType  string
		cookie       string
		site         string
		redirect     string // fake's redirect_uri
		loginErr     error
		wantStatus   int
		wantLocation string
		wantText     string
		logins       int
	}{
		{name: "signs in", form: base, cookie: goodCSRF, wantStatus: 302,
			wantLocation: registered + "?code=the-code&state=st+ate%261", logins: 1},
		{name: "same-origin fetch metadata", form: base, cookie: goodCSRF, site: "same-origin", wantStatus: 302,
			wantLocation: registered + "?code=the-code&state=st+ate%261", logins: 1},
		{name: "no state", form: with("state", ""), cookie: goodCSRF, wantStatus: 302, wantLocation: registered + "?code=the-code", logins: 1},
		{name: "keeps the redirect URI's query", form: with("redirect_uri", registered+"?x=1&y=a%20b&flag"), cookie: goodCSRF, wantStatus: 302,
			wantLocation: registered + "?x=1&y=a%20b&flag&code=the-code&state=st+ate%261", logins: 1},
		{name: "replaces code and state in the query, drops the fragment", form: with("redirect_uri", registered+"?code=old&x=1&state=old"),
			redirect: registered + "?code=old&x=1&state=old#frag", cookie: goodCSRF, wantStatus: 302,
			wantLocation: registered + "?x=1&code=the-code&state=st+ate%261", logins: 1},
		{name: "goes where the service says, not the form", form: with("redirect_uri", ""), redirect: "https://client.example/registered", cookie: goodCSRF,
			wantStatus: 302, wantLocation: "https://client.example/registered?code=the-code&state=st+ate%261", logins: 1},
		{name: "app scheme", form: base, redirect: "com.example.app:/cb", cookie: goodCSRF, wantStatus: 302,
			wantLocation: "com.example.app:/cb?code=the-code&state=st+ate%261", logins: 1},

		{name: "wrong password", form: with("password", "Tr0ub4dor&3"), cookie: goodCSRF, wantStatus: 401, wantText: WrongCredentials, logins: 1},
		{name: "unknown email", form: with("email", "nobody@example.org", "password", "Tr0ub4dor&3"), cookie: goodCSRF, wantStatus: 401, wantText: WrongCredentials, logins: 1},
		{name: "no password", form: with("password", ""), cookie: goodCSRF, wantStatus: 400, wantText: MissingFields, logins: 0},
		{name: "no CSRF cookie", form: base, wantStatus: 400, wantText: "expired", logins: 0},
		{name: "no CSRF field", form: with(CSRFField, ""), cookie: goodCSRF, wantStatus: 400, wantText: "expired", logins: 0},
		{name: "CSRF mismatch", form: with(CSRFField, "BAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"), cookie: goodCSRF, wantStatus: 400, wantText: "expired", logins: 0},
		{name: "CSRF both empty-ish", form: with(CSRFField, "x"), cookie: "x", wantStatus: 400, wantText: "expired", logins: 0},
		{name: "cross-site post", form: base, cookie: goodCSRF, site: "cross-site", wantStatus: 403, wantText: "another site", logins: 0},
		{name: "same-site post", form: base, cookie: goodCSRF, site: "same-site", wantStatus: 403, wantText: "another site", logins: 0},
		{name: "not a form", rawBody: `{"email":"x"}`, contentType: "application/json", cookie: goodCSRF, wantStatus: 415, logins: 0},
		{name: "form too large", rawBody: "email=" + strings.Repeat("a", 5000), cookie: goodCSRF, wantStatus: 413, logins: 0},
		{name: "repeated field", rawBody: base.Encode() + "&redirect_uri=https://evil.example/", cookie: goodCSRF, wantStatus: 400, wantText: "more than once", logins: 0},
		{name: "unregistered redirect", form: with("redirect_uri", "https://evil.example/steal"), cookie: goodCSRF, wantStatus: 400, wantText: "not registered", logins: 1},
		{name: "client gone", form: base, cookie: goodCSRF, loginErr: status.Error(codes.NotFound, "unknown client"), wantStatus: 404, wantText: "Unknown client.", logins: 1},
		{name: "disabled user", form: base, cookie: goodCSRF, loginErr: status.Error(codes.PermissionDenied, "this account is disabled"), wantStatus: 403, wantText: "This account is disabled.", logins: 1},
		{name: "service returns a script URI", form: base, redirect: "javascript:alert(1)", cookie: goodCSRF, wantStatus: 502, logins: 1},
		{name: "service returns a relative URI", form: base, redirect: "/cb", cookie: goodCSRF, wantStatus: 502, logins: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeAuth{redirect: tc.redirect, loginErr: tc.loginErr}
			body := tc.rawBody
			if body == "" {
				body = tc.form.Encode()
			}
			req := httptest.NewRequest("POST", "/oauth2/authorize", strings.NewReader(body))
			ct := tc.contentType
			if ct == "" {
				ct = "application/x-www-form-urlencoded"
			}
			req.Header.Set("Content-Type", ct)
			if tc.site != "" {
				req.Header.Set("Sec-Fetch-Site", tc.site)
			}
			if tc.cookie != "" {
				req.AddCookie(&http.Cookie{Name: CSRFCookie, Value: tc.cookie})
			}
			rec := httptest.NewRecorder()
			newHandler(f).ServeHTTP(rec, req)
			out := rec.Body.String()
			if rec.Code != tc.wantStatus {
				t.Fatalf("%d, want %d:\n%s", rec.Code, tc.wantStatus, out)
			}
			if got := rec.Header().Get("Location"); got != tc.wantLocation {
				t.Fatalf("Location %q, want %q", got, tc.wantLocation)
			}
			if tc.wantText != "" && !strings.Contains(out, tc.wantText) {
				t.Fatalf("body lacks %q:\n%s", tc.wantText, out)
			}
			checkSecurityHeaders(t, rec.Header())
			if _, n := f.counts(); n != tc.logins {
				t.Fatalf("%d Login calls, want %d", n, tc.logins)
			}
			if strings.Contains(out, `href="https://evil`) || strings.Contains(out, "right") && tc.form.Get("password") == "right" && rec.Code != 302 {
				t.Fatal("page links elsewhere or echoes the password")
			}
			switch {
			case rec.Code == 302:
				if f.logins[0].GetEmail() != "ada@example.org" || f.logins[0].GetRequest().GetClientId() != "c1" ||
					f.logins[0].GetRequest().GetCodeChallenge() != "ch" {
					t.Fatalf("Login got %v", f.logins[0])
				}
				// The CSRF cookie cleared, the known-device cookie set.
				if c := rec.Result().Cookies(); len(c) != 2 || c[0].Name != CSRFCookie || c[0].MaxAge >= 0 || c[1].Name != DeviceCookie {
					t.Fatalf("CSRF cookie not cleared, or no device cookie: %v", c)
				}
			case rec.Code == 401 || tc.wantText == MissingFields:
				// The form again: the email kept, the password not, no hint
				// which one was wrong.
				fields := hiddenFields(out)
				if fields[CSRFField] == "" || fields["client_id"] != "c1" || !strings.Contains(out, `role="alert"`) {
					t.Fatalf("form not shown again:\n%s", out)
				}
				if email := tc.form.Get("email"); !strings.Contains(out, `value="`+email+`"`) {
					t.Fatalf("email %q not kept", email)
				}
				if pw := tc.form.Get("password"); pw != "" && (strings.Contains(out, pw) || strings.Contains(out, "Tr0ub4dor&amp;3")) {
					t.Fatal("password echoed")
				}
				if !strings.Contains(out, `aria-describedby="login-error"`) {
					t.Fatal("inputs not tied to the error")
				}
			case tc.wantText == "expired":
				// A way back that stays on this origin.
				if !strings.Contains(out, `href="/oauth2/authorize?`) {
					t.Fatalf("no restart link:\n%s", out)
				}
			}
		})
	}
}

func TestWrongPasswordPageSameForUnknownEmail(t *testing.T) {
	page := func(email, password string) string {
		form := url.Values{"client_id": {"c1"}, CSRFField: {goodCSRF}, "email": {email}, "password": {password}}
		req := httptest.NewRequest("POST", "/oauth2/authorize", strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.AddCookie(&http.Cookie{Name: CSRFCookie, Value: goodCSRF})
		rec := httptest.NewRecorder()
		newHandler(&fakeAuth{}).ServeHTTP(rec, req)
		nonce := regexp.MustCompile(`nonce="[^"]+"`)
		return rec.Result().Status + nonce.ReplaceAllString(strings.ReplaceAll(rec.Body.String(), email, "EMAIL"), "")
	}
	if a, b := page("ada@example.org", "wrong"), page("eve@example.org", "wrong"); a != b {
		t.Fatalf("pages differ:\n%s\n---\n%s", a, b)
	}
}

func TestRedirect(t *testing.T) {
	for _, tc := range []struct{ uri, code, state, want string }{
		{"https://c.example/cb", "c", "s", "https://c.example/cb?code=c&state=s"},
		{"https://c.example/cb?", "c", "", "https://c.example/cb?code=c"},
		{"https://c.example/cb?a=1&a=2", "c/+=", "s s", "https://c.example/cb?a=1&a=2&code=c%2F%2B%3D&state=s+s"},
		{"https://c.example/cb?co%64e=x&b=2", "c", "s", "https://c.example/cb?b=2&code=c&state=s"},
		{"http://127.0.0.1:9000/cb#f", "c", "s", "http://127.0.0.1:9000/cb?code=c&state=s"},
		{"com.example.app:/oauth", "c", "s", "com.example.app:/oauth?code=c&state=s"},
	} {
		got, err := Redirect(tc.uri, tc.code, tc.state)
		if err != nil || got != tc.want {
			t.Errorf("Redirect(%q) = %q, %v; want %q", tc.uri, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", "/cb", "//evil.example/cb", "javascript:alert(1)", "JavaScript://x/%0aalert(1)", "data:text/html,x", "https:///cb", "mailto:a@b", "%zz"} {
		if got, err := Redirect(bad, "c", "s"); err == nil {
			t.Errorf("Redirect(%q) = %q, want an error", bad, got)
		}
	}
}

func TestFormTarget(t *testing.T) {
	for in, want := range map[string]string{
		"https://client.example/cb?x=1":  "https://client.example",
		"http://127.0.0.1:9000/cb":       "http://127.0.0.1:9000",
		"com.example.app:/cb":            "com.example.app:",
		"/relative":                      "",
		"":                               "",
		"https://a.example;script-src *": "",
	} {
		if got := formTarget(in); got != want {
			t.Errorf("formTarget(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestLanguages: the page follows Accept-Language, a lang parameter
// switches it and is remembered, and the switch link keeps the
// authorization request.
func TestLanguages(t *testing.T) {
	q := url.Values{"client_id": {"c1"}, "state": {"s1"}, "code_challenge": {"ch"}, "code_challenge_method": {"S256"}}
	for _, tc := range []struct {
		name, query, accept, cookie string
		wantLang, wantText          string
		wantCookie                  string
	}{
		{name: "english default", query: q.Encode(), wantLang: "en", wantText: "Email address"},
		{name: "german browser", query: q.Encode(), accept: "de-DE,de;q=0.9", wantLang: "de", wantText: "E-Mail-Adresse"},
		{name: "switched to english", query: q.Encode() + "&lang=en", accept: "de", wantLang: "en", wantText: "Password", wantCookie: "en"},
		{name: "remembered german", query: q.Encode(), accept: "en", cookie: "de", wantLang: "de", wantText: "Passwort"},
		{name: "german error page", query: "client_id=c1&state=a&state=b", accept: "de", wantLang: "de", wantText: "Anmelden ist nicht möglich"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest("GET", "/oauth2/authorize?"+tc.query, nil)
			if tc.accept != "" {
				req.Header.Set("Accept-Language", tc.accept)
			}
			if tc.cookie != "" {
				req.AddCookie(&http.Cookie{Name: "lang", Value: tc.cookie})
			}
			rec := httptest.NewRecorder()
			newHandler(&fakeAuth{}).ServeHTTP(rec, req)
			body := rec.Body.String()
			if !strings.Contains(body, `<html lang="`+tc.wantLang+`">`) || !strings.Contains(body, tc.wantText) {
				t.Fatalf("want lang %s and %q:\n%s", tc.wantLang, tc.wantText, body)
			}
			var got string
			for _, c := range rec.Result().Cookies() {
				if c.Name == "lang" {
					got = c.Value
				}
			}
			if got != tc.wantCookie {
				t.Fatalf("lang cookie %q, want %q", got, tc.wantCookie)
			}
			if rec.Code == 200 {
				other := map[string]string{"en": "de", "de": "en"}[tc.wantLang]
				m := regexp.MustCompile(`href="([^"]*lang=` + other + `[^"]*)"`).FindStringSubmatch(body)
				if m == nil {
					t.Fatalf("no switch to %s:\n%s", other, body)
				}
				u, _ := url.Parse(htmlUnescape(m[1]))
				if u.Path != "/oauth2/authorize" || u.Query().Get("client_id") != "c1" || u.Query().Get("state") != "s1" || u.Query().Get("code_challenge") != "ch" {
					t.Fatalf("switch link %q loses the request", m[1])
				}
			}
		})
	}
	if m := messages.Missing(); len(m) > 0 {
		t.Errorf("texts missing: %v", m)
	}
}

// A successful sign-in leaves the known-device cookie (HttpOnly, Lax, the
// auth prefix, Secure over TLS); the next sign-in forwards it to the auth
// service; a malformed cookie is not forwarded.
func TestDeviceCookie(t *testing.T) {
	f := &fakeAuth{}
	h := newHandler(f)
	form := url.Values{"client_id": {"c1"}, CSRFField: {goodCSRF}, "email": {"ada@example.org"}, "password": {"right"}}
	post := func(device string, overTLS bool) *http.Response {
		req := httptest.NewRequest(http.MethodPost, "/oauth2/authorize", strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.AddCookie(&http.Cookie{Name: CSRFCookie, Value: goodCSRF})
		if device != "" {
			req.AddCookie(&http.Cookie{Name: DeviceCookie, Value: device})
		}
		if overTLS {
			req.TLS = &tls.ConnectionState{}
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Result()
	}
	res := post("", false)
	var got *http.Cookie
	for _, c := range res.Cookies() {
		if c.Name == DeviceCookie {
			got = c
		}
	}
	if res.StatusCode != 302 || got == nil {
		t.Fatalf("sign-in = %d, device cookie %v", res.StatusCode, got)
	}
	if !got.HttpOnly || got.SameSite != http.SameSiteLaxMode || got.Path != "/oauth2" || got.Secure || got.MaxAge < 29*24*3600 {
		t.Fatalf("device cookie %+v: want HttpOnly, Lax, /oauth2, not Secure over http, a month", got)
	}
	const mine = "EEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEE"
	res = post(mine, true)
	for _, c := range res.Cookies() {
		if c.Name == DeviceCookie && (!c.Secure || c.Value != mine) {
			t.Fatalf("over TLS: device cookie %+v, want Secure and the forwarded token", c)
		}
	}
	post("not a token", false)
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.logins) != 3 || f.logins[0].GetDevice() != "" || f.logins[1].GetDevice() != mine || f.logins[2].GetDevice() != "" {
		t.Fatalf("devices forwarded: %q, %q, %q; want none, the cookie's, none", f.logins[0].GetDevice(), f.logins[1].GetDevice(), f.logins[2].GetDevice())
	}
}

// TestSubmitNotUTF8: a form whose text is not UTF-8, which the gateway's
// body check (httpx.CheckBodyText) fails, is the page's 400 saying so,
// and no service is called (before: the gRPC client's marshaling error,
// a 500).
func TestSubmitNotUTF8(t *testing.T) {
	for _, path := range []string{"/oauth2/authorize", "/oauth2/forgot", "/oauth2/reset", "/oauth2/verify", "/oauth2/passkey"} {
		f := &fakeAuth{}
		form := url.Values{"client_id": {"c1"}, CSRFField: {goodCSRF}, "password": {"right"}, "token": {"t"}}
		req := httptest.NewRequest("POST", path, strings.NewReader(form.Encode()+"&email=%ff"))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.AddCookie(&http.Cookie{Name: CSRFCookie, Value: goodCSRF})
		rec := httptest.NewRecorder()
		httpx.CheckBodyText(func(string) bool { return false }, newHandler(f)).ServeHTTP(rec, req)
		if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), NotUTF8) {
			t.Errorf("%s: %d\n%s", path, rec.Code, rec.Body)
		}
		if a, l := f.counts(); a+l != 0 {
			t.Errorf("%s: the service was called (%d authorize, %d login)", path, a, l)
		}
	}
}
