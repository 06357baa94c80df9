package e2e

import (
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

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
	s.AuthCLI(t, 0, "set-scopes", "-scopes", identity.ScopeResearcher, demoEmail)
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

	s.AuthCLI(t, 0, "set-scopes", "-scopes", identity.ScopeOperator+","+identity.ScopeResearcher, demoEmail)
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
