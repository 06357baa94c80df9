package explorer

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"google.golang.org/protobuf/types/known/timestamppb"

	brokerv1 "fris.dev/proto/broker/v1"
)

// TestInquiryJourney: a signed-in researcher opens the form, creates a
// draft with a built query and a PDF, sees it, edits it (the builder shows
// the stored query again), releases it, sees the results live and as
// CSV, and closes it; the broker sees the researcher's subject throughout.
func TestInquiryJourney(t *testing.T) {
	e, fb, mdr := newInqEnv(t)
	b := e.browser()
	// A data element's page starts a query with it.
	if body := b.do("GET", "/explorer/dataelements/"+urnEnum, nil).Body.String(); strings.Contains(body, "/explorer/inquiries/new") {
		t.Fatal("a visitor who is not signed in is offered an inquiry")
	}
	// Not signed in: sent to sign in, and back here after.
	if rec := b.do("GET", InquiriesPath+"/new", nil); rec.Code != http.StatusSeeOther || !strings.HasPrefix(rec.Header().Get("Location"), LoginPath+"?return=%2Fexplorer%2Finquiries%2Fnew") {
		t.Fatalf("not signed in: %d %q", rec.Code, rec.Header().Get("Location"))
	}
	b.signIn()
	el := b.do("GET", "/explorer/dataelements/"+urnEnum, nil).Body.String()
	if !strings.Contains(el, `href="/explorer/inquiries/new?urn=urn%3amdr16%3adataelement%3a15%3a1"`) {
		t.Fatalf("the data element page offers no inquiry:\n%s", el)
	}
	if body := b.do("GET", InquiriesPath+"/new?urn="+urnEnum, nil).Body.String(); !strings.Contains(body, `value="tissue_frozen"`) {
		t.Fatalf("the form did not start with the element:\n%s", body)
	}
	rec := b.do("GET", InquiriesPath+"/new", nil)
	body := rec.Body.String()
	for _, want := range []string{`value="berlin"`, `value="dresden"`, `name="lastname" value="Lovelace"`, `enctype="multipart/form-data"`, `name="qb.group"`, `hx-get="/explorer/query/elements"`} {
		if rec.Code != 200 || !strings.Contains(body, want) {
			t.Fatalf("form lacks %s: %d\n%s", want, rec.Code, body)
		}
	}
	csrf := csrfOf(t, body)

	// Without the CSRF token, or from another site: refused.
	ct, form := multipartForm(t, inquiryFields("wrong"), nil)
	if rec := b.post(InquiriesPath, ct, form); rec.Code != http.StatusForbidden {
		t.Fatalf("without the CSRF token: %d", rec.Code)
	}
	ct, form = multipartForm(t, inquiryFields(csrf), nil)
	if rec := b.post(InquiriesPath, ct, form, "Sec-Fetch-Site", "cross-site"); rec.Code != http.StatusForbidden {
		t.Fatalf("from another site: %d", rec.Code)
	}
	if len(fb.ins) != 0 {
		t.Fatal("a refused form created an inquiry")
	}

	ct, form = multipartForm(t, inquiryFields(csrf), []byte(testPDF))
	rec = b.post(InquiriesPath, ct, form)
	if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != InquiriesPath+"/1" {
		t.Fatalf("create: %d %q\n%s", rec.Code, rec.Header().Get("Location"), rec.Body)
	}
	in := fb.ins["1"]
	if fb.authors["1"] != "42" || in.GetLabel() != "Lung cancer, adults" || string(fb.pdfs["1"]) != testPDF || in.GetExpose().GetFilename() != "study.pdf" ||
		strings.Join(in.GetTargetSites(), ",") != "berlin,dresden" || in.GetExpiresAt().AsTime().Format("2006-01-02 15:04:05") != "2030-02-01 23:59:59" ||
		in.GetContact().GetLastname() != "Lovelace" {
		t.Fatalf("the broker got %v by %q", in, fb.authors["1"])
	}
	if !strings.Contains(in.GetQuery(), wantQuery) {
		t.Fatalf("query\n%s\nwant\n%s", in.GetQuery(), wantQuery)
	}
	// The registry checked every value the query names.
	var checked []string
	for _, c := range mdr.checked {
		checked = append(checked, c.GetValue())
	}
	if got := strings.Join(checked, ","); got != "18,99,tissue_frozen,01.01.2020,C34.0,C34.1" {
		t.Fatalf("registry checked %s", got)
	}

	rec = b.do("GET", InquiriesPath+"/1", nil)
	body = rec.Body.String()
	for _, want := range []string{"Lung cancer, adults", "Draft", `action="/explorer/inquiries/1/release"`, "study.pdf", "urn:mdr16:dataelement:27:1"} {
		if !strings.Contains(body, want) {
			t.Fatalf("inquiry page lacks %q:\n%s", want, body)
		}
	}
	if strings.Contains(body, "data-events") {
		t.Fatal("a draft's page streams results")
	}
	// The edit form shows the stored query in the builder again, and
	// saving it unchanged stores the same query.
	rec = b.do("GET", InquiriesPath+"/1/edit", nil)
	body = rec.Body.String()
	for _, want := range []string{`value="18"`, `value="99"`, `value="2020-01-01"`, `value="C34.0, C34.1"`, `value="tissue_frozen" checked`, `<option value="Or" selected>`} {
		if rec.Code != 200 || !strings.Contains(body, want) {
			t.Fatalf("edit form lacks %s: %d\n%s", want, rec.Code, body)
		}
	}
	if strings.Contains(body, `name="qb.kept"`) {
		t.Fatal("the builder could not show its own query")
	}
	ct, form = multipartForm(t, inquiryFields(csrf), nil)
	if rec := b.post(InquiriesPath+"/1", ct, form); rec.Code != http.StatusSeeOther {
		t.Fatalf("update: %d\n%s", rec.Code, rec.Body)
	}
	if fb.ins["1"].GetRevision() != 2 || !strings.Contains(fb.ins["1"].GetQuery(), wantQuery) {
		t.Fatalf("after the update: %v", fb.ins["1"])
	}

	if rec := b.do("POST", InquiriesPath+"/1/release", url.Values{"csrf_token": {"nope"}}); rec.Code != http.StatusForbidden {
		t.Fatalf("release without the token: %d", rec.Code)
	}
	// Releasing asks for its confirmation: without it the page comes back
	// saying so, and nothing is released.
	if rec := b.do("POST", InquiriesPath+"/1/release", url.Values{"csrf_token": {csrf}}); rec.Code != http.StatusBadRequest ||
		!strings.Contains(rec.Body.String(), "Not released: tick") || !strings.Contains(rec.Body.String(), `id="release-ok" name="confirm" value="yes" required`) ||
		fb.ins["1"].GetStatus() != brokerv1.InquiryStatus_DRAFT {
		t.Fatalf("release without the confirmation: %d\n%s", rec.Code, rec.Body)
	}
	if rec := b.do("POST", InquiriesPath+"/1/release", url.Values{"csrf_token": {csrf}, "confirm": {"yes"}}); rec.Code != http.StatusSeeOther {
		t.Fatalf("release: %d %s", rec.Code, rec.Body)
	}
	if fb.ins["1"].GetStatus() != brokerv1.InquiryStatus_RELEASED {
		t.Fatal("not released")
	}
	seven := int32(7)
	fb.replies["1"] = &brokerv1.ListRepliesResponse{InquiryId: "1", Total: 7,
		Replies: []*brokerv1.Reply{{SiteId: "berlin", Count: &seven, ReceivedAt: timestamppb.New(mustTime("2030-01-01T11:00:00Z"))}},
		Sites:   []*brokerv1.SiteCount{{SiteId: "berlin", Count: 7, Replies: 1}}}
	body = b.do("GET", InquiriesPath+"/1", nil).Body.String()
	for _, want := range []string{`data-events="/explorer/inquiries/1/events"`, `<strong id="results-total">7</strong>`, "1 of 2 sites answered", "Not answered yet: <span>dresden</span>", `<svg class="chart" role="img"`, "2030-01-01 11:00 UTC"} {
		if !strings.Contains(body, want) {
			t.Fatalf("released page lacks %q:\n%s", want, body)
		}
	}

	rec = b.do("GET", InquiriesPath+"/1/replies.csv", nil)
	if rec.Code != 200 || rec.Header().Get("Content-Type") != "text/csv; charset=utf-8" || !strings.Contains(rec.Header().Get("Content-Disposition"), "inquiry-1-replies.csv") ||
		rec.Body.String() != "# Query: (Donor age: 18–99 and Sample type tissue: Tissue snap frozen) or (Date of diagnosis: at least 01.01.2020 and Diagnosis ICD-10: C34.0, C34.1)\n"+
			"site,answered,count,replies,last_reply_utc,unreadable,samples,entity,stratification,stratum\nberlin,true,7,1,2030-01-01 11:00 UTC,0,,,,\ndresden,false,,0,,0,,,,\n" {
		t.Fatalf("CSV: %d %v\n%s", rec.Code, rec.Header(), rec.Body)
	}

	// The event stream sends the results on each change the broker reports.
	five := int32(5)
	fb.watch = []*brokerv1.ListRepliesResponse{fb.replies["1"], {InquiryId: "1", Total: 12,
		Replies: []*brokerv1.Reply{{SiteId: "berlin", Count: &seven}, {SiteId: "dresden", Count: &five}},
		Sites:   []*brokerv1.SiteCount{{SiteId: "berlin", Count: 7, Replies: 1}, {SiteId: "dresden", Count: 5, Replies: 1}}}}
	rec = b.do("GET", InquiriesPath+"/1/events", nil)
	events := strings.Split(strings.TrimSpace(rec.Body.String()), "\n\n")
	if rec.Code != 200 || rec.Header().Get("Content-Type") != "text/event-stream; charset=utf-8" || len(events) != 3 || events[0] != "retry: 3000" {
		t.Fatalf("events: %d %v\n%q", rec.Code, rec.Header(), events)
	}
	for i, want := range []string{`<strong id="results-total">7</strong>`, `<strong id="results-total">12</strong>`} {
		ev := events[i+1]
		if !strings.HasPrefix(ev, "event: results\ndata: ") || !strings.Contains(ev, want) {
			t.Fatalf("event %d:\n%s", i, ev)
		}
		for _, line := range strings.Split(ev, "\n")[1:] {
			if !strings.HasPrefix(line, "data: ") {
				t.Fatalf("event %d has a line that is not data: %q", i, line)
			}
		}
	}
	if !strings.Contains(events[2], "Every target site has answered.") {
		t.Fatalf("last event: %s", events[2])
	}

	if rec := b.do("POST", InquiriesPath+"/1/close", url.Values{"csrf_token": {csrf}}); rec.Code != http.StatusBadRequest ||
		!strings.Contains(rec.Body.String(), "Not closed: tick") || fb.ins["1"].GetStatus() != brokerv1.InquiryStatus_RELEASED {
		t.Fatalf("close without the confirmation: %d\n%s", rec.Code, rec.Body)
	}
	if rec := b.do("POST", InquiriesPath+"/1/close", url.Values{"csrf_token": {csrf}, "confirm": {"yes"}}); rec.Code != http.StatusSeeOther {
		t.Fatalf("close: %d", rec.Code)
	}
	body = b.do("GET", InquiriesPath+"/1", nil).Body.String()
	if !strings.Contains(body, "Closed") || strings.Contains(body, "data-events") || strings.Contains(body, "/release") || strings.Contains(body, "/edit") {
		t.Fatalf("closed page:\n%s", body)
	}
	// Closing again: the broker's refusal is shown on the page.
	if rec := b.do("POST", InquiriesPath+"/1/close", url.Values{"csrf_token": {csrf}, "confirm": {"yes"}}); rec.Code != http.StatusConflict || !strings.Contains(rec.Body.String(), "the inquiry is closed") {
		t.Fatalf("closing twice: %d\n%s", rec.Code, rec.Body)
	}
	list := b.do("GET", InquiriesPath, nil).Body.String()
	if !strings.Contains(list, `href="/explorer/inquiries/1"`) || !strings.Contains(list, "Closed") || !strings.Contains(list, `href="/explorer/inquiries" aria-current="page"`) {
		t.Fatalf("list:\n%s", list)
	}
	// In German.
	de := b.do("GET", InquiriesPath+"/1?lang=de", nil).Body.String()
	if !strings.Contains(de, "Geschlossen") || !strings.Contains(de, "Antworten je Standort") {
		t.Fatalf("German page:\n%s", de)
	}
}

// TestInquiryOthers: another user's inquiry is not found, and its events
// and CSV neither.
func TestInquiryOthers(t *testing.T) {
	e, fb, _ := newInqEnv(t)
	fb.ins["9"], fb.authors["9"] = &brokerv1.Inquiry{Id: "9", Label: "theirs", Status: brokerv1.InquiryStatus_RELEASED}, "someone-else"
	b := e.browser()
	b.signIn()
	for _, p := range []string{"/9", "/9/edit", "/9/events", "/9/replies.csv"} {
		if rec := b.do("GET", InquiriesPath+p, nil); rec.Code != http.StatusNotFound || strings.Contains(rec.Body.String(), "theirs") {
			t.Errorf("%s: %d", p, rec.Code)
		}
	}
	// Not signed in, the event stream is refused outright (EventSource
	// follows no sign-in).
	if rec := e.browser().do("GET", InquiriesPath+"/9/events", nil, "Accept", "text/event-stream"); rec.Code != http.StatusUnauthorized {
		t.Errorf("anonymous events: %d", rec.Code)
	}
}
