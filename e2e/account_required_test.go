package e2e

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"fris.dev/pkg/identity"
)

var tempPasswordRE = regexp.MustCompile(`<code id="temp-password" class="secret">([^<]+)</code>`)

// TestRequiredActions over HTTP against the real services: an operator
// sets a temporary password on the console's user page (shown once,
// no-store, audited without it); the user signs in through the OAuth
// authorize flow with it, gets no code but the new-password page, whose
// policy refuses a short one, and with a good one gets the code and the
// tokens; the old password and the temporary one are dead. Then
// bin/auth require-actions verify-email: the sign-in stops with a mailed
// link (auth's log here) until it is followed.
func TestRequiredActions(t *testing.T) {
	t.Parallel()
	s := explorerStack(t, Options{})
	s.AuthCLI(t, 0, "create-client", "-client-id", demoClient, "-secret", demoSecret, "-name", "E2E Client", "-redirect-url", callback)
	s.AuthCLI(t, 0, "set-scopes", "-confirm", "-scopes", identity.ScopeOperator, demoEmail)
	s.AuthCLI(t, 0, "create-user", "-email", graceEmail, "-password", gracePass, "-name", "Grace Hopper", "-email-verified")
	op := userID(t, s, demoEmail)
	c := signInHTTP(t, s)

	code, page := getPage(t, c, s.URL+"/explorer/operator/users/user?email="+url.QueryEscape(graceEmail))
	m := csrfRE.FindStringSubmatch(page)
	if code != 200 || m == nil || !strings.Contains(page, `action="/explorer/operator/users/temporary-password"`) || !strings.Contains(page, `value="change_password"`) {
		t.Fatalf("user page: %d\n%s", code, page)
	}
	csrf := m[1]
	if res, body := postPage(t, c, s.URL+"/explorer/operator/users/temporary-password", "https://evil.example", url.Values{"csrf_token": {csrf}, "email": {graceEmail}, "confirm": {"yes"}}); res.StatusCode != http.StatusForbidden || tempPasswordRE.MatchString(body) {
		t.Fatalf("cross-site temporary password: %d", res.StatusCode)
	}
	res, page := postPage(t, c, s.URL+"/explorer/operator/users/temporary-password", s.URL, url.Values{"csrf_token": {csrf}, "email": {graceEmail}, "confirm": {"yes"}})
	tm := tempPasswordRE.FindStringSubmatch(page)
	if res.StatusCode != 200 || tm == nil || res.Header.Get("Cache-Control") != "no-store" || !strings.Contains(page, "must choose a new password at the next sign-in") ||
		strings.Contains(res.Request.URL.String(), tm[1]) {
		t.Fatalf("temporary password: %d %v\n%s", res.StatusCode, res.Header, page)
	}
	temp := tm[1]
	ev := waitAudit(t, s.Auth, "auth.admin.SetTemporaryPassword", map[string]any{"actor": op, "email": graceEmail, "outcome": "success"})
	for _, p := range []*proc{s.Auth, s.Gateway} {
		if strings.Contains(p.logs(), temp) {
			t.Fatalf("the temporary password is in the %s log (event %v)", p.name, ev)
		}
	}
	if st, _, _ := passwordSignIn(t, s, graceEmail, gracePass); st == http.StatusFound {
		t.Fatal("the old password still signs in")
	}

	// The sign-in with the temporary password: no code, the new-password
	// page; the policy holds; then the code and the tokens.
	b := browser(t)
	form := loginForm(t, s, b, "client_id="+demoClient+"&state=st1")
	form.Set("email", graceEmail)
	form.Set("password", temp)
	res, page = submit(t, s, b, form)
	if res.StatusCode != 200 || res.Header.Get("Location") != "" || !strings.Contains(page, `name="required_new_password"`) || !strings.Contains(page, "requires a new password") {
		t.Fatalf("sign-in with the temporary password: %d %q\n%s", res.StatusCode, res.Header.Get("Location"), page)
	}
	// Each page sets a new CSRF token: the next form is the last page's.
	change := func(pw string) (*http.Response, string) {
		f := hiddenForm(page)
		f.Set("required_new_password", pw)
		f.Set("required_new_password2", pw)
		res, body := submit(t, s, b, f)
		page = body
		return res, body
	}
	if res, body := change("short"); res.StatusCode != 400 || !strings.Contains(body, "at least 12 characters") {
		t.Fatalf("short new password: %d\n%s", res.StatusCode, body)
	}
	if res, body := change(temp); res.StatusCode != 400 || !strings.Contains(body, "other than the current one") {
		t.Fatalf("the temporary password again: %d\n%s", res.StatusCode, body)
	}
	res, _ = change("grace's own new passphrase")
	loc, err := url.Parse(res.Header.Get("Location"))
	if res.StatusCode != http.StatusFound || err != nil || loc.Query().Get("code") == "" || loc.Query().Get("state") != "st1" || !strings.HasPrefix(loc.String(), callback) {
		t.Fatalf("new password: %d %q", res.StatusCode, res.Header.Get("Location"))
	}
	tres, v := postJSON(t, s, oauth+"/token", codeRequest(loc.Query().Get("code")))
	wantStatus(t, tres, v, 200)
	waitAudit(t, s.Auth, "auth.login_change_password", map[string]any{"outcome": "success"})
	if st, _, _ := passwordSignIn(t, s, graceEmail, temp); st == http.StatusFound {
		t.Fatal("the temporary password still signs in")
	}
	if st, access, _ := passwordSignIn(t, s, graceEmail, "grace's own new passphrase"); st != http.StatusFound || access == "" {
		t.Fatalf("the new password: %d", st)
	}

	// verify-email: the sign-in stops with a mailed link until it is
	// followed.
	s.AuthCLI(t, 0, "require-actions", "-actions", "verify-email", graceEmail)
	graceLine := func() string {
		for _, line := range strings.Split(s.AuthCLI(t, 0, "users"), "\n") {
			if strings.Contains(line, graceEmail) {
				return line
			}
		}
		return ""
	}
	if f := strings.Fields(graceLine()); len(f) == 0 || f[len(f)-1] != "verify_email" {
		t.Fatalf("bin/auth users: %q", graceLine())
	}
	stopped := func() {
		t.Helper()
		b := browser(t)
		form := loginForm(t, s, b, "client_id="+demoClient)
		form.Set("email", graceEmail)
		form.Set("password", "grace's own new passphrase")
		res, page := submit(t, s, b, form)
		if res.StatusCode != 200 || res.Header.Get("Location") != "" || !strings.Contains(page, "We have sent you a link") {
			t.Fatalf("sign-in with verify-email required: %d %q\n%s", res.StatusCode, res.Header.Get("Location"), page)
		}
	}
	stopped()
	var link string
	for range 200 {
		if l := loggedLinks(s, "email verification link", graceEmail); len(l) >= 1 {
			link = l[len(l)-1]
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !strings.HasPrefix(link, Issuer+oauth+"/verify?token=") {
		t.Fatalf("verification link %q", link)
	}
	stopped()
	p := from127(t, s, "127.0.0.1", nil)
	target := strings.TrimPrefix(link, Issuer)
	f, _ := p.page(t, target, 200)
	if res, body := p.postForm(t, oauth+"/verify", f); res.StatusCode != 200 || !strings.Contains(string(body), "Your email address is confirmed") {
		t.Fatalf("confirm = %d %s", res.StatusCode, body)
	}
	if st, access, _ := passwordSignIn(t, s, graceEmail, "grace's own new passphrase"); st != http.StatusFound || access == "" {
		t.Fatalf("after the verification: %d", st)
	}
	if f := strings.Fields(graceLine()); len(f) == 0 || f[len(f)-1] != "-" {
		t.Fatalf("bin/auth users after the verification: %q", graceLine())
	}
	// -clear removes what is left; an unknown action is refused.
	s.AuthCLI(t, 0, "require-actions", "-actions", "change-password,add-second-factor", graceEmail)
	if f := strings.Fields(graceLine()); len(f) == 0 || f[len(f)-1] != "change_password,add_second_factor" {
		t.Fatalf("bin/auth users: %q", graceLine())
	}
	s.AuthCLI(t, 0, "require-actions", "-clear", graceEmail)
	if f := strings.Fields(graceLine()); len(f) == 0 || f[len(f)-1] != "-" {
		t.Fatalf("bin/auth users after -clear: %q", graceLine())
	}
	s.AuthCLI(t, 1, "require-actions", "-actions", "dance", graceEmail)
	waitAudit(t, s.Auth, "auth.admin.SetRequiredActions", map[string]any{"actor": "admin-api", "email": graceEmail, "outcome": "success"})
}
