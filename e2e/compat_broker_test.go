package e2e

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The deployed bank connector (share-client's BrokerConnector, with the
// paths of share-common's Constants), replayed request by request against
// the real gateway and a broker on its default configuration. Each call
// sends what the connector sends (headers, body bytes and their charset)
// and reads the answer as it does: the same statuses, the same XML
// elements in the same namespaces, the same JSON fields.

const (
	// brokerAddr is the broker address a site configures: every path the
	// connector builds is relative to it ("rest/searchbroker/...").
	brokerAddr = "/broker/"
)

// Connector status outcomes of BrokerConnector.register.
const (
	activationPending   = "BS_ACTIVATION_PENDING"
	authenticationError = "BS_AUTHENTICATION_ERROR"
	unreachable         = "BS_UNREACHABLE"
)

// connInquiry is the JAXB type de.samply.share.model.common.Inquiry.
type connInquiry struct {
	XMLName  xml.Name `xml:"http://schema.samply.de/common/Inquiry Inquiry"`
	ID       string   `xml:"id,attr"`
	Revision string   `xml:"revision,attr"`
	Query    *struct {
		XMLName xml.Name  `xml:"http://schema.samply.de/common/Query Query"`
		Where   *struct{} `xml:"http://schema.samply.de/common/Query Where"`
	}
	ExposeURL   string      `xml:"http://schema.samply.de/common/Inquiry ExposeURL"`
	Author      connContact `xml:"http://schema.samply.de/common/Inquiry Author"`
	Label       string      `xml:"http://schema.samply.de/common/Inquiry Label"`
	Description string      `xml:"http://schema.samply.de/common/Inquiry Description"`
	SearchFor   []string    `xml:"http://schema.samply.de/common/Inquiry SearchFor"`
}

type connContact struct {
	Title        string `xml:"http://schema.samply.de/common/Inquiry title"`
	Firstname    string `xml:"http://schema.samply.de/common/Inquiry firstname"`
	Lastname     string `xml:"http://schema.samply.de/common/Inquiry lastname"`
	Phone        string `xml:"http://schema.samply.de/common/Inquiry phone"`
	Email        string `xml:"http://schema.samply.de/common/Inquiry email"`
	Organization string `xml:"http://schema.samply.de/common/Inquiry organization"`
}

type connInfo struct {
	Label       string `xml:"http://schema.samply.de/common/Inquiry Label"`
	Description string `xml:"http://schema.samply.de/common/Inquiry Description"`
	Revision    string `xml:"http://schema.samply.de/common/Inquiry Revision"`
}

// connector is one site's BrokerConnector with its stored credentials.
type connector struct {
	t        *testing.T
	s        *Stack
	email    string // credentials.getUsername()
	passcode string // credentials.getPasscode(): the token, verbatim
}

func (c *connector) do(method, rel string, body []byte, headers ...string) (int, http.Header, []byte) {
	c.t.Helper()
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	res, b := c.s.Do(c.t, method, brokerAddr+rel, r, headers...)
	return res.StatusCode, res.Header, b
}

func (c *connector) samply() []string { return []string{"Authorization", "Samply " + c.passcode} }

// register is BrokerConnector.register: the status alone decides.
func (c *connector) register() string {
	code, _, _ := c.do(http.MethodPut, "rest/searchbroker/banks/"+c.email, nil)
	switch code {
	case http.StatusUnauthorized:
		return activationPending
	case http.StatusConflict:
		return authenticationError
	}
	return unreachable
}

// activate is BrokerConnector.activate: a 201 body is the passcode.
func (c *connector) activate(code string) int {
	status, _, body := c.do(http.MethodPut, "rest/searchbroker/banks/"+c.email, nil, "Authorization", "SamplyRegistration "+code)
	if status == http.StatusCreated {
		c.passcode = string(body)
	}
	return status
}

// inquiryList is getInquiryList: ids to revisions; a non-200 is an empty map.
func (c *connector) inquiryList() map[string]string {
	c.t.Helper()
	status, _, body := c.do(http.MethodGet, "rest/searchbroker/inquiries", nil, c.samply()...)
	out := map[string]string{}
	if status != http.StatusOK {
		return out
	}
	var l struct {
		XMLName xml.Name `xml:"Inquiries"`
		Items   []struct {
			ID       string `xml:"Id"`
			Revision string `xml:"Revision"`
		} `xml:"Inquiry"`
	}
	if err := xml.Unmarshal(body, &l); err != nil {
		c.t.Fatalf("Error reading inquiries: %v\n%s", err, body)
	}
	for _, it := range l.Items {
		out[it.ID] = it.Revision
	}
	return out
}

func (c *connector) unmarshal(status int, body []byte, what string, v any) {
	c.t.Helper()
	if status != http.StatusOK {
		c.t.Fatalf("Unexpected status code received while trying to load %s: %d: %s", what, status, body)
	}
	if err := xml.Unmarshal(body, v); err != nil {
		c.t.Fatalf("%s: %v\n%s", what, err, body)
	}
}

func (c *connector) inquiry(id int) connInquiry {
	c.t.Helper()
	status, _, body := c.do(http.MethodGet, "rest/searchbroker/inquiries/"+strconv.Itoa(id), nil, append(c.samply(), "query-language", "QUERY")...)
	var in connInquiry
	c.unmarshal(status, body, "inquiry "+strconv.Itoa(id), &in)
	return in
}

func (c *connector) testInquiry() connInquiry {
	c.t.Helper()
	status, _, body := c.do(http.MethodGet, "rest/test/inquiries/1", nil, append(c.samply(), "query-language", "QUERY")...)
	var in connInquiry
	c.unmarshal(status, body, "test inquiry", &in)
	return in
}

// hasExpose is inquiryHasExpose: no Authorization; a 404 means "none" only
// with the body "unavailable".
func (c *connector) hasExpose(id int) bool {
	c.t.Helper()
	status, _, body := c.do(http.MethodGet, "rest/searchbroker/inquiries/"+strconv.Itoa(id)+"/hasexpose", nil)
	switch status {
	case http.StatusOK:
		return true
	case http.StatusNotFound:
		return string(body) != "unavailable"
	}
	return false
}

// reply is the private reply(inquiryDetails, String): a StringEntity, so
// the body is ISO-8859-1 and so says its Content-Type.
func (c *connector) reply(id int, text string) int {
	c.t.Helper()
	return c.replyAs(id, c.email, text)
}

func (c *connector) replyAs(id int, email, text string) int {
	c.t.Helper()
	status, _, _ := c.do(http.MethodPut, fmt.Sprintf("rest/searchbroker/inquiries/%d/replies/%s", id, email), latin1(text),
		append(c.samply(), "Content-Type", "text/plain; charset=ISO-8859-1")...)
	return status
}

func latin1(s string) []byte {
	out := make([]byte, 0, len(s))
	for _, r := range s {
		if r > 0xff {
			panic("not Latin-1: " + s)
		}
		out = append(out, byte(r))
	}
	return out
}

// brokerLogCode is the activation code the broker logged for email (no
// SMTP server is configured: the default).
func brokerLogCode(t *testing.T, s *Stack, email string) string {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		code := ""
		for _, line := range strings.Split(s.Broker.logs(), "\n") {
			var rec struct {
				Msg  string `json:"msg"`
				Bank string `json:"bank"`
				Code string `json:"code"`
			}
			if json.Unmarshal([]byte(line), &rec) == nil && strings.HasPrefix(rec.Msg, "activation code") && rec.Bank == email {
				code = rec.Code
			}
		}
		if code != "" {
			return code
		}
		if time.Now().After(deadline) {
			t.Fatalf("no activation code for %s in the broker's log", email)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestCompatBroker(t *testing.T) {
	t.Parallel()
	for _, o := range []struct {
		name string
		opts Options
	}{{"bolt", Options{}}, {"redis", Options{Redis: true}}, {"cluster", Options{Cluster: true}}} {
		t.Run(o.name, func(t *testing.T) { compatBrokerFlow(t, o.opts) })
	}
}

func compatBrokerFlow(t *testing.T, o Options) {
	s := NewStack(t, o) // the broker's defaults: activation-code, codes in the log
	if s.Broker == nil {
		t.Fatal("the broker binary was not built")
	}
	seedAuth(t, s)
	access, author := researcherToken(t, s, demoEmail, demoPass)
	c := &connector{t: t, s: s, email: "bridgehead@charite.example"}

	// checkConnection: GET on the broker address; 2xx or 3xx is reachable.
	if status, _, _ := c.do(http.MethodGet, "", nil); status < 200 || status >= 400 {
		t.Fatalf("checkConnection: GET %s = %d", brokerAddr, status)
	}
	// getBrokerName: the body, read as UTF-8, on 200.
	if status, _, body := c.do(http.MethodGet, "rest/searchbroker/name", nil); status != 200 || string(body) != "FRIS Search Broker" {
		t.Fatalf("getBrokerName = %d %q", status, body)
	}

	// Registration: the first PUT asks for a code; the operator types in
	// the mailed (here: logged) code; a 201 body is the passcode.
	if got := c.register(); got != activationPending {
		t.Fatalf("register = %s, want %s", got, activationPending)
	}
	res, _ := s.Do(t, http.MethodPut, brokerAddr+"rest/searchbroker/banks/other@charite.example", nil)
	wantHeader(t, res, "WWW-Authenticate", "SamplyRegistration AuthCode")
	code := brokerLogCode(t, s, c.email)
	wrong := "00000000"
	if code == wrong {
		wrong = "11111111"
	}
	if status := c.activate(wrong); status != http.StatusUnauthorized || c.passcode != "" {
		t.Fatalf("activate(wrong) = %d, passcode %q", status, c.passcode)
	}
	if status := c.activate(code); status != http.StatusCreated || len(c.passcode) != 64 {
		t.Fatalf("activate = %d, passcode %q", status, c.passcode)
	}
	// Registered (pending): registering again is the connector's
	// authentication error, not "unreachable".
	if got := c.register(); got != authenticationError {
		t.Fatalf("register again = %s, want %s", got, authenticationError)
	}
	status := func() int {
		st, _, _ := c.do(http.MethodGet, "rest/searchbroker/banks/"+c.email+"/status", nil, c.samply()...)
		return st
	}
	if st := status(); st != http.StatusAccepted {
		t.Fatalf("status while pending = %d", st)
	}
	// While pending: an empty list, and the test inquiry already works.
	if l := c.inquiryList(); len(l) != 0 {
		t.Fatalf("pending bank lists %v", l)
	}
	if in := c.testInquiry(); in.Query == nil || in.Query.Where == nil || in.Label == "" {
		t.Fatalf("test inquiry = %+v", in)
	}

	// Before an operator approved it, the bank can neither name its site
	// (a hint the operator must not be fed by strangers) nor file status
	// reports: 403, which the connector shows its administrator and is not
	// fatal to it; nothing is stored.
	if st, _, body := c.do(http.MethodPut, "rest/searchbroker/banks/"+c.email+"/site/Berlin", nil, c.samply()...); st != http.StatusForbidden ||
		!strings.Contains(string(body), "not approved") {
		t.Fatalf("sendSiteName while pending = %d %q, want 403 not approved", st, body)
	}
	if st, _, _ := c.do(http.MethodPut, "rest/monitoring", []byte(`[{"parameter_name":"x","status_text":"y","exit_status":"0"}]`),
		append(c.samply(), "Content-Type", "application/json")...); st != http.StatusForbidden {
		t.Fatalf("sendStatusReportItems while pending = %d, want 403", st)
	}
	if banks := s.BrokerCLI(t, 0, "banks"); strings.Contains(banks, "Berlin") {
		t.Fatalf("a pending bank's site name was recorded:\n%s", banks)
	}
	if mon := s.BrokerCLI(t, 0, "monitoring", "-bank", c.email); strings.Contains(mon, "x ") {
		t.Fatalf("a pending bank's report was stored:\n%s", mon)
	}
	// The operator links the bank; then the connector reports its site name.
	s.BrokerCLI(t, 0, "approve-bank", "-site", "charite", c.email)
	if st := status(); st != http.StatusOK {
		t.Fatalf("status when active = %d", st)
	}
	if st, _, _ := c.do(http.MethodPut, "rest/searchbroker/banks/"+c.email+"/site/Berlin", nil, c.samply()...); st != http.StatusOK {
		t.Fatalf("sendSiteName = %d", st)
	}
	wantContains(t, s.BrokerCLI(t, 0, "banks"), "Berlin")

	// getSiteNames: a JSON array of objects with "name".
	st, _, body := c.do(http.MethodGet, "rest/searchbroker/siteNames/", nil, c.samply()...)
	var sites []map[string]any
	if st != 200 || json.Unmarshal(body, &sites) != nil || len(sites) != 1 || sites[0]["name"] != "charite" {
		t.Fatalf("getSiteNames = %d %s", st, body)
	}

	// A researcher's inquiry for charite, with an expose, and one without.
	dir := t.TempDir()
	q, pdf := filepath.Join(dir, "q.xml"), filepath.Join(dir, "e.pdf")
	if err := os.WriteFile(q, []byte(demoQuery), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pdf, []byte(tinyPDF), 0o600); err != nil {
		t.Fatal(err)
	}
	create := func(label string, args ...string) int {
		out := s.BrokerCLI(t, 0, append([]string{"create-inquiry", "-author", author, "-label", label, "-description", "Wie viele?",
			"-query", q, "-contact-title", "Dr.", "-contact-firstname", "Ada", "-contact-lastname", "Lovelace", "-contact-email", "ada@fris.test",
			"-sites", "charite", "-search-for", "Patienten,Biomaterial"}, args...)...)
		id := field(t, JSON(t, []byte(out)), "id").(string)
		s.BrokerCLI(t, 0, "release-inquiry", id)
		n, _ := strconv.Atoi(id)
		return n
	}
	id := create("Lungenkarzinom", "-expose", pdf)
	bare := create("Ohne Exposé")

	// Polling and fetching, as CollectInquiriesJob does.
	eventually(t, func() bool { return c.inquiryList()[strconv.Itoa(id)] == "1" })
	in := c.inquiry(id)
	if in.ID != strconv.Itoa(id) || in.Revision != "1" || in.Query == nil || in.Author.Lastname != "Lovelace" || in.Label != "Lungenkarzinom" {
		t.Fatalf("inquiry = %+v", in)
	}
	// CollectInquiriesJob files SearchFor by German words.
	for _, want := range []string{"patienten", "biomaterial"} {
		found := false
		for _, sf := range in.SearchFor {
			found = found || strings.Contains(strings.ToLower(sf), want)
		}
		if !found {
			t.Fatalf("SearchFor %v has no %q", in.SearchFor, want)
		}
	}
	st, _, body = c.do(http.MethodGet, fmt.Sprintf("rest/searchbroker/inquiries/%d/query", id), nil, c.samply()...)
	var qd struct {
		XMLName xml.Name `xml:"http://schema.samply.de/common/Query Query"`
	}
	c.unmarshal(st, body, "query", &qd)
	var ct connContact
	st, _, body = c.do(http.MethodGet, fmt.Sprintf("rest/searchbroker/inquiries/%d/contact", id), nil, c.samply()...)
	c.unmarshal(st, body, "contact", &ct)
	if ct.Lastname != "Lovelace" || ct.Email != "ada@fris.test" {
		t.Fatalf("contact = %+v", ct)
	}
	var info connInfo
	st, _, body = c.do(http.MethodGet, fmt.Sprintf("rest/searchbroker/inquiries/%d/info", id), nil, c.samply()...)
	c.unmarshal(st, body, "info", &info)
	if info.Label != "Lungenkarzinom" || info.Description != "Wie viele?" || info.Revision != "1" {
		t.Fatalf("info = %+v", info)
	}
	if !c.hasExpose(id) || c.hasExpose(bare) || c.hasExpose(999) {
		t.Fatalf("hasexpose: %v %v %v", c.hasExpose(id), c.hasExpose(bare), c.hasExpose(999))
	}
	// The expose, at the ExposeURL the inquiry names and by the inquiry.
	exposePath := in.ExposeURL[strings.Index(in.ExposeURL, brokerAddr):]
	for _, p := range []string{exposePath, fmt.Sprintf("%srest/searchbroker/inquiries/%d/expose", brokerAddr, id)} {
		res, b := s.Do(t, http.MethodGet, p, nil, c.samply()...)
		if res.StatusCode != 200 || string(b) != tinyPDF || res.Header.Get("Content-Type") != "application/pdf" {
			t.Fatalf("expose %s = %d %s", p, res.StatusCode, res.Header.Get("Content-Type"))
		}
	}

	// Replies: a count, then the JSON result document (a new reply
	// replaces the old one), with a Latin-1 character on the wire.
	if st := c.reply(bare, "7"); st != http.StatusOK {
		t.Fatalf("reply(count) = %d", st)
	}
	result := `{"donor":{"label":"Donors","count":10,"stratifications":[{"title":"Geschlecht","strata":[{"label":"männlich","count":10}]}]},` +
		`"sample":{"label":"Samples","count":20,"stratifications":[]},"redirectUrl":"http://share.charite.example/user/show_inquiry.xhtml?inquiryId=3&faces-redirect=true"}`
	if st := c.reply(id, "3"); st != http.StatusOK {
		t.Fatalf("reply(count) = %d", st)
	}
	if st := c.reply(id, result); st != http.StatusOK {
		t.Fatalf("reply(result) = %d", st)
	}
	if st := c.replyAs(id, "someone-else@charite.example", "1"); st != http.StatusUnauthorized {
		t.Fatalf("reply for another bank = %d", st)
	}
	// The researcher reads them decoded: the count of the result document,
	// the text in UTF-8.
	res, body = s.Do(t, http.MethodGet, fmt.Sprintf("%s/researcher/inquiries/%d/replies", sb, id), nil, bearer(access)...)
	v := JSON(t, body)
	if res.StatusCode != 200 || field(t, v, "total") != float64(10) || !strings.Contains(field(t, v, "replies", 0, "body").(string), `"label":"männlich"`) {
		t.Fatalf("replies = %d %s", res.StatusCode, body)
	}
	if field(t, v, "replies", 0, "unreadable") != false || field(t, v, "replies", 0, "donor", "stratifications", 0, "strata", 0, "label") != "männlich" ||
		field(t, v, "replies", 0, "sample", "count") != float64(20) || field(t, v, "samples") != float64(20) || field(t, v, "unreadable") != float64(0) {
		t.Fatalf("the Reply document's entities: %s", body)
	}
	wantContains(t, s.BrokerCLI(t, 0, "replies", strconv.Itoa(bare)), "total: 7")
	// A reply that is no count is stored (200) and shown as unreadable,
	// never as 0.
	if st := c.reply(bare, "lots <b>"); st != http.StatusOK {
		t.Fatalf("reply(lots <b>) = %d", st)
	}
	res, body = s.Do(t, http.MethodGet, fmt.Sprintf("%s/researcher/inquiries/%d/replies", sb, bare), nil, bearer(access)...)
	v = JSON(t, body)
	if res.StatusCode != 200 || field(t, v, "replies", 0, "unreadable") != true || field(t, v, "replies", 0, "body") != "lots <b>" ||
		field(t, v, "unreadable") != float64(1) || field(t, v, "sites", 0, "unreadable") != float64(1) || strings.Contains(string(body), `"samples"`) {
		t.Fatalf("unreadable reply = %d %s", res.StatusCode, body)
	}
	if _, has := v.(map[string]any)["replies"].([]any)[0].(map[string]any)["count"]; has {
		t.Fatalf("an unreadable reply has a count: %s", body)
	}
	wantContains(t, s.BrokerCLI(t, 0, "replies", strconv.Itoa(bare)), "total: unreadable")

	// Monitoring: the reference query (Samply query language, and CQL for
	// CQL sites), then the status report, as ReportToMonitoringJob sends it.
	st, _, body = c.do(http.MethodGet, "rest/monitoring/referencequery", nil, append(c.samply(), "query-language", "QUERY")...)
	c.unmarshal(st, body, "reference query", &qd)
	st, _, body = c.do(http.MethodGet, "rest/monitoring/referencequery", nil, append(c.samply(), "query-language", "CQL")...)
	if st != 200 || !strings.HasPrefix(string(body), "library ") {
		t.Fatalf("getReferenceQueryCql = %d %q", st, body)
	}
	report := `[{"parameter_name":"bridgehead-teiler-version","status_text":"7.2.0","exit_status":"0"},` +
		`{"parameter_name":"bridgehead-referencequery-resultcount","status_text":"Prüfung: 42","exit_status":"0"}]`
	if st, _, _ := c.do(http.MethodPut, "rest/monitoring", latin1(report), append(c.samply(), "Content-Type", "application/json")...); st != http.StatusOK {
		t.Fatalf("sendStatusReportItems = %d", st)
	}
	// An older connector (Gson's default field names) replaces it.
	older := `[{"parameterName":"bridgehead-teiler","statusText":"Prüfung ok","exitStatus":"0"}]`
	if st, _, _ := c.do(http.MethodPut, "rest/monitoring", latin1(older), append(c.samply(), "Content-Type", "application/json")...); st != http.StatusOK {
		t.Fatalf("sendStatusReportItems (camelCase) = %d", st)
	}
	mon := s.BrokerCLI(t, 0, "monitoring", "-bank", c.email)
	wantContains(t, mon, "bridgehead-teiler ")
	wantContains(t, mon, "Prüfung ok")
	if strings.Contains(mon, "bridgehead-teiler-version") {
		t.Fatalf("the older report was not replaced:\n%s", mon)
	}
	if st, _, _ := c.do(http.MethodPut, "rest/monitoring", []byte(`[]`), "Content-Type", "application/json"); st != http.StatusUnauthorized {
		t.Fatalf("report without a passcode = %d", st)
	}

	// unregister: DELETE with the passcode; true on 204.
	if st, _, _ := c.do(http.MethodDelete, "rest/searchbroker/banks/"+c.email, nil, c.samply()...); st != http.StatusNoContent {
		t.Fatalf("unregister = %d", st)
	}
	if l := c.inquiryList(); len(l) != 0 {
		t.Fatalf("a deleted bank lists %v", l)
	}
	if mon := s.BrokerCLI(t, 0, "monitoring"); strings.Contains(mon, c.email) {
		t.Fatalf("the deleted bank's report stayed:\n%s", mon)
	}
}
