package explorer

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"

	"fris.dev/pkg/identity"

	brokerv1 "fris.dev/proto/broker/v1"
)

// TestReleaseEmptyQuery: an inquiry without a condition is released only
// with the second confirmation; the page warns of it.
func TestReleaseEmptyQuery(t *testing.T) {
	e, fb, _ := newInqEnv(t)
	b := e.browser()
	b.signIn()
	csrf := csrfOf(t, b.do("GET", InquiriesPath+"/new", nil).Body.String())
	ct, form := multipartForm(t, url.Values{"csrf_token": {csrf}, "label": {"Everyone"}, "lastname": {"Lovelace"}, "site": {"berlin"}}, nil)
	if rec := b.post(InquiriesPath, ct, form); rec.Code != http.StatusSeeOther {
		t.Fatalf("create: %d\n%s", rec.Code, rec.Body)
	}
	page := b.do("GET", InquiriesPath+"/1", nil).Body.String()
	for _, want := range []string{`id="empty-warning"`, "has no condition", `name="confirm_empty" value="yes" required`, `name="confirm" value="yes" required`} {
		if !strings.Contains(page, want) {
			t.Fatalf("the draft's page lacks %q:\n%s", want, page)
		}
	}
	rec := b.do("POST", InquiriesPath+"/1/release", url.Values{"csrf_token": {csrf}, "confirm": {"yes"}})
	if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "Not released: this inquiry has no condition") || fb.ins["1"].GetStatus() != brokerv1.InquiryStatus_DRAFT {
		t.Fatalf("released without the second confirmation: %d\n%s", rec.Code, rec.Body)
	}
	if rec := b.do("POST", InquiriesPath+"/1/release", url.Values{"csrf_token": {csrf}, "confirm": {"yes"}, "confirm_empty": {"yes"}}); rec.Code != http.StatusSeeOther ||
		fb.ins["1"].GetStatus() != brokerv1.InquiryStatus_RELEASED {
		t.Fatalf("release with both confirmations: %d\n%s", rec.Code, rec.Body)
	}
	if page := b.do("GET", InquiriesPath+"/1", nil).Body.String(); strings.Contains(page, "empty-warning") {
		t.Fatal("a released inquiry still warns")
	}
}

func TestNoCondition(t *testing.T) {
	for doc, want := range map[string]bool{
		`<Query xmlns="http://schema.samply.de/common/Query"><Where></Where></Query>`:                                                            true,
		`<Query xmlns="http://schema.samply.de/common/Query"><Where><And></And></Where></Query>`:                                                 true,
		`<Query xmlns="http://schema.samply.de/common/Query"><Where><IsNull><MdrKey>urn:mdr16:dataelement:1:1</MdrKey></IsNull></Where></Query>`: false,
		`not xml`: false,
	} {
		if got := noCondition(doc); got != want {
			t.Errorf("noCondition(%s) = %v", doc, got)
		}
	}
}

func (f *fakeBroker) GetInquiryExpose(ctx context.Context, r *brokerv1.GetInquiryRequest, _ ...grpc.CallOption) (*brokerv1.Document, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	in, err := f.own(ctx, r.GetId())
	if err != nil {
		return nil, err
	}
	if in.GetExpose() == nil {
		return nil, status.Errorf(codes.NotFound, "inquiry %s has no expose", r.GetId())
	}
	return &brokerv1.Document{Body: f.pdfs[r.GetId()], ContentType: "application/pdf", Filename: in.GetExpose().GetFilename()}, nil
}

// GetInquiryReach: the first target site polled at 09:58 and fetched the
// inquiry at 09:59 (the test clock says 10:00); the others have not.
func (f *fakeBroker) GetInquiryReach(ctx context.Context, r *brokerv1.GetInquiryRequest, _ ...grpc.CallOption) (*brokerv1.InquiryReach, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	in, err := f.own(ctx, r.GetId())
	if err != nil {
		return nil, err
	}
	out := &brokerv1.InquiryReach{InquiryId: in.GetId()}
	for i, s := range in.GetTargetSites() {
		sr := &brokerv1.SiteReach{SiteId: s}
		if i == 0 {
			sr.LastPollAt, sr.SeenAt = timestamppb.New(mustTime("2030-01-01T09:58:00Z")), timestamppb.New(mustTime("2030-01-01T09:59:00Z"))
			out.Seen++
		}
		out.Sites = append(out.Sites, sr)
	}
	return out, nil
}

// TestExposeAndReach: the author downloads the expose, another user does
// not; a released inquiry's page says how far it has got.
func TestExposeAndReach(t *testing.T) {
	e, fb, _ := newInqEnv(t)
	b := e.browser()
	b.signIn()
	csrf := csrfOf(t, b.do("GET", InquiriesPath+"/new", nil).Body.String())
	ct, form := multipartForm(t, inquiryFields(csrf), []byte(testPDF))
	if rec := b.post(InquiriesPath, ct, form); rec.Code != http.StatusSeeOther {
		t.Fatalf("create: %d\n%s", rec.Code, rec.Body)
	}
	page := b.do("GET", InquiriesPath+"/1", nil).Body.String()
	if !strings.Contains(page, `<a href="/explorer/inquiries/1/expose" download id="expose-link">Download study.pdf</a>`) || strings.Contains(page, "h-reach") {
		t.Fatalf("the draft's page:\n%s", page)
	}
	rec := b.do("GET", InquiriesPath+"/1/expose", nil)
	if rec.Code != 200 || rec.Body.String() != testPDF || rec.Header().Get("Content-Type") != "application/pdf" ||
		rec.Header().Get("Content-Disposition") != `attachment; filename=study.pdf` || rec.Header().Get("Content-Length") != strconv.Itoa(len(testPDF)) ||
		!strings.HasSuffix(rec.Header().Get("Content-Security-Policy"), "; sandbox") {
		t.Fatalf("expose: %d %v", rec.Code, rec.Header())
	}
	mine := fb.authors["1"]
	fb.authors["1"] = "someone-else"
	if rec := b.do("GET", InquiriesPath+"/1/expose", nil); rec.Code != http.StatusNotFound || rec.Body.String() == testPDF {
		t.Fatalf("another's expose: %d", rec.Code)
	}
	fb.authors["1"] = mine
	if rec := b.do("POST", InquiriesPath+"/1/release", url.Values{"csrf_token": {csrf}, "confirm": {"yes"}}); rec.Code != http.StatusSeeOther {
		t.Fatalf("release: %d", rec.Code)
	}
	page = b.do("GET", InquiriesPath+"/1", nil).Body.String()
	for _, want := range []string{`<h2 id="h-reach">Reaching the sites</h2>`, "1 of 2 target sites have fetched the inquiry.", "may be offline",
		`<time datetime="2030-01-01T09:58:00Z">2030-01-01 09:58 UTC</time> (2 min ago)`, `<time datetime="2030-01-01T09:59:00Z">2030-01-01 09:59 UTC</time>`, "never yet", "not yet"} {
		if !strings.Contains(page, want) {
			t.Fatalf("the released page lacks %q:\n%s", want, page)
		}
	}
}

func TestExposeFilename(t *testing.T) {
	for in, want := range map[string]string{"study.pdf": "study.pdf", "Studie \"neu\".PDF": "Studie neu.PDF", "../x": "inquiry-7-expose.pdf", "": "inquiry-7-expose.pdf",
		".hidden": "inquiry-7-expose.pdf", "a\r\nb.pdf": "ab.pdf", "plan": "plan.pdf"} {
		if got := exposeFilename(in, "7"); got != want {
			t.Errorf("exposeFilename(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestLengthsInCharacters: limits are said in characters; a title within
// them but over the broker's bytes is refused in words, nothing is sent.
func TestLengthsInCharacters(t *testing.T) {
	e, fb, _ := newInqEnv(t)
	b := e.browser()
	b.signIn()
	csrf := csrfOf(t, b.do("GET", InquiriesPath+"/new", nil).Body.String())
	for _, tc := range []struct {
		label, want string
		code        int
	}{
		{strings.Repeat("ä", 300), "Title: too long. Some letters, such as ä, é or emoji, take more room than others; with them it holds fewer than 500 characters.", http.StatusBadRequest},
		{strings.Repeat("a", 501), "Title: at most 500 characters (this one has 501).", http.StatusBadRequest},
		{strings.Repeat("ä", 250), "", http.StatusSeeOther},
	} {
		fields := inquiryFields(csrf)
		fields.Set("label", tc.label)
		ct, form := multipartForm(t, fields, nil)
		rec := b.post(InquiriesPath, ct, form)
		if rec.Code != tc.code || !strings.Contains(rec.Body.String(), tc.want) {
			t.Fatalf("%d letters: %d\n%s", len([]rune(tc.label)), rec.Code, rec.Body)
		}
		if tc.code == http.StatusBadRequest && (!strings.Contains(rec.Body.String(), `name="label" value="`+tc.label) || strings.Contains(rec.Body.String(), "bytes")) {
			t.Fatalf("%d letters: the form does not keep the title, or speaks of bytes:\n%s", len([]rune(tc.label)), rec.Body)
		}
	}
	if len(fb.ins) != 1 {
		t.Fatalf("%d inquiries created", len(fb.ins))
	}
	v := &view{Lang: "de"}
	if got := tooLong(v, textLimit{"inq.description", 3}, "abcd"); got != "Beschreibung: höchstens 3 Zeichen (dieser Text hat 4)." {
		t.Fatal(got)
	}
}

// TestFormTooLarge: a form over the limit comes back with what was typed
// (not the file) and says why; nothing is saved.
func TestFormTooLarge(t *testing.T) {
	e, fb, _ := newInqEnv(t)
	b := e.browser()
	b.signIn()
	csrf := csrfOf(t, b.do("GET", InquiriesPath+"/new", nil).Body.String())
	big := []byte("%PDF-" + strings.Repeat("x", 100<<10))
	fields := inquiryFields(csrf)
	fields.Set("label", "Typed before the file")
	ct, form := multipartForm(t, fields, big)
	rec := b.post(InquiriesPath, ct, form)
	body := rec.Body.String()
	for _, want := range []string{"The form is larger than 64 KiB", `name="label" value="Typed before the file"`, `name="lastname" value="Lovelace"`, `value="` + urnAge + `"`, `id="expose"`, `aria-invalid="true"`} {
		if rec.Code != http.StatusRequestEntityTooLarge || !strings.Contains(body, want) || rec.Header().Get("Content-Type") != "text/html; charset=utf-8" {
			t.Fatalf("too large, lacks %q: %d\n%s", want, rec.Code, body)
		}
	}
	if len(fb.ins) != 0 {
		t.Fatal("a form over the limit was saved")
	}
	// Without its token, nothing typed is shown back.
	fields.Set("csrf_token", "wrong")
	ct, form = multipartForm(t, fields, big)
	if rec := b.post(InquiriesPath, ct, form); rec.Code != http.StatusRequestEntityTooLarge || strings.Contains(rec.Body.String(), "Typed before the file") {
		t.Fatalf("too large without the token: %d\n%s", rec.Code, rec.Body)
	}
	// Editing: the same, on the edit form.
	ct, form = multipartForm(t, inquiryFields(csrf), nil)
	if rec := b.post(InquiriesPath, ct, form); rec.Code != http.StatusSeeOther {
		t.Fatalf("create: %d", rec.Code)
	}
	fields = inquiryFields(csrf)
	fields.Set("label", "Edited before the file")
	ct, form = multipartForm(t, fields, big)
	rec = b.post(InquiriesPath+"/1", ct, form)
	if rec.Code != http.StatusRequestEntityTooLarge || !strings.Contains(rec.Body.String(), `name="label" value="Edited before the file"`) ||
		!strings.Contains(rec.Body.String(), `action="/explorer/inquiries/1"`) || fb.ins["1"].GetRevision() != 1 {
		t.Fatalf("edit too large: %d\n%s", rec.Code, rec.Body)
	}
}

func TestLateBody(t *testing.T) {
	for target, want := range map[string]bool{"POST /explorer/inquiries": true, "POST /explorer/inquiries/7": true, "POST /explorer/inquiries/7/release": false,
		"GET /explorer/inquiries": false, "POST /explorer/inquiries/": false, "POST /explorer/inquiriesx": false, "POST /explorer/users": false} {
		m, p, _ := strings.Cut(target, " ")
		if got := LateBody(httptest.NewRequest(m, p, nil)); got != want {
			t.Errorf("LateBody(%s) = %v", target, got)
		}
	}
}

// researcherVerifier is fakeVerifier granting the researcher role.
type researcherVerifier struct{ *fakeVerifier }

func (v researcherVerifier) Verify(ctx context.Context, tok string) (identity.Identity, error) {
	id, err := v.fakeVerifier.Verify(ctx, tok)
	if err == nil {
		id.Scopes = []string{"openid", identity.ScopeResearcher}
	}
	return id, err
}

// TestRefusalsSayWhy: a user without the researcher role is not offered
// inquiries, and is told why and whom to ask; other refusals say what to
// do next.
func TestRefusalsSayWhy(t *testing.T) {
	e, _, _ := newInqEnv(t)
	r := e.browser()
	r.signIn()
	if home := r.do("GET", Home, nil).Body.String(); !strings.Contains(home, `href="/explorer/inquiries"`) {
		t.Fatal("a researcher is not offered inquiries")
	}
	rec := r.do("POST", InquiriesPath+"/1/close", url.Values{"csrf_token": {"x"}}, "Sec-Fetch-Site", "cross-site")
	if rec.Code != http.StatusForbidden || !strings.Contains(rec.Body.String(), `<p id="error-hint">Open the page on this site itself`) {
		t.Fatalf("cross-site: %d\n%s", rec.Code, rec.Body)
	}
	e.app.cfg.Verifier = e.v // no researcher role
	b := e.browser()
	b.signIn()
	if home := b.do("GET", Home, nil).Body.String(); strings.Contains(home, `href="/explorer/inquiries"`) {
		t.Fatal("a user without the role is offered inquiries")
	}
	for _, p := range []string{"", "/new", "/1"} {
		rec := b.do("GET", InquiriesPath+p, nil)
		body := rec.Body.String()
		if rec.Code != http.StatusForbidden || !strings.Contains(body, "your account lacks the researcher role (scope broker:researcher). Ask an operator") || strings.Contains(body, "error-hint") {
			t.Fatalf("%s: %d\n%s", p, rec.Code, body)
		}
	}
	if rec := b.do("GET", InquiriesPath, nil, "Accept-Language", "de"); !strings.Contains(rec.Body.String(), "Bitten Sie einen Betreiber") {
		t.Fatalf("in German:\n%s", rec.Body)
	}
}

func TestHints(t *testing.T) {
	v := &view{Lang: "en"}
	for _, tc := range []struct {
		pe   pageError
		want string
	}{
		{pageError{http.StatusBadRequest, "error.badrequest", nil}, "Go back to the page you came from"},
		{pageError{http.StatusBadRequest, "op.users.error.email", nil}, "Go back to the form"},
		{pageError{http.StatusForbidden, "error.forbidden", nil}, "ask an operator"},
		{pageError{http.StatusForbidden, "error.csrf", nil}, ""},
		{pageError{http.StatusForbidden, "op.error.scope", nil}, ""},
		{pageError{http.StatusNotFound, "error.notfound", nil}, ""},
	} {
		got := hintFor(v, tc.pe)
		if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
			t.Errorf("%v: %q", tc.pe, got)
		}
	}
}

// TestListTotals: the list shows each released inquiry's total as the
// broker sums it, a draft none.
func TestListTotals(t *testing.T) {
	e, fb, _ := newInqEnv(t)
	b := e.browser()
	b.signIn()
	csrf := csrfOf(t, b.do("GET", InquiriesPath+"/new", nil).Body.String())
	for range 2 {
		ct, form := multipartForm(t, inquiryFields(csrf), nil)
		if rec := b.post(InquiriesPath, ct, form); rec.Code != http.StatusSeeOther {
			t.Fatalf("create: %d", rec.Code)
		}
	}
	if rec := b.do("POST", InquiriesPath+"/1/release", url.Values{"csrf_token": {csrf}, "confirm": {"yes"}}); rec.Code != http.StatusSeeOther {
		t.Fatalf("release: %d", rec.Code)
	}
	seven, five := int32(7), int32(5)
	// The broker's total, not a sum of the replies here.
	fb.replies["1"] = &brokerv1.ListRepliesResponse{InquiryId: "1", Total: 11,
		Replies: []*brokerv1.Reply{{SiteId: "berlin", Count: &seven}, {SiteId: "dresden", Count: &five}},
		Sites:   []*brokerv1.SiteCount{{SiteId: "berlin", Count: 7, Replies: 1}, {SiteId: "dresden", Count: 5, Replies: 1}}}
	list := b.do("GET", InquiriesPath, nil).Body.String()
	for _, want := range []string{`<strong>11</strong> <span class="hint">(2 of 2 sites answered)</span>`, "not released yet", `<th scope="col">Total</th>`} {
		if !strings.Contains(list, want) {
			t.Fatalf("the list lacks %q:\n%s", want, list)
		}
	}
	// Under the small-count rule the list says the total as the page does.
	fb.replies["1"] = &brokerv1.ListRepliesResponse{InquiryId: "1", Total: 7, MinCount: 5, SuppressedSites: 1,
		Replies: []*brokerv1.Reply{{SiteId: "berlin", Count: &seven}, {SiteId: "dresden", Suppressed: true}},
		Sites:   []*brokerv1.SiteCount{{SiteId: "berlin", Count: 7, Replies: 1}, {SiteId: "dresden", Replies: 1, Suppressed: 1}}}
	if list := b.do("GET", InquiriesPath, nil).Body.String(); !strings.Contains(list, "<strong>7, and 1 site with fewer than 5</strong>") {
		t.Fatalf("the list under the small-count rule:\n%s", list)
	}
}
