package e2e

import (
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"fris.dev/pkg/identity"
)

// siteRow is the row of site id in the site registry view, unescaped.
func siteRow(t *testing.T, body, id string) string {
	t.Helper()
	m := regexp.MustCompile(`(?s)<tr id="site-\d+" data-site="` + regexp.QuoteMeta(id) + `">.*?</tr>`).FindString(body)
	if m == "" {
		t.Fatalf("no row for site %s:\n%s", id, body)
	}
	return html.UnescapeString(m)
}

// TestExplorerSiteRegistry: over HTTP against the real services, an
// operator adds a site in the console (a refused value is the page again
// with the broker's reason and the field marked), renames it, and approves
// a bank for it; the broker audits each change with the operator as the
// actor; the inquiry form then offers the site by its new names. Without
// the operator role the page and its forms are refused, by the broker too.
func TestExplorerSiteRegistry(t *testing.T) {
	t.Parallel()
	s := explorerStack(t, Options{BrokerArgs: []string{"-name", brokerName, "-registration", "approval"}})
	b := registerBank(t, s, "biobank@mainz.example")

	// A researcher: refused, and nothing reaches the registry.
	s.AuthCLI(t, 0, "set-scopes", "-confirm", "-scopes", identity.ScopeResearcher, demoEmail)
	r := signInHTTP(t, s)
	if code, body := getPage(t, r, s.URL+"/explorer/operator/site-registry"); code != http.StatusForbidden || !strings.Contains(body, "lacks the operator role") {
		t.Fatalf("a researcher's site registry: %d\n%s", code, body)
	}
	_, home := getPage(t, r, s.URL+"/explorer/")
	res, err := r.PostForm(s.URL+"/explorer/operator/site-registry/create", url.Values{"csrf_token": {csrfRE.FindStringSubmatch(home)[1]}, "id": {"mainz"}, "name_de": {"x"}})
	if err != nil {
		t.Fatal(err)
	}
	if body := readAll(t, res); res.StatusCode != http.StatusForbidden {
		t.Fatalf("a researcher's new site: %d\n%s", res.StatusCode, body)
	}

	s.AuthCLI(t, 0, "set-scopes", "-confirm", "-scopes", identity.ScopeOperator+","+identity.ScopeResearcher, demoEmail)
	op := userID(t, s, demoEmail)
	c := signInHTTP(t, s)
	code, body := getPage(t, c, s.URL+"/explorer/operator/site-registry")
	if code != 200 || !strings.Contains(siteRow(t, body, "dresden"), "University Hospital Dresden") || strings.Contains(body, `data-site="mainz"`) {
		t.Fatalf("site registry: %d\n%s", code, body)
	}
	csrf := csrfRE.FindStringSubmatch(body)[1]
	post := func(path string, form url.Values) (int, string) {
		t.Helper()
		form.Set("csrf_token", csrf)
		res, err := c.PostForm(s.URL+"/explorer/operator/"+path, form)
		if err != nil {
			t.Fatal(err)
		}
		return res.StatusCode, readAll(t, res)
	}

	// The broker's checks, with its reasons, beside the fields.
	code, body = post("site-registry/create", url.Values{"id": {"mainz"}, "name_de": {"Universitätsmedizin Mainz"}, "logo_url": {"http://mainz.example/logo.png"}})
	if code != http.StatusBadRequest || !strings.Contains(body, "must be an absolute https URL") ||
		!regexp.MustCompile(`<input id="new-logo" [^>]*value="http://mainz.example/logo.png"[^>]*aria-invalid="true"`).MatchString(body) ||
		!regexp.MustCompile(`<input id="new-name-de" [^>]*value="Universitätsmedizin Mainz"`).MatchString(body) {
		t.Fatalf("an http logo: %d\n%s", code, body)
	}
	if code, body := post("site-registry/create", url.Values{"id": {"mainz/x"}, "name_de": {"Mainz"}}); code != http.StatusBadRequest ||
		!regexp.MustCompile(`<input id="new-id" [^>]*aria-invalid="true"`).MatchString(body) || !strings.Contains(body, "must be 1-64 letters") {
		t.Fatalf("a bad id: %d\n%s", code, body)
	}
	if code, body := post("site-registry/create", url.Values{"id": {"charite"}, "name_de": {"Zweite Charité"}}); code != http.StatusConflict || !strings.Contains(body, "exists already") {
		t.Fatalf("a taken id: %d\n%s", code, body)
	}
	code, body = post("site-registry/create", url.Values{"id": {"mainz"}, "name_de": {"Universitätsmedizin Mainz"}, "name_en": {"Mainz University Medicine"},
		"contact": {"biobank@mainz.example"}, "logo_url": {"https://mainz.example/logo.png"}})
	if code != 200 || !strings.Contains(body, "Site mainz is added.") {
		t.Fatalf("create: %d\n%s", code, body)
	}
	if row := siteRow(t, body, "mainz"); !strings.Contains(row, "Mainz University Medicine") || !strings.Contains(row, "biobank@mainz.example") || !strings.Contains(row, "https://mainz.example/logo.png") {
		t.Errorf("the new site's row: %s", row)
	}
	waitAudit(t, s.Broker, "broker.admin.CreateSite", map[string]any{"actor": op, "client": explorerClient, "id": "mainz", "outcome": "success"})

	code, body = post("site-registry/update", url.Values{"id": {"mainz"}, "name_de": {"Universitätsmedizin der Johannes Gutenberg-Universität Mainz"},
		"name_en": {"University Medical Center Mainz"}, "contact": {""}, "logo_url": {"https://mainz.example/logo.png"}})
	if code != 200 || !strings.Contains(body, "Site mainz is saved.") {
		t.Fatalf("update: %d\n%s", code, body)
	}
	if row := siteRow(t, body, "mainz"); !strings.Contains(row, "University Medical Center Mainz") || strings.Contains(row, "biobank@mainz.example") {
		t.Errorf("the renamed site's row: %s", row)
	}
	waitAudit(t, s.Broker, "broker.admin.UpdateSite", map[string]any{"actor": op, "id": "mainz", "outcome": "success"})
	if code, body := post("site-registry/update", url.Values{"id": {"mainz"}, "name_de": {""}, "name_en": {""}}); code != http.StatusBadRequest ||
		!strings.Contains(body, "is required") || !regexp.MustCompile(`<input id="site-\d+-name-en" [^>]*aria-invalid="true"`).MatchString(body) {
		t.Fatalf("no names: %d\n%s", code, body)
	}
	if code, body := post("site-registry/update", url.Values{"id": {"nosuch"}, "name_de": {"x"}}); code != http.StatusNotFound {
		t.Fatalf("an unknown site: %d\n%s", code, body)
	}
	// bin/broker sees the console's change.
	wantContains(t, s.BrokerCLI(t, 0, "sites"), "University Medical Center Mainz")

	// A bank can be approved for the new site, which then has an active bank.
	if code, body := post("banks/approve", url.Values{"email": {b.email}, "site_id": {"mainz"}}); code != 200 || !strings.Contains(body, b.email+" is approved.") {
		t.Fatalf("approve for the new site: %d\n%s", code, body)
	}
	wantText(t, s, http.MethodGet, sb+"/banks/"+b.email+"/status", nil, 200, b.auth()...)
	if _, body := getPage(t, c, s.URL+"/explorer/operator/site-registry"); !strings.Contains(siteRow(t, body, "mainz"), `class="badge ok">yes</span>`) {
		t.Errorf("the site's approved bank is not shown:\n%s", siteRow(t, body, "mainz"))
	}

	// Researchers see the new names, in each language.
	for lang, want := range map[string]string{"en": "University Medical Center Mainz", "de": "Universitätsmedizin der Johannes Gutenberg-Universität Mainz"} {
		code, body := getPage(t, c, s.URL+"/explorer/inquiries/new?lang="+lang)
		m := regexp.MustCompile(`<input type="checkbox" name="site" value="mainz"> ([^<]+)<`).FindStringSubmatch(body)
		if code != 200 || m == nil || html.UnescapeString(m[1]) != want {
			t.Errorf("the inquiry form (%s) names mainz %v, want %q", lang, m, want)
		}
	}
}

// TestExplorerSiteRegistryBrowser: in Chromium, an operator opens the site
// registry by its tab, adds a site by keyboard only (a refused logo first:
// the reason beside the form, the field marked, the values kept), renames
// it, and reads the view in German and on a 360 px screen; axe-core finds
// nothing serious, light and dark.
func TestExplorerSiteRegistryBrowser(t *testing.T) {
	t.Parallel()
	p := newPage(t)
	s := explorerStack(t, Options{})
	s.AuthCLI(t, 0, "set-scopes", "-confirm", "-scopes", identity.ScopeOperator, demoEmail)
	p.signIn(s)
	p.do("open the banks view", chromedp.Navigate(s.URL+"/explorer/operator/banks"), chromedp.WaitVisible(chromedp.CSS(".optabs")))
	p.do("open the site registry by its tab", chromedp.Click(chromedp.CSS(`.optabs a[href="/explorer/operator/site-registry"]`)),
		chromedp.WaitVisible(chromedp.ID("sites-heading")))
	if n := p.count(`.optabs a[href="/explorer/operator/site-registry"][aria-current="page"]`); n != 1 {
		t.Errorf("the tab is current %d times", n)
	}
	p.wantText("h1", "Site registry")
	p.wantText(`tr[data-site="dresden"]`, "Universitätsklinikum Dresden", "University Hospital Dresden")
	p.check("siteregistry-en")

	// By keyboard only: open "Add a site", fill it in, send with Enter.
	p.do("add a site by keyboard", chromedp.Focus(chromedp.CSS(`#site-create summary`)), chromedp.KeyEvent(kb.Enter),
		chromedp.WaitVisible(chromedp.ID("new-id")), chromedp.KeyEvent(kb.Tab), chromedp.KeyEvent("mainz"),
		chromedp.KeyEvent(kb.Tab), chromedp.KeyEvent("Universitätsmedizin Mainz"),
		chromedp.KeyEvent(kb.Tab), chromedp.KeyEvent("University Medicine Mainz"),
		chromedp.KeyEvent(kb.Tab), chromedp.KeyEvent("biobank@mainz.example"),
		chromedp.KeyEvent(kb.Tab), chromedp.KeyEvent("http://mainz.example/logo.png"+kb.Enter),
		chromedp.WaitVisible(chromedp.ID("new-error")))
	p.wantText("#new-error", "must be an absolute https URL")
	if n := p.count(`#new-logo[aria-invalid="true"]`); n != 1 {
		t.Error("the refused logo is not marked")
	}
	if v, err := chromedp.Run(p.ctx, chromedp.Evaluate[string](`document.getElementById("new-name-en").value`)); err != nil || v != "University Medicine Mainz" {
		t.Errorf("the refused form lost its English name: %q (%v)", v, err)
	}
	p.check("siteregistry-refused")
	p.do("an https logo", chromedp.Focus(chromedp.ID("new-logo")), chromedp.Clear(chromedp.ID("new-logo")),
		chromedp.KeyEvent("https://mainz.example/logo.png"+kb.Enter), chromedp.WaitVisible(chromedp.CSS(`#op-status .done[data-done="created"]`)))
	p.wantText("#op-status", "Site mainz is added.")
	p.wantText(`tr[data-site="mainz"]`, "University Medicine Mainz", "biobank@mainz.example", "https://mainz.example/logo.png")

	row := `tr[data-site="mainz"]`
	p.do("rename the site", chromedp.Click(chromedp.CSS(row+` details summary`)), chromedp.WaitVisible(chromedp.CSS(row+` input[name=name_en]`)),
		chromedp.Clear(chromedp.CSS(row+` input[name=name_en]`)), chromedp.SendKeys(chromedp.CSS(row+` input[name=name_en]`), "University Medical Center Mainz"),
		chromedp.Click(chromedp.CSS(row+` button[type=submit]`)), chromedp.WaitVisible(chromedp.CSS(`#op-status .done[data-done="updated"]`)))
	p.wantText(row+" td.name-en", "University Medical Center Mainz")
	waitAudit(t, s.Broker, "broker.admin.UpdateSite", map[string]any{"actor": userID(t, s, demoEmail), "id": "mainz", "outcome": "success"})

	p.do("switch to German", chromedp.Click(chromedp.CSS(`a[hreflang="de"]`)), chromedp.WaitVisible(chromedp.CSS(`html[lang="de"]`)))
	p.wantText("h1", "Standortverzeichnis")
	p.wantText("thead", "Name (Deutsch)", "Name (Englisch)", "Kontakt")
	p.do("open the German edit form", chromedp.Click(chromedp.CSS(row+` details summary`)), chromedp.WaitVisible(chromedp.CSS(row+` input[name=name_de]`)))
	p.wantText(row+" summary", "mainz ändern")
	p.check("siteregistry-de")

	// Last, as the emulation stays: a phone-sized screen, a form open.
	p.do("a 360 px screen", chromedp.EmulateViewport(360, 740, chromedp.EmulateMobile),
		chromedp.Navigate(s.URL+"/explorer/operator/site-registry?lang=en"), chromedp.WaitVisible(chromedp.ID("sites-heading")),
		chromedp.Click(chromedp.CSS(row+` details summary`)), chromedp.WaitVisible(chromedp.CSS(row+` input[name=logo_url]`)))
	width, err := chromedp.Run(p.ctx, chromedp.Evaluate[int](`document.documentElement.scrollWidth`))
	if err != nil {
		t.Fatal(err)
	}
	if width > 360 {
		t.Errorf("the site registry is %d px wide on a 360 px screen", width)
	}
	p.check("siteregistry-360px")
	p.colorScheme("dark")
	p.shot("siteregistry-360px-dark")
	p.colorScheme("light")
}
