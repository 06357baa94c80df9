package e2e

import (
	"bytes"
	"encoding/json"
	"mime/multipart"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// inquiryStack is an Explorer stack whose demo user is a researcher and
// whose broker knows two sites, each with an approved bank; brokerArgs
// are more flags for the broker.
func inquiryStack(t *testing.T, brokerArgs ...string) (*Stack, bank, bank) {
	t.Helper()
	s := explorerStack(t, Options{BrokerArgs: append([]string{"-registration", "approval", "-watch-interval", "1s"}, brokerArgs...)})
	s.AuthCLI(t, 0, "set-scopes", "-confirm", "-scopes", "broker:researcher", demoEmail)
	a := registerBank(t, s, "bank@charite.example")
	b := registerBank(t, s, "bank@dresden.example")
	s.BrokerCLI(t, 0, "approve-bank", "-site", "charite", a.email)
	s.BrokerCLI(t, 0, "approve-bank", "-site", "dresden", b.email)
	return s, a, b
}

// TestExplorerInquiry is the researcher's journey in a real browser: sign
// in, build a query from the registry, create a draft with an expose PDF,
// release it; the banks poll and reply through their API while the results
// page updates without a reload (total, table, chart); the CSV has the
// counts; close.
func TestExplorerInquiry(t *testing.T) {
	t.Parallel()
	p := newPage(t)
	s, bankA, bankB := inquiryStack(t)
	pdf := filepath.Join(t.TempDir(), "expose.pdf")
	if err := os.WriteFile(pdf, []byte(tinyPDF), 0o600); err != nil {
		t.Fatal(err)
	}

	p.do("open the inquiries, which asks to sign in", chromedp.Navigate(s.URL+"/explorer/inquiries"), chromedp.WaitVisible(chromedp.ID("email")))
	p.do("sign in", chromedp.SendKeys(chromedp.ID("email"), demoEmail), chromedp.SendKeys(chromedp.ID("password"), demoPass),
		chromedp.Click(chromedp.CSS("button[type=submit]")), chromedp.WaitVisible(chromedp.CSS(`a[href="/explorer/inquiries/new"]`)))
	if loc := p.location(); loc != s.URL+"/explorer/inquiries" {
		t.Errorf("signed in at %s, want the inquiries", loc)
	}
	p.wantText("main", "You have no inquiries yet.")
	p.check("inquiries-empty")

	p.do("open the form", chromedp.Click(chromedp.CSS(`a[href="/explorer/inquiries/new"]`)), chromedp.WaitVisible(chromedp.ID("label")))
	p.wantText("form.inquiry", "Charité – Universitätsmedizin Berlin", "University Hospital Dresden", "Query", "Target sites")
	p.check("inquiry-form")

	// The builder: find "Donor age", add it, give a range; find "Sex",
	// pick a value.
	find := func(text, urn, shows string) {
		t.Helper()
		btn := `.qb-found button[hx-get*="` + urn + `"]`
		p.do("find "+text, chromedp.Evaluate[chromedp.Void](`document.querySelector(".qb-find input[type=search]").value = ""`),
			chromedp.SendKeys(chromedp.CSS(`.qb-find input[type=search]`), text), chromedp.WaitVisible(chromedp.CSS(btn)),
			// The search runs as one types: the last answer must be in
			// before its button is clicked.
			chromedp.Poll[chromedp.Void](`!document.querySelector(".htmx-request")`), chromedp.Sleep(500*time.Millisecond))
		p.do("add "+text, chromedp.Click(chromedp.CSS(btn)), chromedp.WaitVisible(chromedp.CSS(shows)))
	}
	find("Donor age", "dataelement%3A14%3A1", `.qb-cond input[type=number]`)
	if focused := p.text(`:focus`); focused != "" || !strings.HasSuffix(attr(p, ":focus", "name"), ".from") {
		t.Errorf("after adding a condition the focus is on %q (%s)", focused, attr(p, ":focus", "name"))
	}
	p.wantText("#qb-status", "Condition on Donor age added.")
	// A value the registry refuses (donor age is 0-120) is named by the
	// registry's own check.
	p.do("give a range past the registry's", chromedp.SendKeys(chromedp.CSS(`.qb-cond input[name$=".from"]`), "18"), chromedp.SendKeys(chromedp.CSS(`.qb-cond input[name$=".to"]`), "150"),
		chromedp.Click(chromedp.CSS(`#qb-xml-box summary`)), chromedp.Click(chromedp.CSS(`#qb-xml-box button`)), chromedp.WaitVisible(chromedp.CSS(`#qb-preview [role=alert]`)))
	p.wantText("#qb-preview [role=alert]", "Donor age: The registry does not accept this value:", "150")
	p.do("correct it", chromedp.SetValue(chromedp.CSS(`.qb-cond input[name$=".to"]`), "99"))
	find("Sex", "dataelement%3A23%3A1", `.qb-cond input[type=checkbox][value=female]`)
	p.do("pick a value", chromedp.Click(chromedp.CSS(`.qb-cond input[type=checkbox][value=female]`)))
	p.do("show the query", chromedp.Click(chromedp.CSS(`#qb-xml-box button`)), chromedp.WaitNotPresent(chromedp.CSS(`#qb-preview [role=alert]`)))
	p.wantText("#qb-preview", "Every condition fits the registry.", "<Between>", "urn:mdr16:dataelement:14:1", "<v:Value>female</v:Value>")
	p.check("inquiry-form-query")
	p.do("a 360 px screen", chromedp.EmulateViewport(360, 740, chromedp.EmulateMobile))
	if width, err := chromedp.Run(p.ctx, chromedp.Evaluate[int](`document.documentElement.scrollWidth`)); err != nil || width > 360 {
		t.Errorf("the form is %d px wide on a 360 px screen (%v)", width, err)
	}
	p.shot("inquiry-form-query-360px")
	p.do("back to a wide screen", chromedp.EmulateViewport(1280, 900))

	p.do("fill the rest", chromedp.SendKeys(chromedp.ID("label"), "Adult women, feasibility"),
		chromedp.SendKeys(chromedp.ID("description"), "How many adult female donors?"),
		chromedp.Click(chromedp.CSS(`input[name=site][value=charite]`)), chromedp.Click(chromedp.CSS(`input[name=site][value=dresden]`)),
		chromedp.SetUploadFiles(chromedp.ID("expose"), []string{pdf}))
	p.do("save the draft", chromedp.Click(chromedp.CSS(`form.inquiry .actions button[type=submit]`)), chromedp.WaitVisible(chromedp.CSS(`form[action$="/release"]`)))
	p.wantText("main", "Adult women, feasibility", "Draft", "expose.pdf", "charite, dresden")
	id := strings.TrimPrefix(p.location(), s.URL+"/explorer/inquiries/")
	p.check("inquiry-draft")

	p.do("release it", chromedp.Click(chromedp.ID("release-ok")), chromedp.Click(chromedp.CSS(`form[action$="/release"] button`)), chromedp.WaitVisible(chromedp.ID("results-total")))
	p.wantText("main", "Released", "0 of 2 sites answered", "Not answered yet: charite, dresden")
	p.check("inquiry-released")
	// Wait for the event stream's first event, then mark the page: a
	// reload would lose the mark.
	p.do("the stream is open", chromedp.WaitVisible(chromedp.CSS(`#results[data-updated]`)),
		chromedp.Evaluate[chromedp.Void](`window.__sameDocument = true`))

	// The banks see the released inquiry with its query, and reply.
	var ids []string
	for _, it := range pollList(t, s, bankA).Items {
		ids = append(ids, it.ID)
	}
	if !strings.Contains(strings.Join(ids, ","), id) {
		t.Fatalf("bank A lists %v, not %s", ids, id)
	}
	_, q := s.Get(t, sb+"/inquiries/"+id+"/query", 200, bankA.auth()...)
	if !strings.Contains(string(q), "urn:mdr16:dataelement:14:1") || !strings.Contains(string(q), "female") {
		t.Fatalf("the bank reads the query\n%s", q)
	}
	reply := func(b bank, n string) {
		t.Helper()
		if res, body := s.Do(t, http.MethodPut, sb+"/inquiries/"+id+"/replies/"+b.email, strings.NewReader(n), append(b.auth(), "Content-Type", "text/plain")...); res.StatusCode != 200 {
			t.Fatalf("reply: %d %s", res.StatusCode, body)
		}
	}
	reply(bankA, "10")
	p.do("the first reply arrives", chromedp.Poll[chromedp.Void](`document.getElementById("results-total").textContent === "10"`, chromedp.WithPollingTimeout(10*time.Second)))
	p.wantText("main", "1 of 2 sites answered", "Not answered yet: dresden")
	p.wantText("#results-live", "Results updated: total 10, 1 of 2 sites answered.")
	reply(bankB, "5")
	p.do("the second reply arrives", chromedp.Poll[chromedp.Void](`document.getElementById("results-total").textContent === "15"`, chromedp.WithPollingTimeout(10*time.Second)))
	p.wantText("main", "Every target site has answered.")
	same, err := chromedp.Run(p.ctx, chromedp.Evaluate[bool](`window.__sameDocument === true`))
	if err != nil || !same {
		t.Fatalf("the page reloaded (%v)", err)
	}
	bars, err := chromedp.Run(p.ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll("svg.chart .chart-row")].map(g => g.textContent.replace(/\s+/g, " ").trim())`))
	if err != nil || strings.Join(bars, "|") != "charite 10|dresden 5" {
		t.Fatalf("chart rows %q (%v)", bars, err)
	}
	widths, err := chromedp.Run(p.ctx, chromedp.Evaluate[[]int](`[...document.querySelectorAll("svg.chart rect.chart-bar")].map(r => r.width.baseVal.value)`))
	if err != nil || len(widths) != 2 || widths[0] != 2*widths[1] {
		t.Fatalf("bar widths %v (%v)", widths, err)
	}
	p.check("inquiry-results")
	p.colorScheme("dark")
	p.shot("inquiry-results-dark")
	p.colorScheme("light")
	// The CSV, as the browser downloads it with the session.
	csv := p.fetchCSV(id)
	if !strings.HasPrefix(csvTable(csv), "site,answered,count,replies,last_reply_utc,unreadable,samples,entity,stratification,stratum\ncharite,true,10,1,") || !strings.Contains(csv, "\ndresden,true,5,1,") {
		t.Fatalf("CSV:\n%s", csv)
	}

	// The connector's Reply document (ISO-8859-1) replaces charite's count,
	// and dresden sends something that is no count: it shows as
	// unreadable, live, never as 0.
	if res, body := s.Do(t, http.MethodPut, sb+"/inquiries/"+id+"/replies/"+bankA.email,
		bytes.NewReader(latin1(`{"donor":{"label":"Spender","count":12,"stratifications":[{"title":"Geschlecht","strata":[{"label":"männlich","count":5},{"label":"weiblich","count":7}]}]},"sample":{"label":"Proben","count":30,"stratifications":[]}}`)),
		append(bankA.auth(), "Content-Type", "text/plain; charset=ISO-8859-1")...); res.StatusCode != 200 {
		t.Fatalf("reply: %d %s", res.StatusCode, body)
	}
	reply(bankB, "lots <b> "+strings.Repeat("x", 200))
	p.do("the unreadable reply arrives", chromedp.Poll[chromedp.Void](`document.getElementById("results-total").textContent === "12 (1 unreadable)"`, chromedp.WithPollingTimeout(10*time.Second)))
	p.wantText("main", "unreadable", "Samples", "Unreadable replies, not in the total: 1")

	// A phone-sized screen, in German, the breakdowns and the unreadable
	// body open.
	// The results stream renders #results again once it connects, closing
	// the details: open them (again) until the text is all there.
	p.do("in German", chromedp.Navigate(s.URL+"/explorer/inquiries/"+id+"?lang=de"), chromedp.WaitVisible(chromedp.ID("results-total")))
	german := []string{"Freigegeben", "Alle Zielstandorte haben geantwortet.", "Antworten je Standort", "nicht lesbar", "männlich", "lots <b>"}
	wantJS, _ := json.Marshal(german)
	if err := chromedp.Do(p.ctx, chromedp.Poll[chromedp.Void](`(() => { document.querySelectorAll("#results details").forEach(d => d.open = true);
		const t = document.querySelector("main").innerText; return `+string(wantJS)+`.every(w => t.includes(w)); })()`, chromedp.WithPollingTimeout(15*time.Second))); err != nil {
		p.wantText("main", german...)
		t.Fatalf("the German results page: %v", err)
	}
	p.do("a 360 px screen", chromedp.EmulateViewport(360, 740, chromedp.EmulateMobile))
	width, err := chromedp.Run(p.ctx, chromedp.Evaluate[int](`document.documentElement.scrollWidth`))
	if err != nil || width > 360 {
		t.Errorf("the results page is %d px wide on a 360 px screen (%v)", width, err)
	}
	p.check("inquiry-results-de-360px")
	p.do("back to a wide screen", chromedp.EmulateViewport(1280, 900))

	p.do("close it", chromedp.Navigate(s.URL+"/explorer/inquiries/"+id+"?lang=en"), chromedp.WaitVisible(chromedp.CSS(`form[action$="/close"]`)),
		chromedp.Click(chromedp.ID("close-ok")), chromedp.Click(chromedp.CSS(`form[action$="/close"] button`)), chromedp.WaitNotPresent(chromedp.CSS(`form[action$="/close"]`)))
	p.wantText("main", "Closed", "Total")
	p.check("inquiry-closed")
	if l := pollList(t, s, bankA); len(l.Items) != 0 {
		t.Fatalf("bank A still lists %v", l.Items)
	}
	p.do("the list", chromedp.Navigate(s.URL+"/explorer/inquiries"), chromedp.WaitVisible(chromedp.CSS(`a[href="/explorer/inquiries/`+id+`"]`)))
	p.wantText("table", "Adult women, feasibility", "Closed", "charite, dresden")
	p.check("inquiries-list")
}

// attr is an attribute of the first element sel finds.
func attr(p *page, sel, name string) string {
	p.t.Helper()
	v, err := chromedp.Run(p.ctx, chromedp.Evaluate[string](`(document.querySelector("`+sel+`") || {getAttribute: () => ""}).getAttribute("`+name+`") || ""`))
	if err != nil {
		p.t.Fatal(err)
	}
	return v
}

// TestExplorerInquiryNeedsRole: a signed-in user without the researcher
// scope is not offered inquiries, and is refused with the reason and whom
// to ask.
func TestExplorerInquiryNeedsRole(t *testing.T) {
	t.Parallel()
	s := explorerStack(t, Options{})
	c := signInHTTP(t, s)
	if _, home := getPage(t, c, s.URL+"/explorer/"); strings.Contains(home, `href="/explorer/inquiries"`) {
		t.Fatal("the nav offers inquiries to a user without the role")
	}
	code, body := getPage(t, c, s.URL+"/explorer/inquiries?lang=en")
	if code != http.StatusForbidden || !strings.Contains(body, "your account lacks the researcher role (scope broker:researcher). Ask an operator") {
		t.Fatalf("without the scope: %d\n%s", code, body)
	}
}

// TestExplorerInquiryPagesFast: the inquiry pages, signed in, answer 200
// five times after one warm-up, with an inquiry that has replies from both
// sites; the median and the slowest are logged (the 300 ms target is not
// asserted: timings belong in `make bench`).
func TestExplorerInquiryPagesFast(t *testing.T) {
	t.Parallel()
	s, bankA, bankB := inquiryStack(t)
	c := signInHTTP(t, s)
	id := releaseInquiryHTTP(t, s, c, "Speed")
	for b, n := range map[bank]string{bankA: "10", bankB: "5"} {
		if res, body := s.Do(t, http.MethodPut, sb+"/inquiries/"+id+"/replies/"+b.email, strings.NewReader(n), append(b.auth(), "Content-Type", "text/plain")...); res.StatusCode != 200 {
			t.Fatalf("reply: %d %s", res.StatusCode, body)
		}
	}
	builder := url.Values{"qb.group": {"g"}, "qb.cond": {"g.a"}, "qb.c.a.urn": {"urn:mdr16:dataelement:14:1"}, "qb.c.a.from": {"18"}, "qb.c.a.to": {"99"}}
	paths := []string{"/explorer/inquiries", "/explorer/inquiries/new", "/explorer/inquiries/" + id, "/explorer/inquiries/" + id + "/edit",
		"/explorer/inquiries/" + id + "/replies.csv", "/explorer/query/elements?qb.ns=mdr16&g=g&q=Alter",
		"/explorer/query/condition?g=g&urn=urn:mdr16:dataelement:23:1", "/explorer/query/preview?" + builder.Encode(),
		"/explorer/query/catalogue?qb.ns=mdr16", "/explorer/query/catalogue/element?key=e1&urn=urn:mdr16:dataelement:23:1",
		"/explorer/static/inquiries.css", "/explorer/static/inquiries.js"}
	for _, lang := range []string{"en", "de"} {
		for _, path := range paths {
			get := func() (time.Duration, int) {
				req, _ := http.NewRequest(http.MethodGet, s.URL+path, nil)
				req.Header.Set("Accept-Language", lang)
				start := time.Now()
				res, err := c.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				readAll(t, res)
				return time.Since(start), res.StatusCode
			}
			if _, code := get(); code != 200 {
				t.Fatalf("%s: %d", path, code)
			}
			var took []time.Duration
			for range 5 {
				d, _ := get()
				took = append(took, d)
			}
			sort.Slice(took, func(i, j int) bool { return took[i] < took[j] })
			t.Logf("%s (%s): median %v, slowest %v", path, lang, took[2], took[4])
		}
	}
}

// releaseInquiryHTTP creates an inquiry for charite and dresden through the
// Explorer's form with the signed-in client c, releases it, and returns its
// id.
func releaseInquiryHTTP(t *testing.T, s *Stack, c *http.Client, label string) string {
	t.Helper()
	_, form := getPage(t, c, s.URL+"/explorer/inquiries/new")
	m := regexp.MustCompile(`name="csrf_token" value="([^"]+)"`).FindStringSubmatch(form)
	if m == nil {
		t.Fatal("no CSRF token on the form")
	}
	fields := url.Values{"csrf_token": {m[1]}, "label": {label}, "lastname": {"Lovelace"}, "site": {"charite", "dresden"},
		"qb.group": {"g"}, "qb.cond": {"g.a", "g.b"}, "qb.c.a.urn": {"urn:mdr16:dataelement:14:1"}, "qb.c.a.from": {"18"},
		"qb.c.b.urn": {"urn:mdr16:dataelement:23:1"}, "qb.c.b.v": {"female"}}
	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	for k, vs := range fields {
		for _, v := range vs {
			_ = w.WriteField(k, v)
		}
	}
	fw, _ := w.CreateFormFile("expose", "expose.pdf")
	_, _ = fw.Write([]byte(tinyPDF))
	_ = w.Close()
	req, _ := http.NewRequest(http.MethodPost, s.URL+"/explorer/inquiries", &body)
	req.Header.Set("Content-Type", w.FormDataContentType())
	req.Header.Set("Origin", s.URL)
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	page := readAll(t, res)
	id := strings.TrimPrefix(res.Request.URL.Path, "/explorer/inquiries/")
	if res.StatusCode != 200 || id == "" || strings.Contains(id, "/") {
		t.Fatalf("create: %d at %s\n%s", res.StatusCode, res.Request.URL, page)
	}
	req, _ = http.NewRequest(http.MethodPost, s.URL+"/explorer/inquiries/"+id+"/release", strings.NewReader(url.Values{"csrf_token": {m[1]}, "confirm": {"yes"}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if res, err := c.Do(req); err != nil || res.StatusCode != 200 {
		t.Fatalf("release: %v %v", res, err)
	}
	return id
}

// fetchCSV is the inquiry's replies CSV as the page downloads it, with
// the session.
func (p *page) fetchCSV(id string) string {
	p.t.Helper()
	file, err := chromedp.Run(p.ctx, chromedp.Evaluate[string](`fetch("/explorer/inquiries/`+id+`/replies.csv").then(r => r.text())`, chromedp.EvalAwaitPromise))
	if err != nil {
		p.t.Fatalf("fetching the CSV: %v", err)
	}
	return file
}
