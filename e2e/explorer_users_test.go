package e2e

import (
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"fris.dev/pkg/identity"
)

const graceEmail, gracePass = "grace@lab.example", "grace-hopper-cobol"

var csrfRE = regexp.MustCompile(`name="csrf_token" value="([^"]+)"`)

// passwordSignIn signs a user in through the login form for the demo
// client: the code exchange's status and, on success, the access and
// refresh tokens.
func passwordSignIn(t *testing.T, s *Stack, email, password string) (int, string, string) {
	t.Helper()
	c := browser(t)
	form := loginForm(t, s, c, "client_id="+demoClient)
	form.Set("email", email)
	form.Set("password", password)
	res, _ := submit(t, s, c, form)
	if res.StatusCode != http.StatusFound {
		return res.StatusCode, "", ""
	}
	code := regexp.MustCompile(`code=([^&]+)`).FindStringSubmatch(res.Header.Get("Location"))[1]
	res2, v := postJSON(t, s, oauth+"/token", codeRequest(code))
	wantStatus(t, res2, v, 200)
	access, _, refresh := tokens(t, v)
	return res.StatusCode, access, refresh
}

// scopeOf is an access token's scope claim.
func scopeOf(t *testing.T, access string) string {
	t.Helper()
	s, _ := jwtPart(t, access, 1).(map[string]any)["scope"].(string)
	return s
}

// usersForm posts one of the users view's forms (the CSRF token added
// unless the form names one) and returns the status and the page it ends on.
func usersForm(t *testing.T, s *Stack, c *http.Client, csrf, path string, form url.Values) (int, string) {
	t.Helper()
	if _, ok := form["csrf_token"]; !ok {
		form.Set("csrf_token", csrf)
	}
	res, err := c.PostForm(s.URL+"/explorer/operator/users/"+path, form)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, readAll(t, res)
}

// TestExplorerUsers: the users view over HTTP against the real services.
// A user without the operator role is refused; an operator finds users,
// creates one, sees their sign-in, grants scopes that the next sign-in carries, ends the
// user's sessions (a refresh token issued before stops working), disables
// (the user cannot sign in) and enables them; a form without the CSRF
// token is refused; auth audits each change with the operator as actor.
func TestExplorerUsers(t *testing.T) {
	t.Parallel()
	s := explorerStack(t, Options{})
	s.AuthCLI(t, 0, "create-client", "-client-id", demoClient, "-secret", demoSecret, "-name", "E2E Client", "-redirect-url", callback)

	researcher := signInHTTP(t, s)
	if code, body := getPage(t, researcher, s.URL+"/explorer/operator/users"); code != http.StatusForbidden ||
		!strings.Contains(body, "lacks the role (scope fris:operator or fris:user-admin)") {
		t.Fatalf("non-operator: %d\n%s", code, body)
	}

	s.AuthCLI(t, 0, "set-scopes", "-confirm", "-scopes", identity.ScopeOperator, demoEmail)
	op := userID(t, s, demoEmail)
	c := signInHTTP(t, s)
	code, body := getPage(t, c, s.URL+"/explorer/operator/users?q=lovelace")
	if code != 200 || !strings.Contains(body, demoEmail) || !strings.Contains(body, "1–1 of 1") {
		t.Fatalf("search: %d\n%s", code, body)
	}
	m := csrfRE.FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no CSRF token on the users page:\n%s", body)
	}
	csrf := m[1]

	// Without the token: refused, nothing created.
	if code, _ := usersForm(t, s, c, csrf, "create", url.Values{"csrf_token": {""}, "email": {graceEmail}}); code != http.StatusForbidden {
		t.Errorf("create without the CSRF token: %d", code)
	}
	if _, body := getPage(t, c, s.URL+"/explorer/operator/users?q=grace"); !strings.Contains(body, "No user matches.") {
		t.Errorf("a refused form created the user:\n%s", body)
	}

	code, body = usersForm(t, s, c, csrf, "create", url.Values{"email": {graceEmail}, "name": {"Grace Hopper"}, "role": {identity.ScopeResearcher}})
	if code != 200 || !strings.Contains(body, graceEmail+" is created.") || !strings.Contains(body, "Grace Hopper") {
		t.Fatalf("create: %d\n%s", code, body)
	}
	waitAudit(t, s.Auth, "auth.admin.CreateUser", map[string]any{"actor": op, "email": graceEmail, "outcome": "success"})
	if _, body := getPage(t, c, s.URL+"/explorer/operator/users?q=hopper"); !strings.Contains(body, graceEmail) {
		t.Errorf("search by name does not find the new user:\n%s", body)
	}
	// The user sets a password (here the CLI stands in for the reset flow).
	s.AuthCLI(t, 0, "set-password", "-password", gracePass, graceEmail)
	st, access, refresh := passwordSignIn(t, s, graceEmail, gracePass)
	if st != http.StatusFound || !strings.Contains(scopeOf(t, access), identity.ScopeResearcher) {
		t.Fatalf("new user's sign-in: %d, scope %q", st, scopeOf(t, access))
	}
	// The sign-in is recorded, with the address the gateway saw.
	if _, body := getPage(t, c, s.URL+"/explorer/operator/users/user?email="+url.QueryEscape(graceEmail)); !strings.Contains(body, "from <code>127.0.0.1</code>") {
		t.Errorf("the user's page lacks the last sign-in:\n%s", body)
	}

	// Scopes: the next sign-in carries them. Nobody has confirmed the
	// address yet, so the grant asks to be confirmed first.
	if code, body := usersForm(t, s, c, csrf, "scopes", url.Values{"email": {graceEmail}, "role": {identity.ScopeUserSearch}, "other": {"mdr:secret"}}); code != http.StatusConflict ||
		!strings.Contains(body, "its address is not verified") || !strings.Contains(body, `name="confirm" value="yes"`) {
		t.Fatalf("unconfirmed scopes: %d\n%s", code, body)
	}
	if code, body := usersForm(t, s, c, csrf, "scopes", url.Values{"email": {graceEmail}, "role": {identity.ScopeUserSearch}, "other": {"mdr:secret"}, "confirm": {"yes"}}); code != 200 ||
		!strings.Contains(body, "The roles and scopes of "+graceEmail+" are saved") {
		t.Fatalf("scopes: %d\n%s", code, body)
	}
	waitAudit(t, s.Auth, "auth.admin.SetUserScopes", map[string]any{"actor": op, "email": graceEmail, "outcome": "success"})
	_, access2, _ := passwordSignIn(t, s, graceEmail, gracePass)
	if sc := scopeOf(t, access2); !strings.Contains(sc, identity.ScopeUserSearch) || !strings.Contains(sc, "mdr:secret") || strings.Contains(sc, identity.ScopeResearcher) {
		t.Errorf("scope after the change: %q", sc)
	}

	// Ending the sessions needs the confirmation; then the refresh token
	// issued before is refused.
	if code, _ := usersForm(t, s, c, csrf, "end-sessions", url.Values{"email": {graceEmail}}); code != http.StatusBadRequest {
		t.Errorf("end sessions unconfirmed: %d", code)
	}
	if code, body := usersForm(t, s, c, csrf, "end-sessions", url.Values{"email": {graceEmail}, "confirm": {"yes"}}); code != 200 ||
		!strings.Contains(body, "Every session of "+graceEmail+" is ended.") {
		t.Fatalf("end sessions: %d\n%s", code, body)
	}
	waitAudit(t, s.Auth, "auth.admin.RevokeUser", map[string]any{"actor": op, "email": graceEmail, "outcome": "success"})
	if res, v := postJSON(t, s, oauth+"/token", `{"refresh_token":"`+refresh+`"}`); res.StatusCode == 200 {
		t.Errorf("a refresh token issued before the sessions ended still works: %v", v)
	}

	// Disable: the user cannot sign in; enable: they can again.
	if code, _ := usersForm(t, s, c, csrf, "disable", url.Values{"email": {graceEmail}}); code != http.StatusBadRequest {
		t.Errorf("disable unconfirmed: %d", code)
	}
	if code, body := usersForm(t, s, c, csrf, "disable", url.Values{"email": {graceEmail}, "confirm": {"yes"}}); code != 200 ||
		!strings.Contains(body, graceEmail+" is disabled.") {
		t.Fatalf("disable: %d\n%s", code, body)
	}
	waitAudit(t, s.Auth, "auth.admin.SetUserDisabled", map[string]any{"actor": op, "email": graceEmail, "disabled": "true", "outcome": "success"})
	if st, _, _ := passwordSignIn(t, s, graceEmail, gracePass); st == http.StatusFound {
		t.Error("a disabled user signed in")
	}
	if code, body := usersForm(t, s, c, csrf, "enable", url.Values{"email": {graceEmail}}); code != 200 || !strings.Contains(body, graceEmail+" is enabled.") {
		t.Fatalf("enable: %d\n%s", code, body)
	}
	if st, _, _ := passwordSignIn(t, s, graceEmail, gracePass); st != http.StatusFound {
		t.Errorf("the enabled user cannot sign in: %d", st)
	}

	// The researcher's session (no operator role in its token) cannot use
	// the forms either, even with a token of its own page.
	if code, _ := usersForm(t, s, researcher, csrf, "disable", url.Values{"email": {graceEmail}, "confirm": {"yes"}}); code != http.StatusForbidden {
		t.Errorf("non-operator's disable: %d", code)
	}
}

// TestExplorerUsersBrowser: the users view in Chromium. An operator
// creates a user, finds them by keyboard, reaches the table's sort links
// and the user's page by keyboard alone, disables them there (the browser
// holds the form back until the confirmation is ticked), in English and
// German, on a phone-sized screen too (the table scrolls in its region,
// the page does not); axe-core finds no serious issue, light and dark.
func TestExplorerUsersBrowser(t *testing.T) {
	t.Parallel()
	p := newPage(t)
	s := explorerStack(t, Options{})
	s.AuthCLI(t, 0, "set-scopes", "-confirm", "-scopes", identity.ScopeOperator, demoEmail)
	p.signIn(s)
	p.do("open the users view", chromedp.Navigate(s.URL+"/explorer/operator/users"), chromedp.WaitVisible(chromedp.ID("users-q")))
	p.wantText("#users-heading + p", "1–1 of 1")
	p.do("open the creation", chromedp.Click(chromedp.CSS(`details.create summary`)), chromedp.WaitVisible(chromedp.ID("new-email")))
	p.do("create a user", chromedp.SendKeys(chromedp.ID("new-email"), graceEmail), chromedp.SendKeys(chromedp.ID("new-name"), "Grace Hopper"),
		chromedp.Click(chromedp.CSS(`label[for="new-role-broker:researcher"]`)),
		chromedp.Click(chromedp.CSS(`form[action$="/users/create"] button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`#op-status .done[data-done="created"]`)))
	p.wantText("#op-status", graceEmail+" is created.")
	p.do("the whole list", chromedp.Navigate(s.URL+"/explorer/operator/users"), chromedp.WaitVisible(chromedp.CSS(`table.users`)))
	// The roles are in the row, not behind a disclosure.
	p.wantText(`table.users tbody tr:has(a[href*="grace"]) td.roles`, "broker:researcher")
	p.check("operator-users")

	// By keyboard: the table's region, a sort link (followed), a user.
	p.do("focus the search", chromedp.Focus(chromedp.ID("users-q")))
	p.tabTo(`.table-scroll[role="region"]`)
	p.tabTo(`th[data-col="name"] a`)
	p.do("sort by name", chromedp.KeyEvent(kb.Enter), chromedp.WaitVisible(chromedp.CSS(`th[data-col="name"][aria-sort="ascending"]`)))
	if rows := p.count(`table.users tbody tr`); rows != 2 {
		t.Errorf("%d rows, want 2", rows)
	}
	first := p.text(`table.users tbody tr:first-child th`)
	p.do("the other way", chromedp.Focus(chromedp.CSS(`th[data-col="name"] a`)), chromedp.KeyEvent(kb.Enter),
		chromedp.WaitVisible(chromedp.CSS(`th[data-col="name"][aria-sort="descending"]`)))
	if again := p.text(`table.users tbody tr:first-child th`); again == first {
		t.Errorf("both orders start with %q", first)
	}

	p.do("search by keyboard", chromedp.Focus(chromedp.ID("users-q")),
		chromedp.SendKeys(chromedp.ID("users-q"), "hopper"+kb.Enter), chromedp.WaitVisible(chromedp.CSS(`#users-q[value="hopper"]`)), chromedp.WaitVisible(chromedp.CSS(`table.users`)))
	p.wantText("table.users tbody th", graceEmail)
	if n := p.count(`table.users tbody tr`); n != 1 {
		t.Errorf("the search shows %d users, want 1", n)
	}
	if loc := p.location(); !strings.Contains(loc, "sort=name") || !strings.Contains(loc, "dir=desc") {
		t.Errorf("the search dropped the order: %s", loc)
	}
	p.tabTo(`a.user`)
	p.do("open the user by keyboard", chromedp.KeyEvent(kb.Enter), chromedp.WaitVisible(chromedp.CSS(`form[action$="/scopes"]`)))
	p.wantText("h1", graceEmail)
	p.check("operator-user")
	p.do("open the disabling", chromedp.Click(chromedp.CSS(`details:has(form[action$="/disable"]) summary`)),
		chromedp.WaitVisible(chromedp.CSS(`form[action$="/disable"] button`)))
	p.do("disable unconfirmed", chromedp.Click(chromedp.CSS(`form[action$="/disable"] button`)))
	if valid, err := chromedp.Run(p.ctx, chromedp.Evaluate[bool](`document.querySelector('form[action$="/disable"]').checkValidity()`)); err != nil || valid {
		t.Errorf("the unconfirmed disabling form is valid (%v)", err)
	}
	p.do("confirm and disable", chromedp.Click(chromedp.CSS(`form[action$="/disable"] input[name=confirm]`)),
		chromedp.Click(chromedp.CSS(`form[action$="/disable"] button`)),
		chromedp.WaitVisible(chromedp.CSS(`#op-status .done[data-done="disabled"]`)))
	p.wantText(`table.users td[data-state]`, "disabled")

	p.do("switch to German", chromedp.Click(chromedp.CSS(`a[hreflang="de"]`)), chromedp.WaitVisible(chromedp.CSS(`html[lang="de"]`)))
	p.wantText("h1", "Benutzer")
	p.wantText(`table.users td[data-state]`, "gesperrt")
	p.wantText(`table.users thead`, "Zweiter Faktor", "Letzte Anmeldung", "Zustand")
	p.check("operator-users-de")

	// Last, as the emulation stays: a phone-sized screen. The table
	// scrolls in its region; the page does not.
	p.do("a 360 px screen", chromedp.EmulateViewport(360, 740, chromedp.EmulateMobile))
	p.do("the whole list", chromedp.Navigate(s.URL+"/explorer/operator/users?lang=en"), chromedp.WaitVisible(chromedp.CSS(`table.users`)))
	p.wantNoOverflow(360)
	p.check("operator-users-360px")
	p.do("the user's page", chromedp.Click(chromedp.CSS(`a.user[href*="grace"]`)), chromedp.WaitVisible(chromedp.CSS(`form[action$="/scopes"]`)))
	p.wantNoOverflow(360)
	p.check("operator-user-360px")
}

// tabTo presses Tab until the focus is on an element matching sel (at
// most 60 times: the page's links before it are fewer).
func (p *page) tabTo(sel string) {
	p.t.Helper()
	for range 60 {
		p.do("tab", chromedp.KeyEvent(kb.Tab))
		on, err := chromedp.Run(p.ctx, chromedp.Evaluate[bool](`document.activeElement !== null && document.activeElement.matches(`+strconv.Quote(sel)+`)`))
		if err != nil {
			p.t.Fatal(err)
		}
		if on {
			return
		}
	}
	p.t.Fatalf("Tab does not reach %s", sel)
}

// wantNoOverflow: the page is no wider than the screen.
func (p *page) wantNoOverflow(px int) {
	p.t.Helper()
	width, err := chromedp.Run(p.ctx, chromedp.Evaluate[int](`document.documentElement.scrollWidth`))
	if err != nil {
		p.t.Fatal(err)
	}
	if width > px {
		p.t.Errorf("%s is %d px wide on a %d px screen", p.location(), width, px)
	}
}
