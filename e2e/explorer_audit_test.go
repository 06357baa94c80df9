package e2e

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"fris.dev/pkg/identity"
)

// auditRow is the audit view's row of an event: service, action and actor
// as the view marks them.
func auditRow(service, action, actor string) string {
	return `<tr class="event" data-service="` + service + `" data-action="` + action + `" data-actor="` + actor + `"`
}

// waitAuditView polls the audit view at target until it shows want, as
// the services store their events a moment after they happen.
func waitAuditView(t *testing.T, c *http.Client, target, want string) string {
	t.Helper()
	var body string
	deadline := time.Now().Add(30 * time.Second)
	for {
		var code int
		code, body = getPage(t, c, target)
		if code != http.StatusOK {
			t.Fatalf("%s: %d\n%s", target, code, body)
		}
		if strings.Contains(body, want) {
			return body
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s does not show %q:\n%s", target, want, body)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestExplorerAudit: the audit and settings views against the real
// services. A non-operator is refused with the reason; an operator
// disables a user on the users page and the audit view shows it with the
// operator as actor; the filters narrow the list (service, actor by
// email, action, outcome, time); the settings page shows the access token
// lifetime the stack runs with and none of its secrets. On both stores:
// the events are kept in each service's own.
func TestExplorerAudit(t *testing.T) {
	t.Parallel()
	t.Run("bolt", func(t *testing.T) { explorerAudit(t, Options{}) })
	t.Run("redis", func(t *testing.T) { explorerAudit(t, Options{Redis: true}) })
}

func explorerAudit(t *testing.T, o Options) {
	keySecret := NewKeySecret(t)
	o.AuthArgs = []string{"-access-ttl", "47m", "-key-secrets", keySecret}
	s := explorerStack(t, o)
	s.AuthCLI(t, 0, "create-client", "-client-id", demoClient, "-secret", demoSecret, "-name", "E2E Client", "-redirect-url", callback)

	researcher := signInHTTP(t, s)
	for _, p := range []string{"/explorer/operator/audit", "/explorer/operator/settings"} {
		if code, body := getPage(t, researcher, s.URL+p); code != http.StatusForbidden || !strings.Contains(body, "lacks the operator role (scope fris:operator)") {
			t.Fatalf("non-operator at %s: %d\n%s", p, code, body)
		}
	}

	s.AuthCLI(t, 0, "set-scopes", "-confirm", "-scopes", identity.ScopeOperator, demoEmail)
	s.AuthCLI(t, 0, "create-user", "-email", graceEmail, "-password", gracePass, "-name", "Grace Hopper")
	op := userID(t, s, demoEmail)
	c := signInHTTP(t, s)
	_, body := getPage(t, c, s.URL+"/explorer/operator/users?q=grace")
	m := csrfRE.FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no CSRF token on the users page:\n%s", body)
	}
	if code, body := usersForm(t, s, c, m[1], "disable", url.Values{"email": {graceEmail}, "confirm": {"yes"}}); code != 200 || !strings.Contains(body, graceEmail+" is disabled.") {
		t.Fatalf("disable: %d\n%s", code, body)
	}
	// A refused sign-in: a denied event by no operator.
	if st, _, _ := passwordSignIn(t, s, graceEmail, gracePass); st == http.StatusFound {
		t.Fatal("a disabled user signed in")
	}

	disabled := auditRow("auth", "auth.admin.SetUserDisabled", op)
	// Events reach the store through a background writer: the refused
	// sign-in's, written after the disable's, may come a moment later.
	waitAuditView(t, c, s.URL+"/explorer/operator/audit?outcome=denied", `data-outcome="denied"`)
	body = waitAuditView(t, c, s.URL+"/explorer/operator/audit", disabled)
	row := body[strings.Index(body, disabled):]
	row = row[:strings.Index(row, "</tr>")]
	for _, w := range []string{"(" + demoEmail + ")", "<code>email=" + graceEmail + "</code>", "<code>disabled=true</code>", `data-outcome="ok"`} {
		if !strings.Contains(row, w) {
			t.Errorf("the event's row lacks %q:\n%s", w, row)
		}
	}
	// The operator's own sign-in is there too, by the CLI's and the
	// services' own events: set-scopes by admin-api.
	if !strings.Contains(body, auditRow("auth", "auth.admin.SetUserScopes", "admin-api")) {
		t.Errorf("the CLI's set-scopes is not listed")
	}

	for _, tc := range []struct {
		query        url.Values
		want, absent []string
	}{
		// The actor by email: the operator's events only.
		{url.Values{"actor": {demoEmail}}, []string{disabled}, []string{`data-actor="admin-api"`}},
		{url.Values{"action": {"auth.admin.SetUserDisabled"}}, []string{disabled}, []string{`data-action="auth.admin.SetUserScopes"`, `data-action="auth.login"`}},
		{url.Values{"outcome": {"denied"}}, []string{`data-outcome="denied"`}, []string{`data-outcome="ok"`, `data-outcome="failed"`}},
		{url.Values{"service": {"mdr"}}, nil, []string{`data-service="auth"`}},
		{url.Values{"to": {"2001-01-01T00:00"}}, []string{"No event matches."}, []string{`<tr class="event"`}},
		{url.Values{"from": {time.Now().UTC().Add(-time.Hour).Format("2006-01-02T15:04")}, "action": {"auth.admin."}}, []string{disabled}, nil},
	} {
		code, body := getPage(t, c, s.URL+"/explorer/operator/audit?"+tc.query.Encode())
		if code != 200 {
			t.Fatalf("%v: %d\n%s", tc.query, code, body)
		}
		for _, w := range tc.want {
			if !strings.Contains(body, w) {
				t.Errorf("%v lacks %q", tc.query, w)
			}
		}
		for _, w := range tc.absent {
			if strings.Contains(body, w) {
				t.Errorf("%v has %q", tc.query, w)
			}
		}
	}
	if code, body := getPage(t, c, s.URL+"/explorer/operator/audit?service=nosuch"); code != http.StatusBadRequest || !strings.Contains(body, "The filter is malformed") {
		t.Errorf("unknown service: %d", code)
	}

	code, body := getPage(t, c, s.URL+"/explorer/operator/settings")
	if code != 200 {
		t.Fatalf("settings: %d\n%s", code, body)
	}
	for _, w := range []string{`<tr data-setting="access-ttl"><th scope="row"><code>-access-ttl</code></th>`, "<code>47m0s</code>",
		`id="settings-gateway"`, `id="settings-auth"`, `id="settings-mdr"`, `<tr data-setting="audit-keep">`, `<tr data-setting="limit-login">`, `<tr data-setting="max-body">`,
		`<tr data-setting="password-min-length">`} {
		if !strings.Contains(body, w) {
			t.Errorf("the settings page lacks %q", w)
		}
	}
	for _, secret := range []string{keySecret, explorerSecret, "key-secrets", "explorer-client-secret", "smtp-password"} {
		if strings.Contains(body, secret) {
			t.Errorf("the settings page shows %q", secret)
		}
	}
}

// TestExplorerAuditBrowser: the audit and settings views in Chromium,
// filtered by keyboard, light and dark, English and German, on a
// phone-sized screen too: axe-core finds no serious issue.
func TestExplorerAuditBrowser(t *testing.T) {
	t.Parallel()
	p := newPage(t)
	s := explorerStack(t, Options{})
	s.AuthCLI(t, 0, "set-scopes", "-confirm", "-scopes", identity.ScopeOperator, demoEmail)
	p.signIn(s)
	p.do("open the audit view", chromedp.Navigate(s.URL+"/explorer/operator/audit"), chromedp.WaitVisible(chromedp.ID("audit-actor")))
	p.do("filter by keyboard", chromedp.SendKeys(chromedp.ID("audit-action"), "auth."), chromedp.Submit(chromedp.ID("audit-action")),
		chromedp.WaitVisible(chromedp.CSS(`tr.event[data-service="auth"]`)))
	p.check("operator-audit")
	p.do("open the settings", chromedp.Click(chromedp.CSS(`nav.optabs a[href="/explorer/operator/settings"]`)), chromedp.WaitVisible(chromedp.ID("settings-auth")))
	p.wantText(`tr[data-setting="access-ttl"] td`, "1h0m0s")
	p.check("operator-settings")
	p.do("switch to German", chromedp.Click(chromedp.CSS(`a[hreflang="de"]`)), chromedp.WaitVisible(chromedp.CSS(`html[lang="de"]`)))
	p.wantText("h1", "Einstellungen")
	p.do("open the audit view", chromedp.Click(chromedp.CSS(`nav.optabs a[href="/explorer/operator/audit"]`)), chromedp.WaitVisible(chromedp.ID("audit-actor")))
	p.check("operator-audit-de")

	// Last, as the emulation stays: a phone-sized screen.
	p.do("a 360 px screen", chromedp.EmulateViewport(360, 740, chromedp.EmulateMobile))
	for _, path := range []string{"/explorer/operator/audit", "/explorer/operator/settings"} {
		p.do("open "+path, chromedp.Navigate(s.URL+path), chromedp.WaitVisible(chromedp.CSS("h1")))
		width, err := chromedp.Run(p.ctx, chromedp.Evaluate[int](`document.documentElement.scrollWidth`))
		if err != nil {
			t.Fatal(err)
		}
		if width > 360 {
			t.Errorf("%s is %d px wide on a 360 px screen", path, width)
		}
	}
	p.check("operator-settings-360px")
}
