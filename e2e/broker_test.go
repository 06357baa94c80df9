package e2e

import (
	"encoding/base64"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

const (
	sb         = "/broker/rest/searchbroker"
	brokerName = "E2E Broker"
	demoQuery  = `<Query xmlns="http://schema.samply.de/common/Query" xmlns:a="http://schema.samply.de/common/Attribute" xmlns:k="http://schema.samply.de/common/MdrKey" xmlns:v="http://schema.samply.de/common/Value"><Where><Eq><a:Attribute><k:MdrKey>urn:mdr16:dataelement:23:1</k:MdrKey><v:Value>M</v:Value></a:Attribute></Eq></Where></Query>`
	tinyPDF    = "%PDF-1.4\n1 0 obj<</Type/Catalog>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF\n"
)

// bank is a registered bank as a client sees it.
type bank struct{ email, token string }

func (b bank) auth() []string { return []string{"Authorization", "Samply " + b.token} }

func registerBank(t *testing.T, s *Stack, email string) bank {
	t.Helper()
	res, body := s.Do(t, http.MethodPut, sb+"/banks/"+email, nil, "Accept", "text/plain")
	if res.StatusCode != http.StatusCreated {
		t.Fatalf("register %s = %d: %s", email, res.StatusCode, body)
	}
	wantHeader(t, res, "Content-Type", "text/plain; charset=utf-8")
	if !regexp.MustCompile(`^[0-9a-f]{64}$`).Match(body) {
		t.Fatalf("token %q is not 64 hex characters", body)
	}
	return bank{email: email, token: string(body)}
}

// researcherToken logs a user in through the browser flow and returns an
// access token and its subject.
func researcherToken(t *testing.T, s *Stack, email, password string) (string, string) {
	t.Helper()
	c := browser(t)
	form := loginForm(t, s, c, "client_id="+demoClient)
	form.Set("email", email)
	form.Set("password", password)
	res, body := submit(t, s, c, form)
	if res.StatusCode != http.StatusFound {
		t.Fatalf("login %s = %d: %s", email, res.StatusCode, body)
	}
	code := regexp.MustCompile(`code=([^&]+)`).FindStringSubmatch(res.Header.Get("Location"))[1]
	res2, v := postJSON(t, s, oauth+"/token", codeRequest(code))
	wantStatus(t, res2, v, 200)
	access, _, _ := tokens(t, v)
	return access, jwtPart(t, access, 1).(map[string]any)["sub"].(string)
}

func bearer(tok string) []string {
	return []string{"Authorization", "Bearer " + tok, "Content-Type", "application/json"}
}

func inquiryJSON(label string, sites []string, extra string) string {
	m := map[string]any{
		"label": label, "description": "how many?", "query": demoQuery,
		"contact":      map[string]string{"title": "Dr.", "firstname": "Ada", "lastname": "Lovelace", "email": "ada@fris.test"},
		"target_sites": sites, "search_for": []string{"Patienten"},
		"expose_pdf": base64.StdEncoding.EncodeToString([]byte(tinyPDF)), "expose_filename": "study.pdf",
	}
	if extra != "" {
		var more map[string]any
		if err := json.Unmarshal([]byte("{"+extra+"}"), &more); err != nil {
			panic(err)
		}
		for k, v := range more {
			m[k] = v
		}
	}
	var buf strings.Builder
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // the tests edit the query inside the JSON text
	_ = enc.Encode(m)
	return strings.TrimSpace(buf.String())
}

// researcherDo sends a JSON request with a bearer token and decodes the answer.
func researcherDo(t *testing.T, s *Stack, method, path, tok, body string, want int) map[string]any {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	res, b := s.Do(t, method, sb+"/researcher"+path, r, bearer(tok)...)
	if res.StatusCode != want {
		t.Fatalf("%s %s = %d, want %d: %s", method, path, res.StatusCode, want, b)
	}
	wantHeader(t, res, "Server", brokerName)
	v, _ := JSON(t, b).(map[string]any)
	return v
}

type inquiryList struct {
	Items []struct {
		ID       string `xml:"Id"`
		Revision string `xml:"Revision"`
	} `xml:"Inquiry"`
}

func pollList(t *testing.T, s *Stack, b bank) inquiryList {
	t.Helper()
	res, body := s.Get(t, sb+"/inquiries", 200, b.auth()...)
	wantHeader(t, res, "Content-Type", "application/xml; charset=utf-8")
	var l inquiryList
	if err := xml.Unmarshal(body, &l); err != nil {
		t.Fatalf("inquiry list: %v\n%s", err, body)
	}
	return l
}

func listed(l inquiryList, id string) string {
	for _, it := range l.Items {
		if it.ID == id {
			return it.Revision
		}
	}
	return ""
}

// eventually retries check until it passes or the broker's caches (1 s by
// default) must have caught up.
func eventually(t *testing.T, check func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !check() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached within 5s")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func wantText(t *testing.T, s *Stack, method, path string, body io.Reader, want int, headers ...string) (*http.Response, string) {
	t.Helper()
	res, b := s.Do(t, method, path, body, headers...)
	if res.StatusCode != want {
		t.Fatalf("%s %s = %d, want %d: %s", method, path, res.StatusCode, want, b)
	}
	wantHeader(t, res, "Server", brokerName)
	if want >= 400 {
		wantHeader(t, res, "Content-Type", "text/plain; charset=utf-8")
	}
	return res, string(b)
}

func TestBroker(t *testing.T) {
	t.Parallel()
	s := NewStack(t, Options{BrokerArgs: []string{"-name", brokerName, "-max-reply-bytes", "4096", "-registration", "approval"}})
	if s.Broker == nil {
		t.Fatal("the broker binary was not built")
	}
	seedAuth(t, s)
	access, sub := researcherToken(t, s, demoEmail, demoPass)
	s.AuthCLI(t, 0, "create-user", "-email", "eve@fris.test", "-password", "another password", "-name", "Eve",
		"-scopes", "broker:researcher")
	eveAccess, _ := researcherToken(t, s, "eve@fris.test", "another password")

	t.Run("NameHealthAndPaths", func(t *testing.T) {
		_, body := wantText(t, s, http.MethodGet, sb+"/name", nil, 200, "Accept", "text/plain")
		if body != brokerName {
			t.Fatalf("name = %q", body)
		}
		_, body = wantText(t, s, http.MethodGet, "/broker/rest/health", nil, 200)
		if body != "OK" {
			t.Fatalf("health = %q", body)
		}
		res, _ := wantText(t, s, http.MethodPost, sb+"/inquiries", nil, 405)
		wantHeader(t, res, "Allow", "GET, HEAD")
		res, _ = wantText(t, s, http.MethodPost, sb+"/banks/x@y.org", nil, 405)
		wantHeader(t, res, "Allow", "DELETE, PUT")
		wantText(t, s, http.MethodGet, sb+"/nothing/here", nil, 404)
	})

	a := registerBank(t, s, "Bank-A@Charite.example")
	b := registerBank(t, s, "bank-b@dresden.example")
	c := registerBank(t, s, "bank-c@muenchen.example")

	t.Run("Registration", func(t *testing.T) {
		wantText(t, s, http.MethodPut, sb+"/banks/not-an-email", nil, 400)
		wantText(t, s, http.MethodPut, sb+"/banks/bank-a@charite.example", nil, 409) // case-insensitive
		// Pending: 202, with the bare token too; another bank's token 403; unknown 404.
		wantText(t, s, http.MethodGet, sb+"/banks/bank-a@charite.example/status", nil, 202, "Authorization", a.token)
		wantText(t, s, http.MethodGet, sb+"/banks/bank-a@charite.example/status", nil, 403, b.auth()...)
		wantText(t, s, http.MethodGet, sb+"/banks/bank-a@charite.example/status", nil, 403)
		wantText(t, s, http.MethodGet, sb+"/banks/nobody@x.example/status", nil, 404, a.auth()...)
		// A pending bank polls an empty list.
		if l := pollList(t, s, a); len(l.Items) != 0 {
			t.Fatalf("pending bank sees %v", l)
		}
		wantText(t, s, http.MethodGet, sb+"/inquiries", nil, 401)
		wantText(t, s, http.MethodGet, sb+"/inquiries", nil, 401, "Authorization", "Samply "+strings.Repeat("0", 64))

		s.BrokerCLI(t, 0, "approve-bank", "-site", "charite", "bank-a@charite.example")
		s.BrokerCLI(t, 0, "approve-bank", "-site", "dresden", b.email)
		s.BrokerCLI(t, 0, "approve-bank", "-site", "muenchen", c.email)
		s.BrokerCLI(t, 1, "approve-bank", "-site", "bad site", c.email)
		s.BrokerCLI(t, 1, "approve-bank", "-site", "x", "nobody@x.example")
		wantText(t, s, http.MethodGet, sb+"/banks/bank-a@charite.example/status", nil, 200, a.auth()...)
		if out := s.BrokerCLI(t, 0, "banks"); !strings.Contains(out, "bank-a@charite.example") || !strings.Contains(out, "ACTIVE") {
			t.Fatalf("banks:\n%s", out)
		}
	})

	var id, exposeURL string
	t.Run("ResearcherCreatesAndReleases", func(t *testing.T) {
		// Missing or invalid bearer token: 401 with a challenge.
		res, body := s.Do(t, http.MethodGet, sb+"/researcher/inquiries", nil)
		if res.StatusCode != 401 || !strings.HasPrefix(res.Header.Get("WWW-Authenticate"), "Bearer") {
			t.Fatalf("no token = %d %q: %s", res.StatusCode, res.Header.Get("WWW-Authenticate"), body)
		}
		res, _ = s.Do(t, http.MethodGet, sb+"/researcher/inquiries", nil, "Authorization", "Bearer not.a.jwt")
		if res.StatusCode != 401 {
			t.Fatalf("bad token = %d", res.StatusCode)
		}
		for name, bad := range map[string]string{
			"BadXML":          strings.Replace(inquiryJSON("x", []string{"charite"}, ""), "<Where>", "<Where", 1),
			"UnknownOperator": strings.ReplaceAll(inquiryJSON("x", []string{"charite"}, ""), "Eq>", "Approx>"),
			"MissingMdrKey":   strings.Replace(inquiryJSON("x", []string{"charite"}, ""), "<k:MdrKey>urn:mdr16:dataelement:23:1</k:MdrKey>", "", 1),
			"NoSites":         inquiryJSON("x", nil, ""),
			"NoLabel":         inquiryJSON("", []string{"charite"}, ""),
			"NotPDF":          strings.Replace(inquiryJSON("x", []string{"charite"}, ""), base64.StdEncoding.EncodeToString([]byte(tinyPDF)), base64.StdEncoding.EncodeToString([]byte("hello")), 1),
			"PastExpiry":      inquiryJSON("x", []string{"charite"}, `"expires_at":"2001-01-01T00:00:00Z"`),
		} {
			v := researcherDo(t, s, http.MethodPost, "/inquiries", access, bad, 400)
			if name == "UnknownOperator" && !strings.Contains(v["error_description"].(string), "unknown operator Approx") {
				t.Fatalf("reason = %v", v)
			}
		}
		in := researcherDo(t, s, http.MethodPost, "/inquiries", access, inquiryJSON("Lung study", []string{"charite", "dresden"}, ""), 200)
		id = in["id"].(string)
		if in["status"] != "DRAFT" || in["revision"] != float64(1) || in["author"] != sub || in["expose"].(map[string]any)["filename"] != "study.pdf" {
			t.Fatalf("created = %v", in)
		}
		// A draft is invisible to banks.
		wantText(t, s, http.MethodGet, sb+"/inquiries/"+id, nil, 404, a.auth()...)
		// Another researcher neither sees nor changes it.
		researcherDo(t, s, http.MethodGet, "/inquiries/"+id, eveAccess, "", 404)
		researcherDo(t, s, http.MethodPost, "/inquiries/"+id+"/release", eveAccess, "", 404)
		if l := researcherDo(t, s, http.MethodGet, "/inquiries", eveAccess, "", 200); len(l["inquiries"].([]any)) != 0 {
			t.Fatalf("eve lists %v", l)
		}
		// Edit: the revision increments; the same content again does not.
		up := researcherDo(t, s, http.MethodPut, "/inquiries/"+id, access, inquiryJSON("Lung study, revised", []string{"charite", "dresden"}, `"expose_pdf":""`), 200)
		if up["revision"] != float64(2) || up["expose"] == nil {
			t.Fatalf("updated = %v", up)
		}
		up = researcherDo(t, s, http.MethodPut, "/inquiries/"+id, access, inquiryJSON("Lung study, revised", []string{"charite", "dresden"}, `"expose_pdf":""`), 200)
		if up["revision"] != float64(2) {
			t.Fatalf("unchanged content bumped the revision: %v", up)
		}
		rel := researcherDo(t, s, http.MethodPost, "/inquiries/"+id+"/release", access, "", 200)
		if rel["status"] != "RELEASED" {
			t.Fatalf("released = %v", rel)
		}
		got := researcherDo(t, s, http.MethodGet, "/inquiries/"+id, access, "", 200)
		if got["label"] != "Lung study, revised" {
			t.Fatalf("get = %v", got)
		}
		if l := researcherDo(t, s, http.MethodGet, "/inquiries?status=RELEASED", access, "", 200); len(l["inquiries"].([]any)) != 1 {
			t.Fatalf("own list = %v", l)
		}
	})

	t.Run("BanksReadTheInquiry", func(t *testing.T) {
		eventually(t, func() bool { return listed(pollList(t, s, a), id) == "2" })
		if rev := listed(pollList(t, s, b), id); rev != "2" {
			t.Fatalf("dresden sees revision %q", rev)
		}
		if l := pollList(t, s, c); listed(l, id) != "" {
			t.Fatalf("muenchen sees the inquiry: %v", l)
		}
		// Another site's bank: 404 everywhere, as for an unknown id.
		for _, p := range []string{"", "/query", "/contact", "/info", "/expose"} {
			wantText(t, s, http.MethodGet, sb+"/inquiries/"+id+p, nil, 404, c.auth()...)
			wantText(t, s, http.MethodGet, sb+"/inquiries/999"+p, nil, 404, a.auth()...)
			wantText(t, s, http.MethodGet, sb+"/inquiries/abc"+p, nil, 400, a.auth()...)
			wantText(t, s, http.MethodGet, sb+"/inquiries/"+id+p, nil, 401)
		}

		res, body := wantText(t, s, http.MethodGet, sb+"/inquiries/"+id, nil, 200, a.auth()...)
		wantHeader(t, res, "Content-Type", "application/xml; charset=utf-8")
		var whole struct {
			XMLName  xml.Name `xml:"http://schema.samply.de/common/Inquiry Inquiry"`
			ID       string   `xml:"id,attr"`
			Revision string   `xml:"revision,attr"`
			Query    struct {
				XMLName xml.Name `xml:"http://schema.samply.de/common/Query Query"`
			}
			ExposeURL string `xml:"http://schema.samply.de/common/Inquiry ExposeURL"`
			Author    struct {
				Lastname string `xml:"http://schema.samply.de/common/Inquiry lastname"`
			} `xml:"http://schema.samply.de/common/Inquiry Author"`
			Label     string   `xml:"http://schema.samply.de/common/Inquiry Label"`
			SearchFor []string `xml:"http://schema.samply.de/common/Inquiry SearchFor"`
		}
		if err := xml.Unmarshal([]byte(body), &whole); err != nil {
			t.Fatalf("%v\n%s", err, body)
		}
		if whole.ID != id || whole.Revision != "2" || whole.Author.Lastname != "Lovelace" || whole.Label != "Lung study, revised" || len(whole.SearchFor) != 1 {
			t.Fatalf("inquiry = %+v", whole)
		}
		exposeURL = whole.ExposeURL
		wantContains(t, exposeURL, sb+"/exposes/")

		_, body = wantText(t, s, http.MethodGet, sb+"/inquiries/"+id+"/query", nil, 200, a.auth()...)
		wantContains(t, body, `<Query xmlns="http://schema.samply.de/common/Query"`)
		wantContains(t, body, `<k:MdrKey>urn:mdr16:dataelement:23:1</k:MdrKey>`)
		_, body = wantText(t, s, http.MethodGet, sb+"/inquiries/"+id+"/contact", nil, 200, a.auth()...)
		wantContains(t, body, `<Contact xmlns="http://schema.samply.de/common/Inquiry"><title>Dr.</title><firstname>Ada</firstname><lastname>Lovelace</lastname><email>ada@fris.test</email></Contact>`)
		_, body = wantText(t, s, http.MethodGet, sb+"/inquiries/"+id+"/info", nil, 200, a.auth()...)
		wantContains(t, body, `<Info xmlns="http://schema.samply.de/common/Inquiry"><Label>Lung study, revised</Label><Description>how many?</Description><Revision>2</Revision></Info>`)

		res, body = wantText(t, s, http.MethodGet, sb+"/inquiries/"+id+"/expose", nil, 200, a.auth()...)
		wantHeader(t, res, "Content-Type", "application/pdf")
		wantHeader(t, res, "Content-Disposition", `attachment; filename=study.pdf`)
		if body != tinyPDF {
			t.Fatalf("expose = %q", body)
		}
		exposePath := exposeURL[strings.Index(exposeURL, sb):]
		_, body = wantText(t, s, http.MethodGet, exposePath, nil, 200, b.auth()...)
		if body != tinyPDF {
			t.Fatalf("expose by id = %q", body)
		}
		wantText(t, s, http.MethodGet, exposePath, nil, 404, c.auth()...)
		wantText(t, s, http.MethodGet, exposePath, nil, 401)
		wantText(t, s, http.MethodGet, sb+"/exposes/999", nil, 404, a.auth()...)
		wantText(t, s, http.MethodGet, sb+"/exposes/x", nil, 400, a.auth()...)
	})

	t.Run("Replies", func(t *testing.T) {
		path := sb + "/inquiries/" + id + "/replies/"
		textBody := func(s string) io.Reader { return strings.NewReader(s) }
		plain := []string{"Content-Type", "text/plain"}
		_, body := wantText(t, s, http.MethodPut, path+a.email, textBody("10"), 200, append(a.auth(), plain...)...)
		if body == "" {
			t.Fatal("empty 200 body")
		}
		// Overwritten by a second reply; the email's case does not matter.
		wantText(t, s, http.MethodPut, path+"BANK-A@charite.example", textBody("12"), 200, append(a.auth(), plain...)...)
		wantText(t, s, http.MethodPut, path+b.email, textBody(`{"donor":{"label":"donors","count":5},"sample":{"count":9}}`), 200,
			append(b.auth(), "Content-Type", "text/plain; charset=utf-8")...)
		// Another bank's token on a's reply, no token, empty, unknown, other site, too large, bad id.
		wantText(t, s, http.MethodPut, path+a.email, textBody("1"), 401, append(b.auth(), plain...)...)
		wantText(t, s, http.MethodPut, path+a.email, textBody("1"), 401, plain...)
		wantText(t, s, http.MethodPut, path+a.email, textBody(""), 400, append(a.auth(), plain...)...)
		wantText(t, s, http.MethodPut, sb+"/inquiries/999/replies/"+a.email, textBody("1"), 404, append(a.auth(), plain...)...)
		wantText(t, s, http.MethodPut, sb+"/inquiries/x/replies/"+a.email, textBody("1"), 400, append(a.auth(), plain...)...)
		wantText(t, s, http.MethodPut, path+c.email, textBody("1"), 404, append(c.auth(), plain...)...)
		wantText(t, s, http.MethodPut, path+a.email, textBody(strings.Repeat("9", 5000)), 413, append(a.auth(), plain...)...)
		wantText(t, s, http.MethodPut, path+a.email, textBody("7"), 400, append(a.auth(), "Content-Type", "text/plain; charset=klingon")...)
		// A Content-Type that is not UTF-8 reaches the broker with U+FFFD
		// (a proto string can hold nothing else), whose charset it refuses:
		// before, the gateway could not marshal the call and answered 500.
		wantText(t, s, http.MethodPut, path+a.email, textBody("7"), 400, append(a.auth(), "Content-Type", "text/plain; charset=\"x\xffy\"")...)

		v := researcherDo(t, s, http.MethodGet, "/inquiries/"+id+"/replies", access, "", 200)
		if v["total"] != float64(17) || len(v["replies"].([]any)) != 2 {
			t.Fatalf("replies = %v", v)
		}
		sites := v["sites"].([]any)
		if field(t, sites, 0, "site_id") != "charite" || field(t, sites, 0, "count") != float64(12) || field(t, sites, 1, "count") != float64(5) {
			t.Fatalf("sites = %v", sites)
		}
		researcherDo(t, s, http.MethodGet, "/inquiries/"+id+"/replies", eveAccess, "", 404)
		out := s.BrokerCLI(t, 0, "replies", id)
		wantContains(t, out, "total: 17")
	})

	t.Run("ClosedAndExpiredDisappear", func(t *testing.T) {
		in := researcherDo(t, s, http.MethodPost, "/inquiries", access,
			inquiryJSON("Short-lived", []string{"charite"}, fmt.Sprintf(`"expires_at":%q`, time.Now().Add(3*time.Second).UTC().Format(time.RFC3339Nano))), 200)
		short := in["id"].(string)
		researcherDo(t, s, http.MethodPost, "/inquiries/"+short+"/release", access, "", 200)
		eventually(t, func() bool { return listed(pollList(t, s, a), short) != "" })
		eventually(t, func() bool { return listed(pollList(t, s, a), short) == "" })
		wantText(t, s, http.MethodGet, sb+"/inquiries/"+short, nil, 404, a.auth()...)

		researcherDo(t, s, http.MethodPost, "/inquiries/"+id+"/close", access, "", 200)
		eventually(t, func() bool { return listed(pollList(t, s, a), id) == "" })
		wantText(t, s, http.MethodGet, sb+"/inquiries/"+id+"/info", nil, 404, a.auth()...)
		researcherDo(t, s, http.MethodPost, "/inquiries/"+id+"/release", access, "", 400)
		// Replies stay readable.
		if v := researcherDo(t, s, http.MethodGet, "/inquiries/"+id+"/replies", access, "", 200); v["total"] != float64(17) {
			t.Fatalf("replies after close = %v", v)
		}
	})

	t.Run("OperatorCLI", func(t *testing.T) {
		dir := t.TempDir()
		q, pdf := filepath.Join(dir, "q.xml"), filepath.Join(dir, "e.pdf")
		if err := os.WriteFile(q, []byte(demoQuery), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(pdf, []byte(tinyPDF), 0o600); err != nil {
			t.Fatal(err)
		}
		out := s.BrokerCLI(t, 0, "create-inquiry", "-author", sub, "-label", "From the CLI", "-query", q, "-expose", pdf,
			"-contact-lastname", "Op", "-sites", "muenchen", "-expires", "720h")
		cliID := field(t, JSON(t, []byte(out)), "id").(string)
		s.BrokerCLI(t, 0, "release-inquiry", cliID)
		eventually(t, func() bool { return listed(pollList(t, s, c), cliID) == "1" })
		wantContains(t, s.BrokerCLI(t, 0, "inquiries", "-status", "released"), "From the CLI")
		// The author sees it through REST as well.
		researcherDo(t, s, http.MethodGet, "/inquiries/"+cliID, access, "", 200)
		s.BrokerCLI(t, 1, "create-inquiry", "-author", sub, "-label", "bad", "-query", pdf, "-contact-lastname", "Op", "-sites", "x")
		s.BrokerCLI(t, 0, "close-inquiry", cliID)
		// seed-demo is idempotent.
		first := strings.TrimSpace(s.BrokerCLI(t, 0, "seed-demo", "-author", sub))
		if again := strings.TrimSpace(s.BrokerCLI(t, 0, "seed-demo", "-author", sub)); again != first {
			t.Fatalf("seed-demo made %s, then %s", first, again)
		}
		_, body := wantText(t, s, http.MethodGet, sb+"/inquiries/"+first+"/expose", nil, 200, a.auth()...)
		if !strings.HasPrefix(body, "%PDF-") {
			t.Fatalf("demo expose: %q", body[:10])
		}
	})

	t.Run("DeleteBank", func(t *testing.T) {
		wantText(t, s, http.MethodDelete, sb+"/banks/"+c.email, nil, 401, a.auth()...)
		wantText(t, s, http.MethodDelete, sb+"/banks/"+c.email, nil, 401, "Content-Type", "application/xml")
		wantText(t, s, http.MethodDelete, sb+"/banks/nobody@x.example", nil, 404, c.auth()...)
		wantText(t, s, http.MethodDelete, sb+"/banks/"+c.email, nil, 204, append(c.auth(), "Content-Type", "application/xml")...)
		// The replica that deleted it stops the token at once.
		wantText(t, s, http.MethodGet, sb+"/inquiries", nil, 401, c.auth()...)
		wantText(t, s, http.MethodGet, sb+"/banks/"+c.email+"/status", nil, 404, c.auth()...)
		s.BrokerCLI(t, 0, "delete-bank", b.email)
		wantText(t, s, http.MethodGet, sb+"/inquiries", nil, 401, b.auth()...)
	})
}

// TestBrokerRedis runs the bank flow on the Redis store, on one
// redis-server and on a Redis Cluster.
func TestBrokerRedis(t *testing.T) {
	t.Parallel()
	t.Run("redis", func(t *testing.T) { brokerRedis(t, Options{Redis: true}) })
	t.Run("cluster", func(t *testing.T) { brokerRedis(t, Options{Cluster: true}) })
}

func brokerRedis(t *testing.T, o Options) {
	o.BrokerArgs = []string{"-name", brokerName, "-registration", "approval"}
	s := NewStack(t, o)
	seedAuth(t, s)
	access, _ := researcherToken(t, s, demoEmail, demoPass)
	a := registerBank(t, s, "bank@charite.example")
	wantText(t, s, http.MethodPut, sb+"/banks/bank@charite.example", nil, 409)
	s.BrokerCLI(t, 0, "approve-bank", "-site", "charite", a.email)
	in := researcherDo(t, s, http.MethodPost, "/inquiries", access, inquiryJSON("On Redis", []string{"charite"}, ""), 200)
	id := in["id"].(string)
	researcherDo(t, s, http.MethodPost, "/inquiries/"+id+"/release", access, "", 200)
	eventually(t, func() bool { return listed(pollList(t, s, a), id) == "1" })
	wantText(t, s, http.MethodGet, sb+"/inquiries/"+id+"/expose", nil, 200, a.auth()...)
	wantText(t, s, http.MethodPut, sb+"/inquiries/"+id+"/replies/"+a.email, strings.NewReader("3"), 200, append(a.auth(), "Content-Type", "text/plain")...)
	if v := researcherDo(t, s, http.MethodGet, "/inquiries/"+id+"/replies", access, "", 200); v["total"] != float64(3) {
		t.Fatalf("replies = %v", v)
	}
	wantText(t, s, http.MethodDelete, sb+"/banks/"+a.email, nil, 204, a.auth()...)
	wantText(t, s, http.MethodGet, sb+"/inquiries", nil, 401, a.auth()...)
}
