package e2e

import (
	"bytes"
	"html"
	"mime/multipart"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestExplorerInquirySteps drives, over HTTP, what surrounds an inquiry:
// release and close ask for a confirmation; the expose downloads for its
// author and no one else; a form over the body limit comes back as the
// form with what was typed; the page says how far the inquiry has got to
// its sites (their banks' polls and fetches).
func TestExplorerInquirySteps(t *testing.T) {
	t.Parallel()
	s := explorerStack(t, Options{BrokerArgs: []string{"-registration", "approval", "-watch-interval", "1s"}, GatewayArgs: []string{"-max-body", "1048576"}})
	s.AuthCLI(t, 0, "set-scopes", "-confirm", "-scopes", "broker:researcher", demoEmail)
	bankA := registerBank(t, s, "bank@charite.example")
	bankB := registerBank(t, s, "bank@dresden.example")
	s.BrokerCLI(t, 0, "approve-bank", "-site", "charite", bankA.email)
	s.BrokerCLI(t, 0, "approve-bank", "-site", "dresden", bankB.email)
	c := signInHTTP(t, s)
	csrf := csrfOfPage(t, c, s.URL+"/explorer/inquiries/new")
	fields := url.Values{"csrf_token": {csrf}, "label": {"Steps"}, "lastname": {"Lovelace"}, "site": {"charite", "dresden"},
		"qb.group": {"g"}, "qb.cond": {"g.a"}, "qb.c.a.urn": {"urn:mdr16:dataelement:14:1"}, "qb.c.a.from": {"18"}}

	// Over the limit (1 MiB here): the form again, 413, what was typed kept.
	res, page := postInquiryForm(t, c, s.URL+"/explorer/inquiries", s.URL, fields, bytes.Repeat([]byte("%PDF-"), 300<<10))
	for _, want := range []string{"The form is larger than 1 MiB", `name="label" value="Steps"`, `name="lastname" value="Lovelace"`, `value="urn:mdr16:dataelement:14:1"`} {
		if res.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(page, want) {
			t.Fatalf("over the limit, lacks %q: %d\n%s", want, res.StatusCode, page)
		}
	}

	res, page = postInquiryForm(t, c, s.URL+"/explorer/inquiries", s.URL, fields, []byte(tinyPDF))
	id := strings.TrimPrefix(res.Request.URL.Path, "/explorer/inquiries/")
	if res.StatusCode != 200 || id == "" || strings.Contains(id, "/") || !strings.Contains(page, `href="/explorer/inquiries/`+id+`/expose"`) {
		t.Fatalf("create: %d at %s\n%s", res.StatusCode, res.Request.URL, page)
	}

	// Release without the confirmation: the page again, still a draft.
	if res, page := postPage(t, c, s.URL+"/explorer/inquiries/"+id+"/release", s.URL, url.Values{"csrf_token": {csrf}}); res.StatusCode != http.StatusBadRequest ||
		!strings.Contains(page, "Not released: tick") || !strings.Contains(page, "Draft") {
		t.Fatalf("release unconfirmed: %d\n%s", res.StatusCode, page)
	}
	if res, page := postPage(t, c, s.URL+"/explorer/inquiries/"+id+"/release", s.URL, url.Values{"csrf_token": {csrf}, "confirm": {"yes"}}); res.StatusCode != 200 ||
		!strings.Contains(page, "Released") || !strings.Contains(page, "0 of 2 target sites have fetched the inquiry.") {
		t.Fatalf("release: %d\n%s", res.StatusCode, page)
	}

	// The expose: its author downloads it.
	res, err := c.Get(s.URL + "/explorer/inquiries/" + id + "/expose")
	if err != nil {
		t.Fatal(err)
	}
	if body := readAll(t, res); res.StatusCode != 200 || body != tinyPDF || res.Header.Get("Content-Type") != "application/pdf" ||
		res.Header.Get("Content-Disposition") != "attachment; filename=expose.pdf" {
		t.Fatalf("expose: %d %v", res.StatusCode, res.Header)
	}
	// Another researcher does not.
	s.AuthCLI(t, 0, "create-user", "-email", "eve@fris.test", "-password", "another password", "-name", "Eve Researcher", "-email-verified", "-scopes", "broker:researcher")
	eve := signInHTTPAs(t, s, "eve@fris.test", "another password", "Eve Researcher")
	if code, body := getPage(t, eve, s.URL+"/explorer/inquiries/"+id+"/expose"); code != http.StatusNotFound || strings.Contains(body, "%PDF") {
		t.Fatalf("another's expose: %d", code)
	}

	// The charité bank polls and fetches the inquiry; Dresden's does not.
	if res, body := s.Do(t, http.MethodGet, sb+"/inquiries", nil, bankA.auth()...); res.StatusCode != 200 || !strings.Contains(string(body), id) {
		t.Fatalf("poll: %d %s", res.StatusCode, body)
	}
	if res, body := s.Do(t, http.MethodGet, sb+"/inquiries/"+id, nil, bankA.auth()...); res.StatusCode != 200 {
		t.Fatalf("fetch: %d %s", res.StatusCode, body)
	}
	_, page = getPage(t, c, s.URL+"/explorer/inquiries/"+id+"?lang=en")
	for _, want := range []string{"1 of 2 target sites have fetched the inquiry.", `<tr data-site="charite"><th scope="row">charite</th>`, "just now", "never yet", "not yet"} {
		if !strings.Contains(page, want) {
			t.Fatalf("the page lacks %q:\n%s", want, page)
		}
	}
	// The researcher API says the same.
	s.AuthCLI(t, 0, "create-client", "-client-id", demoClient, "-secret", demoSecret, "-name", "E2E Client", "-type", "MDR", "-redirect-url", callback)
	access, _ := researcherToken(t, s, demoEmail, demoPass)
	if res, body := s.Do(t, http.MethodGet, sb+"/researcher/inquiries/"+id+"/reach", nil, "Authorization", "Bearer "+access); res.StatusCode != 200 ||
		!strings.Contains(string(body), `"seen":1`) || !strings.Contains(string(body), `"site_id":"dresden"`) {
		t.Fatalf("reach: %d %s", res.StatusCode, body)
	}

	// Close asks for its confirmation too.
	if res, page := postPage(t, c, s.URL+"/explorer/inquiries/"+id+"/close", s.URL, url.Values{"csrf_token": {csrf}}); res.StatusCode != http.StatusBadRequest ||
		!strings.Contains(page, "Not closed: tick") {
		t.Fatalf("close unconfirmed: %d\n%s", res.StatusCode, page)
	}
	if res, page := postPage(t, c, s.URL+"/explorer/inquiries/"+id+"/close", s.URL, url.Values{"csrf_token": {csrf}, "confirm": {"yes"}}); res.StatusCode != 200 ||
		!strings.Contains(page, "Closed") {
		t.Fatalf("close: %d\n%s", res.StatusCode, page)
	}
}

func csrfOfPage(t *testing.T, c *http.Client, u string) string {
	t.Helper()
	_, page := getPage(t, c, u)
	m := regexp.MustCompile(`name="csrf_token" value="([^"]+)"`).FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no CSRF token on %s", u)
	}
	return m[1]
}

// postInquiryForm posts the inquiry form, fields first, then the file.
func postInquiryForm(t *testing.T, c *http.Client, u, origin string, fields url.Values, pdf []byte) (*http.Response, string) {
	t.Helper()
	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	for k, vs := range fields {
		for _, v := range vs {
			_ = w.WriteField(k, v)
		}
	}
	fw, _ := w.CreateFormFile("expose", "expose.pdf")
	_, _ = fw.Write(pdf)
	_ = w.Close()
	req, _ := http.NewRequest(http.MethodPost, u, &body)
	req.Header.Set("Content-Type", w.FormDataContentType())
	req.Header.Set("Origin", origin)
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return res, readAll(t, res)
}

func postPage(t *testing.T, c *http.Client, u, origin string, form url.Values) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, u, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", origin)
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return res, readAll(t, res)
}

// signInHTTPAs is signInHTTP for another user.
func signInHTTPAs(t *testing.T, s *Stack, email, password, name string) *http.Client {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Timeout: 30 * time.Second}
	res, err := c.Get(s.URL + "/explorer/login?return=" + url.QueryEscape("/explorer/"))
	if err != nil {
		t.Fatal(err)
	}
	body := readAll(t, res)
	form := url.Values{"email": {email}, "password": {password}}
	for _, m := range regexp.MustCompile(`<input type="hidden" name="([^"]+)" value="([^"]*)">`).FindAllStringSubmatch(body, -1) {
		form.Set(m[1], html.UnescapeString(m[2]))
	}
	res, err = c.PostForm(s.URL+"/oauth2/authorize", form)
	if err != nil {
		t.Fatal(err)
	}
	body = readAll(t, res)
	if res.StatusCode != 200 || res.Request.URL.Path != "/explorer/" || !strings.Contains(body, name) {
		t.Fatalf("sign-in of %s: %d at %s\n%s", email, res.StatusCode, res.Request.URL, body)
	}
	return c
}
