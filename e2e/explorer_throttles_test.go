package e2e

import (
	"html"
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

// throttleStack is an Explorer stack with the attack suite's small limits
// (attackStack): an account's ceiling of 10 failures an hour from all
// addresses, 3 per account and address, a site credential's 3.
func throttleStack(t *testing.T, o Options) *Stack {
	t.Helper()
	o.AuthArgs = append(o.AuthArgs, "-limit-login", "3/1h:1s..1m", "-limit-addr", "1000/1h", "-limit-account-ceiling", "10/1h")
	o.UploadArgs = append(o.UploadArgs, "-limit-basic", "3/1h:1s..1m", "-limit-addr", "1000/1h", "-secret-cache-ttl", "1ms")
	s := explorerStack(t, o)
	// The login form's client, which the guessers use, and a site
	// credential.
	s.AuthCLI(t, 0, "create-client", "-client-id", demoClient, "-secret", demoSecret, "-name", "E2E Client", "-redirect-url", callback)
	s.AuthCLI(t, 0, "create-user", "-email", graceEmail, "-password", gracePass, "-name", "Grace Hopper")
	seedSites(t, s)
	return s
}

// throttleRowRE finds a throttle's row on the throttles view: its service,
// id and kind, and the row up to its lift form.
var throttleRowRE = regexp.MustCompile(`(?s)<tr class="throttle" data-service="([a-z]+)" data-id="([^"]+)" data-kind="([a-z]+)"[^>]*>(.*?)</tr>`)

type throttleRow struct{ service, id, kind, body string }

func throttleRows(page string) []throttleRow {
	var out []throttleRow
	for _, m := range throttleRowRE.FindAllStringSubmatch(page, -1) {
		out = append(out, throttleRow{m[1], html.UnescapeString(m[2]), m[3], m[4]})
	}
	return out
}

// slowGrace guesses Grace's password wrongly from five addresses, twice
// each (under the pair limit of 3), until the account's ceiling of 10 is
// full; her right password from an address she never used is then
// refused.
func slowGrace(t *testing.T, s *Stack) peer {
	t.Helper()
	wrong := func(p peer, i int) (*http.Response, []byte) {
		return p.signIn(t, graceEmail, "wrong password "+strconv.Itoa(i))
	}
	var addrs []peer
	for i := range 5 {
		addrs = append(addrs, from127(t, s, "127.0.1."+strconv.Itoa(i+1), nil))
	}
	if checked, refused := guessFrom(t, addrs, 2, wrong, 401); checked != 10 || refused != 0 {
		t.Fatalf("10 guesses from 5 addresses: %d checked, %d refused", checked, refused)
	}
	grace := from127(t, s, "127.0.3.7", nil)
	res, b := grace.signIn(t, graceEmail, gracePass)
	throttled(t, "Grace's right password from a new address at a full ceiling", res, b)
	return grace
}

// TestExplorerThrottles: strangers guess a user's password from distinct
// addresses until her account's ceiling is full, and a site credential's
// from one. A researcher and a user administrator reach neither the
// throttles view nor its lift (403 with the reason). To an operator the
// view lists both (auth's and upload's), as `bin/auth throttles` does; a
// lift from another site is refused; the operator lifts the account's,
// audited with the operator as actor, and the user signs in at once from
// the address that was refused; the site credential's stays listed until
// `bin/upload lift-throttle` lifts it. On both stores: the limiters' state
// is in process or in Redis.
func TestExplorerThrottles(t *testing.T) {
	t.Parallel()
	t.Run("bolt", func(t *testing.T) { explorerThrottles(t, Options{}) })
	t.Run("redis", func(t *testing.T) { explorerThrottles(t, Options{Redis: true}) })
}

func explorerThrottles(t *testing.T, o Options) {
	s := throttleStack(t, o)
	grace := slowGrace(t, s)
	site := from127(t, s, "127.0.1.9", nil)
	for i := range 4 {
		res, b := site.do(t, http.MethodGet, charite.spec()+"/uploadStats", "", "Authorization", basic(charite.user, "guess "+strconv.Itoa(i)))
		if res.StatusCode != 401 && res.StatusCode != 429 {
			t.Fatalf("a site credential guess = %d %s", res.StatusCode, b)
		}
	}

	view, lift := s.URL+"/explorer/operator/throttles", s.URL+"/explorer/operator/throttles/lift"
	id := ""
	for _, line := range strings.Split(s.AuthCLI(t, 0, "throttles"), "\n") {
		if f := strings.Fields(line); len(f) > 3 && f[2] == "ceiling" && f[3] == graceEmail {
			id = f[0]
		}
	}
	if id == "" {
		t.Fatal("bin/auth throttles does not list Grace's ceiling")
	}
	for _, scope := range []string{identity.ScopeResearcher, identity.ScopeUserAdmin} {
		s.AuthCLI(t, 0, "set-scopes", "-confirm", "-scopes", scope, demoEmail)
		c := signInHTTP(t, s)
		_, home := getPage(t, c, s.URL+"/explorer/")
		m := csrfRE.FindStringSubmatch(home)
		if m == nil {
			t.Fatal("no CSRF token on the home page")
		}
		if code, body := getPage(t, c, view); code != http.StatusForbidden || !strings.Contains(body, "lacks the operator role (scope fris:operator)") {
			t.Errorf("%s: the view = %d\n%s", scope, code, body)
		}
		res, body := postPage(t, c, lift, s.URL, url.Values{"csrf_token": {m[1]}, "service": {"auth"}, "id": {id}})
		if res.StatusCode != http.StatusForbidden || !strings.Contains(body, "lacks the operator role (scope fris:operator)") {
			t.Errorf("%s: the lift = %d\n%s", scope, res.StatusCode, body)
		}
	}
	if res, b := grace.signIn(t, graceEmail, gracePass); res.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("Grace's sign-in after refused lifts = %d %s", res.StatusCode, b)
	}

	s.AuthCLI(t, 0, "set-scopes", "-confirm", "-scopes", identity.ScopeOperator, demoEmail)
	c := signInHTTP(t, s)
	code, page := getPage(t, c, view)
	if code != 200 {
		t.Fatalf("the throttles view: %d\n%s", code, page)
	}
	rows := throttleRows(page)
	var ceiling, siteRow *throttleRow
	for i, r := range rows {
		switch {
		case r.service == "auth" && r.kind == "ceiling" && strings.Contains(r.body, graceEmail):
			ceiling = &rows[i]
		case r.service == "upload" && r.kind == "pair" && strings.Contains(r.body, charite.user) && strings.Contains(r.body, "127.0.1.9"):
			siteRow = &rows[i]
		}
	}
	if ceiling == nil || siteRow == nil || len(rows) != 2 || ceiling.id != id {
		t.Fatalf("the throttles view lists %d rows, want Grace's ceiling and the site credential's pair:\n%s", len(rows), page)
	}
	for _, want := range []string{"Sign-in with a password", "this account from every address", ">10</td>", ">2</td>", "left)"} {
		if !strings.Contains(ceiling.body, want) {
			t.Errorf("Grace's row lacks %q:\n%s", want, ceiling.body)
		}
	}
	if !strings.Contains(siteRow.body, "Site credential (uploads)") {
		t.Errorf("the site credential's row:\n%s", siteRow.body)
	}

	m := csrfRE.FindStringSubmatch(page)
	if m == nil {
		t.Fatal("no CSRF token on the throttles view")
	}
	form := url.Values{"csrf_token": {m[1]}, "service": {"auth"}, "id": {ceiling.id}}
	// From another site: refused, nothing lifted.
	if res, body := postPage(t, c, lift, "https://evil.example", form); res.StatusCode != http.StatusForbidden {
		t.Fatalf("a cross-site lift: %d\n%s", res.StatusCode, body)
	}
	if res, b := grace.signIn(t, graceEmail, gracePass); res.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("after a refused lift Grace's sign-in = %d %s", res.StatusCode, b)
	}
	res, body := postPage(t, c, lift, s.URL, form)
	if res.StatusCode != 200 || res.Request.URL.Path != "/explorer/operator/throttles" {
		t.Fatalf("the lift: %d at %s\n%s", res.StatusCode, res.Request.URL, body)
	}
	if want := "The throttle of " + graceEmail + " is lifted: its next attempt is admitted at once."; !strings.Contains(body, want) {
		t.Errorf("the page after the lift lacks %q:\n%s", want, body)
	}
	if rows := throttleRows(body); len(rows) != 1 || rows[0].service != "upload" {
		t.Errorf("after the lift %d rows, want the site credential's only", len(rows))
	}
	// Grace signs in at once, from the address that was refused.
	if res, b := grace.signIn(t, graceEmail, gracePass); res.StatusCode != http.StatusFound {
		t.Fatalf("Grace's sign-in after the lift = %d %s", res.StatusCode, b)
	}
	waitAudit(t, s.Auth, "auth.admin.LiftThrottle", map[string]any{"actor": userID(t, s, demoEmail), "client": explorerClient,
		"target": graceEmail, "kind": "ceiling", "lifted": true, "outcome": "success"})
	if out := s.AuthCLI(t, 0, "throttles"); strings.Contains(out, graceEmail) {
		t.Errorf("bin/auth throttles after the lift:\n%s", out)
	}
	// The site credential's, with bin/upload: gone from the view, audited
	// with the admin API as actor.
	if out := s.UploadCLI(t, 0, "throttles"); !strings.Contains(out, siteRow.id) || !strings.Contains(out, charite.user) {
		t.Errorf("bin/upload throttles:\n%s", out)
	}
	if out := s.UploadCLI(t, 0, "lift-throttle", siteRow.id); !strings.Contains(out, "lifted "+siteRow.id) {
		t.Errorf("bin/upload lift-throttle:\n%s", out)
	}
	if _, page := getPage(t, c, view); len(throttleRows(page)) != 0 || !strings.Contains(page, "Nothing is slowed now.") {
		t.Errorf("the view after both lifts:\n%s", page)
	}
	waitAudit(t, s.Upload, "upload.admin.LiftThrottle", map[string]any{"actor": "admin-api", "target": charite.user, "addr": "127.0.1.9", "outcome": "success"})
}

// TestExplorerThrottlesBrowser: the throttles view in Chromium, light and
// dark, English and German, on a phone-sized screen too: axe-core finds no
// serious issue; the operator lifts a slowed account by keyboard and its
// holder signs in at once.
func TestExplorerThrottlesBrowser(t *testing.T) {
	t.Parallel()
	p := newPage(t)
	s := throttleStack(t, Options{})
	grace := slowGrace(t, s)
	site := from127(t, s, "127.0.1.9", nil)
	for i := range 4 {
		site.do(t, http.MethodGet, charite.spec()+"/uploadStats", "", "Authorization", basic(charite.user, "guess "+strconv.Itoa(i)))
	}
	s.AuthCLI(t, 0, "set-scopes", "-confirm", "-scopes", identity.ScopeOperator, demoEmail)
	p.signIn(s)
	p.do("open the console", chromedp.Navigate(s.URL+"/explorer/operator/"), chromedp.WaitVisible(chromedp.CSS("nav.optabs")))
	p.do("open the throttles tab", chromedp.Click(chromedp.CSS(`nav.optabs a[href="/explorer/operator/throttles"]`)),
		chromedp.WaitVisible(chromedp.CSS(`tr.throttle[data-kind="ceiling"]`)))
	p.wantText("h1", "Throttles")
	p.wantText(`tr.throttle[data-kind="ceiling"]`, graceEmail, "Sign-in with a password", "this account from every address", "left")
	p.wantText(`tr.throttle[data-service="upload"]`, charite.user, "127.0.1.9", "Site credential (uploads)")
	p.check("operator-throttles-en")

	p.do("switch to German", chromedp.Click(chromedp.CSS(`a[hreflang="de"]`)), chromedp.WaitVisible(chromedp.CSS(`html[lang="de"]`)))
	p.wantText("h1", "Drosselungen")
	p.check("operator-throttles-de")
	p.do("lift Grace's by keyboard", chromedp.Focus(chromedp.CSS(`tr.throttle[data-kind="ceiling"] button`)), chromedp.KeyEvent(kb.Enter),
		chromedp.WaitVisible(chromedp.CSS(`#op-status .done[data-done="lifted"]`)))
	p.wantText("#op-status", "Die Drosselung von "+graceEmail+" ist aufgehoben")
	if n := p.count(`tr.throttle[data-kind="ceiling"]`); n != 0 {
		t.Errorf("Grace's throttle is still listed (%d)", n)
	}
	p.check("operator-throttles-lifted-de")
	if res, b := grace.signIn(t, graceEmail, gracePass); res.StatusCode != http.StatusFound {
		t.Fatalf("Grace's sign-in after the lift = %d %s", res.StatusCode, b)
	}

	// Last, as the emulation stays: a phone-sized screen.
	p.do("a 360 px screen", chromedp.EmulateViewport(360, 740, chromedp.EmulateMobile))
	p.do("open the view", chromedp.Navigate(s.URL+"/explorer/operator/throttles"), chromedp.WaitVisible(chromedp.CSS(`tr.throttle`)))
	width, err := chromedp.Run(p.ctx, chromedp.Evaluate[int](`document.documentElement.scrollWidth`))
	if err != nil {
		t.Fatal(err)
	}
	if width > 360 {
		t.Errorf("the throttles view is %d px wide on a 360 px screen", width)
	}
	p.check("operator-throttles-360px")
}
