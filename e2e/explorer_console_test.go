package e2e

import (
	"html"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"fris.dev/pkg/identity"
)

// consoleRefs are the console's links and form targets on a page: GET for
// a link, the form's method for a form.
var (
	consoleLinkRE = regexp.MustCompile(`<a [^>]*href="(/explorer/operator/[^"]*)"`)
	consoleFormRE = regexp.MustCompile(`<form [^>]*method="post" action="(/explorer/operator/[^"]*)"`)
)

// crawlConsole walks the console as c (an operator) sees it, from the
// operator home: every page its tabs, links and forms lead to, so a new
// page is found once the console links to it. It returns "METHOD path"
// with a URL (its query kept) for each.
func crawlConsole(t *testing.T, s *Stack, c *http.Client) map[string]string {
	t.Helper()
	found := map[string]string{"GET /explorer/operator/": "/explorer/operator/"}
	queue := []string{"/explorer/operator/"}
	// Each page once, by its path; but each user's page, whose forms
	// depend on the user (enable for a disabled one, disable for another).
	queued := map[string]bool{"/explorer/operator/": true}
	for len(queue) > 0 {
		u := queue[0]
		queue = queue[1:]
		code, body := getPage(t, c, s.URL+u)
		if code != 200 {
			t.Fatalf("operator GET %s: %d\n%s", u, code, body)
		}
		for _, m := range consoleLinkRE.FindAllStringSubmatch(body, -1) {
			link := html.UnescapeString(m[1])
			p, _, _ := strings.Cut(link, "?")
			if _, ok := found["GET "+p]; !ok {
				found["GET "+p] = link
			}
			key := p
			if p == "/explorer/operator/users/user" {
				key = link
			}
			if !queued[key] {
				queued[key] = true
				queue = append(queue, link)
			}
		}
		for _, m := range consoleFormRE.FindAllStringSubmatch(body, -1) {
			found["POST "+html.UnescapeString(m[1])] = html.UnescapeString(m[1])
		}
	}
	return found
}

// TestConsoleRefusedEverywhere: every console page and form an operator
// reaches answers a signed-in researcher 403 with the reason (the role it
// lacks), and a user administrator too on each page that is not the users
// view's.
func TestConsoleRefusedEverywhere(t *testing.T) {
	t.Parallel()
	s := operatorStack(t)
	s.AuthCLI(t, 0, "create-client", "-client-id", demoClient, "-secret", demoSecret, "-name", "E2E Client", "-redirect-url", callback)
	registerBank(t, s, "biobank@charite.example") // the banks view's forms
	// Another user for the disabling form, a disabled one for enabling.
	s.AuthCLI(t, 0, "create-user", "-email", graceEmail)
	s.AuthCLI(t, 0, "create-user", "-email", "eve@lab.example")
	s.AuthCLI(t, 0, "disable-user", "eve@lab.example")
	s.AuthCLI(t, 0, "set-scopes", "-confirm", "-scopes", identity.ScopeOperator, demoEmail)
	paths := crawlConsole(t, s, signInHTTP(t, s))
	var names []string
	for k := range paths {
		names = append(names, k)
	}
	sort.Strings(names)
	t.Logf("console paths: %v", names)
	for _, want := range []string{"GET /explorer/operator/banks", "GET /explorer/operator/users", "GET /explorer/operator/users/user", "GET /explorer/operator/users/sign-ins",
		"POST /explorer/operator/users/send-reset", "POST /explorer/operator/users/disable", "POST /explorer/operator/users/enable",
		"POST /explorer/operator/banks/approve"} {
		if _, ok := paths[want]; !ok {
			t.Errorf("the crawl missed %s", want)
		}
	}

	walk := func(who string, reason func(pattern string) string) {
		c := signInHTTP(t, s)
		_, home := getPage(t, c, s.URL+"/explorer/")
		m := csrfRE.FindStringSubmatch(home)
		if m == nil {
			t.Fatalf("%s: no CSRF token on the home page", who)
		}
		for _, pattern := range names {
			method, _, _ := strings.Cut(pattern, " ")
			want := reason(pattern)
			if want == "" {
				continue
			}
			var res *http.Response
			var err error
			if method == http.MethodGet {
				res, err = c.Get(s.URL + paths[pattern])
			} else {
				res, err = c.PostForm(s.URL+paths[pattern], url.Values{"csrf_token": {m[1]}, "email": {demoEmail}, "confirm": {"yes"}})
			}
			if err != nil {
				t.Fatal(err)
			}
			body := readAll(t, res)
			if res.StatusCode != http.StatusForbidden || !strings.Contains(body, want) {
				t.Errorf("%s, %s: %d, want 403 with %q\n%s", who, pattern, res.StatusCode, want, body)
			}
		}
	}
	s.AuthCLI(t, 0, "set-scopes", "-confirm", "-scopes", identity.ScopeResearcher, demoEmail)
	walk("researcher", func(pattern string) string {
		if strings.Contains(pattern, "/operator/users") || strings.HasSuffix(pattern, "/operator/") {
			return "lacks the role (scope fris:operator or fris:user-admin)"
		}
		return "lacks the operator role (scope fris:operator)"
	})
	s.AuthCLI(t, 0, "set-scopes", "-confirm", "-scopes", identity.ScopeUserAdmin, demoEmail)
	walk("user admin", func(pattern string) string {
		if strings.Contains(pattern, "/operator/users") || strings.HasSuffix(pattern, "/operator/") {
			return ""
		}
		return "lacks the operator role (scope fris:operator)"
	})
}

// TestExplorerUserAdmin: a user administrator creates a user, sends them a
// reset link with which they set a password and sign in, sees that
// sign-in among the recent ones, and disables them, each audited with the
// administrator as actor; auth refuses their grant of fris:operator (a
// crafted form, the page offers none) and any change to an operator, and
// the page says why.
func TestExplorerUserAdmin(t *testing.T) {
	t.Parallel()
	s := explorerStack(t, Options{})
	s.AuthCLI(t, 0, "create-client", "-client-id", demoClient, "-secret", demoSecret, "-name", "E2E Client", "-redirect-url", callback)
	s.AuthCLI(t, 0, "create-user", "-email", "op@lab.example", "-password", "operator password", "-scopes", identity.ScopeOperator)
	s.AuthCLI(t, 0, "set-scopes", "-confirm", "-scopes", identity.ScopeUserAdmin, demoEmail)
	ua := userID(t, s, demoEmail)
	c := signInHTTP(t, s)
	_, home := getPage(t, c, s.URL+"/explorer/")
	if !strings.Contains(home, `href="/explorer/operator/users"`) || strings.Contains(home, `href="/explorer/operator/banks"`) {
		t.Errorf("a user admin's nav:\n%s", home)
	}
	code, body := getPage(t, c, s.URL+"/explorer/operator/users")
	m := csrfRE.FindStringSubmatch(body)
	if code != 200 || m == nil {
		t.Fatalf("users view: %d\n%s", code, body)
	}
	csrf := m[1]
	if strings.Contains(body, `value="fris:operator"`) || strings.Contains(body, "/explorer/operator/banks") {
		t.Errorf("a user admin is offered the operator role or the operator views:\n%s", body)
	}

	code, body = usersForm(t, s, c, csrf, "create", url.Values{"email": {graceEmail}, "name": {"Grace Hopper"}, "role": {identity.ScopeResearcher}})
	if code != 200 || !strings.Contains(body, graceEmail+" is created.") {
		t.Fatalf("create: %d\n%s", code, body)
	}
	waitAudit(t, s.Auth, "auth.admin.CreateUser", map[string]any{"actor": ua, "email": graceEmail, "outcome": "success"})

	// The reset link: by mail, here in auth's log; Grace sets a password
	// with it and signs in.
	if code, body := usersForm(t, s, c, csrf, "send-reset", url.Values{"email": {graceEmail}}); code != 200 || !strings.Contains(body, "A password-reset link is sent to "+graceEmail) {
		t.Fatalf("send reset: %d\n%s", code, body)
	}
	waitAudit(t, s.Auth, "auth.admin.SendPasswordReset", map[string]any{"actor": ua, "email": graceEmail, "outcome": "success"})
	link := newResetLink(t, s, graceEmail, 1)
	grace := from127(t, s, "127.0.0.1", nil)
	f, _ := grace.page(t, strings.TrimPrefix(link, Issuer), 200)
	f.Set("password", gracePass)
	f.Set("password2", gracePass)
	if res, b := grace.postForm(t, oauth+"/reset", f); res.StatusCode != 200 {
		t.Fatalf("reset: %d\n%s", res.StatusCode, b)
	}
	if st, _, _ := passwordSignIn(t, s, graceEmail, gracePass); st != http.StatusFound {
		t.Fatalf("Grace's sign-in with the new password: %d", st)
	}
	_, body = getPage(t, c, s.URL+"/explorer/operator/users/sign-ins?email="+url.QueryEscape(graceEmail))
	if !strings.Contains(body, `data-method="password">password`) || !strings.Contains(body, "<code>"+demoClient+"</code>") || !strings.Contains(body, "<code>127.0.0.1</code>") {
		t.Errorf("recent sign-ins:\n%s", body)
	}

	if code, body := usersForm(t, s, c, csrf, "disable", url.Values{"email": {graceEmail}, "confirm": {"yes"}}); code != 200 || !strings.Contains(body, graceEmail+" is disabled.") {
		t.Fatalf("disable: %d\n%s", code, body)
	}
	waitAudit(t, s.Auth, "auth.admin.SetUserDisabled", map[string]any{"actor": ua, "email": graceEmail, "disabled": "true", "outcome": "success"})

	// No escalation: auth refuses, the page gives its reason.
	for _, tc := range []struct {
		path string
		form url.Values
		want string
	}{
		{"scopes", url.Values{"email": {graceEmail}, "role": {identity.ScopeOperator}}, "only an operator grants the role fris:operator"},
		{"scopes", url.Values{"email": {demoEmail}, "role": {identity.ScopeUserAdmin, identity.ScopeOperator}}, "only an operator"},
		{"create", url.Values{"email": {"eve@lab.example"}, "role": {identity.ScopeUserAdmin}}, "only an operator grants the role fris:user-admin"},
		{"disable", url.Values{"email": {"op@lab.example"}, "confirm": {"yes"}}, "the user holds the role fris:operator"},
		{"send-reset", url.Values{"email": {"op@lab.example"}}, "the user holds the role fris:operator"},
	} {
		if code, body := usersForm(t, s, c, csrf, tc.path, tc.form); code != http.StatusForbidden || !strings.Contains(body, tc.want) {
			t.Errorf("%s %v: %d, want 403 with %q\n%s", tc.path, tc.form, code, tc.want, body)
		}
	}
	waitAudit(t, s.Auth, "auth.admin.SetUserScopes", map[string]any{"actor": ua, "email": graceEmail, "outcome": "failure"})
	users := s.AuthCLI(t, 0, "users")
	if strings.Contains(users, "eve@lab.example") {
		t.Errorf("a refused create made the user:\n%s", users)
	}
	for _, line := range strings.Split(users, "\n") {
		if strings.Contains(line, graceEmail) && strings.Contains(line, identity.ScopeOperator) {
			t.Errorf("Grace became an operator: %s", line)
		}
	}
	if st, _, _ := passwordSignIn(t, s, "op@lab.example", "operator password"); st != http.StatusFound {
		t.Errorf("the operator was disabled: %d", st)
	}
	// And the other console pages say why not.
	for _, p := range []string{"banks", "sites", "monitoring", "registry"} {
		if code, body := getPage(t, c, s.URL+"/explorer/operator/"+p); code != http.StatusForbidden || !strings.Contains(body, "lacks the operator role (scope fris:operator)") {
			t.Errorf("user admin on %s: %d", p, code)
		}
	}
}

// TestConsoleAndLoginBrowser: the users view's new parts (the reset
// button, the recent sign-ins) and the login and forgot-password pages
// with the Explorer's header pass axe-core, light and dark; the login
// page's language switch is a link that keeps the authorization request,
// so signing in after switching works.
func TestConsoleAndLoginBrowser(t *testing.T) {
	t.Parallel()
	p := newPage(t)
	s := explorerStack(t, Options{})
	s.AuthCLI(t, 0, "set-scopes", "-confirm", "-scopes", identity.ScopeOperator, demoEmail)

	p.do("open the login page", chromedp.Navigate(s.URL+"/explorer/login?return=%2Fexplorer%2Foperator%2Fusers"), chromedp.WaitVisible(chromedp.ID("email")))
	p.wantText("header.bar .brand", "FRIS Explorer")
	p.check("login-en")
	before := p.hidden()
	p.do("switch to German", chromedp.Click(chromedp.CSS(`header.bar a[hreflang="de"]`)), chromedp.WaitVisible(chromedp.CSS(`html[lang="de"]`)))
	p.wantText("h1", "Anmelden")
	if after := p.hidden(); after != before {
		t.Errorf("the switch changed the request: %q, was %q", after, before)
	}
	p.check("login-de")
	p.do("open the forgot page", chromedp.Click(chromedp.CSS(`a[href*="/forgot"]`)), chromedp.WaitVisible(chromedp.CSS(`header.bar`)))
	p.check("forgot-de")
	p.do("back to sign in", chromedp.NavigateBack(), chromedp.WaitVisible(chromedp.ID("email")))
	p.do("sign in in German", chromedp.SendKeys(chromedp.ID("email"), demoEmail), chromedp.SendKeys(chromedp.ID("password"), demoPass),
		chromedp.Click(chromedp.CSS("button[type=submit]")), chromedp.WaitVisible(chromedp.ID("users-q")))
	if loc := p.location(); loc != s.URL+"/explorer/operator/users" {
		t.Errorf("signed in at %s, want the users view", loc)
	}
	p.do("switch to English", chromedp.Click(chromedp.CSS(`a[hreflang="en"]`)), chromedp.WaitVisible(chromedp.CSS(`html[lang="en"]`)))
	p.do("open the user", chromedp.Click(chromedp.CSS(`a.user[href$="`+url.QueryEscape(demoEmail)+`"]`)), chromedp.WaitVisible(chromedp.CSS(`form.reset button`)))
	p.do("send a reset link", chromedp.Click(chromedp.CSS(`form.reset button`)), chromedp.WaitVisible(chromedp.CSS(`#op-status .done[data-done="reset"]`)))
	p.wantText("#op-status", "A password-reset link is sent to "+demoEmail)
	p.check("operator-users-reset")
	p.do("open the user again", chromedp.Click(chromedp.CSS(`a.user[href$="`+url.QueryEscape(demoEmail)+`"]`)), chromedp.WaitVisible(chromedp.CSS(`a.signins`)))
	p.do("open the recent sign-ins", chromedp.Click(chromedp.CSS(`a.signins`)), chromedp.WaitVisible(chromedp.CSS(`table.signins`)))
	p.wantText("table.signins td[data-method]", "password")
	p.check("operator-user-signins")
}

// hidden are the login form's hidden fields but the CSRF token, in order.
func (p *page) hidden() string {
	p.t.Helper()
	s, err := chromedp.Run(p.ctx, chromedp.Evaluate[string](`[...document.querySelectorAll('form input[type=hidden]:not([name=csrf_token])')].map(i => i.name + "=" + i.value).join("&")`))
	if err != nil {
		p.t.Fatal(err)
	}
	return s
}
