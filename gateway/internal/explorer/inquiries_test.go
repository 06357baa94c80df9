package explorer

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"fris.dev/pkg/identity"
	"fris.dev/pkg/samplyquery"
	brokerv1 "fris.dev/proto/broker/v1"
	mdrv1 "fris.dev/proto/mdr/v1"
)

// Data elements of the builder's tests, one of each kind.
const (
	urnEnum   = "urn:mdr16:dataelement:15:1" // fakeMDR's: tissue_frozen
	urnAge    = "urn:mdr16:dataelement:14:1"
	urnDate   = "urn:mdr16:dataelement:26:1"
	urnICD    = "urn:mdr16:dataelement:27:1"
	urnAbsent = "urn:mdr16:dataelement:99:1"
)

// qbMDR is fakeMDR with the builder's data elements and a value check.
type qbMDR struct {
	*fakeMDR
	checked []*mdrv1.ValueCheck
}

func (m *qbMDR) GetDataElement(ctx context.Context, r *mdrv1.UrnRequest, o ...grpc.CallOption) (*mdrv1.DataElement, error) {
	switch r.GetUrn() {
	case urnAge:
		return &mdrv1.DataElement{Designations: ds("Donor age", "Spenderalter"),
			Validation: &mdrv1.Validation{Datatype: "INTEGER", ValidationType: "INTEGERRANGE", ValidationData: "0<=x<=120"}}, nil
	case urnDate:
		return &mdrv1.DataElement{Designations: ds("Date of diagnosis", "Diagnosedatum"),
			Validation: &mdrv1.Validation{Datatype: "DATE", ValidationType: "DATE", ValidationData: "DIN_5008_WITH_DAYS"}}, nil
	case urnICD:
		return &mdrv1.DataElement{Designations: ds("Diagnosis ICD-10", "Diagnose ICD-10"), Validation: &mdrv1.Validation{Datatype: "STRING"}}, nil
	}
	return m.fakeMDR.GetDataElement(ctx, r, o...)
}

// CheckValues refuses an age above 120 and any enumerated value but the
// permissible one.
func (m *qbMDR) CheckValues(_ context.Context, r *mdrv1.CheckValuesRequest, _ ...grpc.CallOption) (*mdrv1.CheckValuesResponse, error) {
	m.checked = append(m.checked, r.GetChecks()...)
	res := &mdrv1.CheckValuesResponse{}
	for _, c := range r.GetChecks() {
		v := &mdrv1.ValueVerdict{Urn: c.GetUrn(), Value: c.GetValue(), Valid: true}
		if c.GetUrn() == urnAge && len(c.GetValue()) > 2 && c.GetValue() > "120" ||
			c.GetUrn() == urnEnum && c.GetValue() != "tissue_frozen" {
			v.Valid, v.Reason = false, fmt.Sprintf("%q is not allowed", c.GetValue())
		}
		res.Verdicts = append(res.Verdicts, v)
	}
	return res, nil
}

// fakeBroker is the researcher API in memory; it answers only the
// subject that wrote an inquiry, as the broker does.
type fakeBroker struct {
	brokerv1.ResearcherServiceClient
	mu      sync.Mutex
	ins     map[string]*brokerv1.Inquiry
	authors map[string]string
	pdfs    map[string][]byte
	replies map[string]*brokerv1.ListRepliesResponse
	// watch is what WatchReplies sends, in order.
	watch []*brokerv1.ListRepliesResponse
	// hold keeps a watch open after its items, as the broker does.
	hold  bool
	sites []string
}

func newFakeBroker() *fakeBroker {
	return &fakeBroker{ins: map[string]*brokerv1.Inquiry{}, authors: map[string]string{}, pdfs: map[string][]byte{},
		replies: map[string]*brokerv1.ListRepliesResponse{}, sites: []string{"berlin", "dresden"}}
}

func subjectOf(ctx context.Context) string {
	md, _ := metadata.FromOutgoingContext(ctx)
	return strings.Join(md.Get(identity.KeySubject), ",")
}

func (f *fakeBroker) own(ctx context.Context, id string) (*brokerv1.Inquiry, error) {
	in := f.ins[id]
	if in == nil || f.authors[id] != subjectOf(ctx) {
		return nil, status.Errorf(codes.NotFound, "no inquiry %s", id)
	}
	return in, nil
}

func (f *fakeBroker) CreateInquiry(ctx context.Context, r *brokerv1.CreateInquiryRequest, _ ...grpc.CallOption) (*brokerv1.Inquiry, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if subjectOf(ctx) == "" {
		return nil, status.Error(codes.Unauthenticated, "no token")
	}
	c := r.GetContent()
	if _, err := samplyquery.Parse([]byte(c.GetQuery())); err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "query: %v", err)
	}
	id := fmt.Sprint(len(f.ins) + 1)
	in := &brokerv1.Inquiry{Id: id, Revision: 1, Status: brokerv1.InquiryStatus_DRAFT, Label: c.GetLabel(), Description: c.GetDescription(),
		Query: c.GetQuery(), Contact: c.GetContact(), TargetSites: c.GetTargetSites(), ExpiresAt: c.GetExpiresAt(), CreatedAt: timestamppb.Now()}
	if len(c.GetExposePdf()) > 0 {
		f.pdfs[id] = c.GetExposePdf()
		in.Expose = &brokerv1.ExposeInfo{Id: id, Filename: c.GetExposeFilename(), SizeBytes: int32(len(c.GetExposePdf()))}
	}
	f.ins[id], f.authors[id] = in, subjectOf(ctx)
	return proto.Clone(in).(*brokerv1.Inquiry), nil
}

func (f *fakeBroker) ListInquiries(ctx context.Context, _ *brokerv1.ListInquiriesOfAuthorRequest, _ ...grpc.CallOption) (*brokerv1.InquiryList, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := &brokerv1.InquiryList{}
	for id, in := range f.ins {
		if f.authors[id] == subjectOf(ctx) {
			out.Inquiries = append(out.Inquiries, in)
		}
	}
	return out, nil
}

func (f *fakeBroker) GetInquiry(ctx context.Context, r *brokerv1.GetInquiryRequest, _ ...grpc.CallOption) (*brokerv1.Inquiry, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.own(ctx, r.GetId())
}

func (f *fakeBroker) UpdateInquiry(ctx context.Context, r *brokerv1.UpdateInquiryRequest, _ ...grpc.CallOption) (*brokerv1.Inquiry, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	in, err := f.own(ctx, r.GetId())
	if err != nil {
		return nil, err
	}
	c := r.GetContent()
	in.Label, in.Query, in.TargetSites, in.Revision = c.GetLabel(), c.GetQuery(), c.GetTargetSites(), in.Revision+1
	return in, nil
}

func (f *fakeBroker) setStatus(ctx context.Context, id string, st brokerv1.InquiryStatus) (*brokerv1.Inquiry, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	in, err := f.own(ctx, id)
	if err != nil {
		return nil, err
	}
	if in.Status == brokerv1.InquiryStatus_CLOSED {
		return nil, status.Error(codes.InvalidArgument, "the inquiry is closed")
	}
	in.Status = st
	return in, nil
}

func (f *fakeBroker) ReleaseInquiry(ctx context.Context, r *brokerv1.ReleaseInquiryRequest, _ ...grpc.CallOption) (*brokerv1.Inquiry, error) {
	return f.setStatus(ctx, r.GetId(), brokerv1.InquiryStatus_RELEASED)
}

func (f *fakeBroker) CloseInquiry(ctx context.Context, r *brokerv1.CloseInquiryRequest, _ ...grpc.CallOption) (*brokerv1.Inquiry, error) {
	return f.setStatus(ctx, r.GetId(), brokerv1.InquiryStatus_CLOSED)
}

func (f *fakeBroker) ListReplies(ctx context.Context, r *brokerv1.ListRepliesRequest, _ ...grpc.CallOption) (*brokerv1.ListRepliesResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, err := f.own(ctx, r.GetId()); err != nil {
		return nil, err
	}
	if res := f.replies[r.GetId()]; res != nil {
		return res, nil
	}
	return &brokerv1.ListRepliesResponse{InquiryId: r.GetId()}, nil
}

func (f *fakeBroker) ListSites(context.Context, *brokerv1.ListSitesRequest, ...grpc.CallOption) (*brokerv1.ListSitesResponse, error) {
	return &brokerv1.ListSitesResponse{Sites: f.sites}, nil
}

func (f *fakeBroker) WatchReplies(ctx context.Context, r *brokerv1.ListRepliesRequest, _ ...grpc.CallOption) (grpc.ServerStreamingClient[brokerv1.ListRepliesResponse], error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, err := f.own(ctx, r.GetId()); err != nil {
		return nil, err
	}
	return &fakeStream{ctx: ctx, hold: f.hold, items: append([]*brokerv1.ListRepliesResponse(nil), f.watch...)}, nil
}

// fakeStream sends its items, then ends.
type fakeStream struct {
	grpc.ClientStream
	ctx   context.Context
	hold  bool
	items []*brokerv1.ListRepliesResponse
}

func (s *fakeStream) Recv() (*brokerv1.ListRepliesResponse, error) {
	if len(s.items) == 0 {
		if s.hold {
			<-s.ctx.Done()
			return nil, status.FromContextError(s.ctx.Err()).Err()
		}
		return nil, io.EOF
	}
	r := s.items[0]
	s.items = s.items[1:]
	return r, nil
}

func (s *fakeStream) Context() context.Context { return s.ctx }

func newInqEnv(t *testing.T, done ...chan struct{}) (*env, *fakeBroker, *qbMDR) {
	t.Helper()
	var stop chan struct{}
	if len(done) > 0 {
		stop = done[0]
	}
	e := &env{t: t, idp: newIdP(), v: &fakeVerifier{refused: map[string]bool{}}, mdr: &fakeMDR{}, clock: &clock{mustTime("2030-01-01T10:00:00Z")}}
	e.store = NewMemory(100, e.clock.now)
	fb, mdr := newFakeBroker(), &qbMDR{fakeMDR: e.mdr}
	a, err := New(Config{MDR: mdr, Broker: fb, Verifier: e.v, Loopback: e.idp, Store: e.store, Now: e.clock.now,
		ClientID: "explorer", ClientSecret: "s3cret-s3cret-s3cret", MaxUpload: 64 << 10, Done: stop})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	a.Register(mux)
	e.app, e.h = a, mux
	return e, fb, mdr
}

// multipartForm encodes fields and an expose file.
func multipartForm(t *testing.T, fields url.Values, pdf []byte) (string, *bytes.Buffer) {
	t.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	for k, vs := range fields {
		for _, v := range vs {
			_ = w.WriteField(k, v)
		}
	}
	if pdf != nil {
		fw, err := w.CreateFormFile("expose", "study.pdf")
		if err != nil {
			t.Fatal(err)
		}
		_, _ = fw.Write(pdf)
	}
	_ = w.Close()
	return w.FormDataContentType(), &buf
}

func (b *browser) post(target, contentType string, body io.Reader, hdr ...string) *httptest.ResponseRecorder {
	b.e.t.Helper()
	r := httptest.NewRequest("POST", "http://gw.test"+target, body)
	r.Header.Set("Content-Type", contentType)
	for i := 0; i+1 < len(hdr); i += 2 {
		r.Header.Set(hdr[i], hdr[i+1])
	}
	for _, c := range b.cookies {
		r.AddCookie(c)
	}
	rec := httptest.NewRecorder()
	b.e.h.ServeHTTP(rec, r)
	return rec
}

var csrfRE = regexp.MustCompile(`name="csrf_token" value="([^"]+)"`)

func csrfOf(t *testing.T, body string) string {
	t.Helper()
	m := csrfRE.FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no CSRF token in\n%s", body)
	}
	return m[1]
}

const testPDF = "%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n"

// inquiryFields is a complete inquiry form: a group of an age range and
// a pick list, OR a group with a date range and an ICD-10 list.
func inquiryFields(csrf string) url.Values {
	return url.Values{
		"csrf_token": {csrf}, "label": {"Lung cancer, adults"}, "description": {"A feasibility count."},
		"lastname": {"Lovelace"}, "firstname": {"Ada"}, "email": {"ada@example.org"}, "site": {"berlin", "dresden"}, "expires": {"2030-02-01"},
		"qb.ns": {"mdr16"}, "qb.op": {"Or"}, "qb.group": {"g1", "g2"}, "qb.g.g1.op": {"And"}, "qb.g.g2.op": {"And"},
		"qb.cond":     {"g1.c1", "g1.c2", "g2.c3", "g2.c4"},
		"qb.c.c1.urn": {urnAge}, "qb.c.c1.from": {"18"}, "qb.c.c1.to": {"99"},
		"qb.c.c2.urn": {urnEnum}, "qb.c.c2.v": {"tissue_frozen"},
		"qb.c.c3.urn": {urnDate}, "qb.c.c3.from": {"2020-01-01"},
		"qb.c.c4.urn": {urnICD}, "qb.c.c4.op": {"in"}, "qb.c.c4.v": {"C34.0, C34.1"},
	}
}

const wantQuery = `<Where><Or>` +
	`<And><Between><r:RangeAttribute><k:MdrKey>urn:mdr16:dataelement:14:1</k:MdrKey><v:LowerBound>18</v:LowerBound><v:UpperBound>99</v:UpperBound></r:RangeAttribute></Between>` +
	`<Eq><a:Attribute><k:MdrKey>urn:mdr16:dataelement:15:1</k:MdrKey><v:Value>tissue_frozen</v:Value></a:Attribute></Eq></And>` +
	`<And><Geq><a:Attribute><k:MdrKey>urn:mdr16:dataelement:26:1</k:MdrKey><v:Value>01.01.2020</v:Value></a:Attribute></Geq>` +
	`<In><m:MultivalueAttribute><k:MdrKey>urn:mdr16:dataelement:27:1</k:MdrKey><v:Value>C34.0</v:Value><v:Value>C34.1</v:Value></m:MultivalueAttribute></In></And>` +
	`</Or></Where>`

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
	if rec := b.do("POST", InquiriesPath+"/1/release", url.Values{"csrf_token": {csrf}}); rec.Code != http.StatusSeeOther {
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
		rec.Body.String() != "site,answered,count,replies,last_reply_utc,unreadable,samples\nberlin,true,7,1,2030-01-01 11:00 UTC,0,\ndresden,false,,0,,0,\n" {
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

	if rec := b.do("POST", InquiriesPath+"/1/close", url.Values{"csrf_token": {csrf}}); rec.Code != http.StatusSeeOther {
		t.Fatalf("close: %d", rec.Code)
	}
	body = b.do("GET", InquiriesPath+"/1", nil).Body.String()
	if !strings.Contains(body, "Closed") || strings.Contains(body, "data-events") || strings.Contains(body, "/release") || strings.Contains(body, "/edit") {
		t.Fatalf("closed page:\n%s", body)
	}
	// Closing again: the broker's refusal is shown on the page.
	if rec := b.do("POST", InquiriesPath+"/1/close", url.Values{"csrf_token": {csrf}}); rec.Code != http.StatusConflict || !strings.Contains(rec.Body.String(), "the inquiry is closed") {
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

// TestEventsEndOnShutdown: an open event stream ends when the gateway
// begins to shut down.
func TestEventsEndOnShutdown(t *testing.T) {
	done := make(chan struct{})
	e, fb, _ := newInqEnv(t, done)
	fb.ins["1"], fb.authors["1"] = &brokerv1.Inquiry{Id: "1", Status: brokerv1.InquiryStatus_RELEASED, TargetSites: []string{"berlin"}}, "42"
	fb.watch, fb.hold = []*brokerv1.ListRepliesResponse{{InquiryId: "1"}}, true
	b := e.browser()
	b.signIn()
	ended := make(chan *httptest.ResponseRecorder, 1)
	go func() { ended <- b.do("GET", InquiriesPath+"/1/events", nil) }()
	select {
	case rec := <-ended:
		t.Fatalf("the stream ended by itself: %d\n%s", rec.Code, rec.Body)
	case <-time.After(200 * time.Millisecond):
	}
	close(done)
	select {
	case rec := <-ended:
		if rec.Code != 200 || !strings.Contains(rec.Body.String(), "event: results") {
			t.Fatalf("stream: %d\n%s", rec.Code, rec.Body)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("the stream outlived the shutdown")
	}
}

// TestInquiryFormErrors: what is missing or wrong is said in the page's
// language, the form keeps what was typed, and nothing is created.
func TestInquiryFormErrors(t *testing.T) {
	e, fb, _ := newInqEnv(t)
	b := e.browser()
	b.signIn()
	csrf := csrfOf(t, b.do("GET", InquiriesPath+"/new", nil).Body.String())
	f := inquiryFields(csrf)
	f.Set("label", "")
	f.Del("site")
	f.Set("expires", "2029-12-31")
	f.Set("qb.c.c1.to", "150")        // above the registry's 120
	f.Set("qb.c.c2.v", "tissue_warm") // not permissible
	f.Set("description", "kept <b>text</b>")
	ct, form := multipartForm(t, f, []byte("not a pdf"))
	rec := b.post(InquiriesPath+"?lang=de", ct, form)
	body := rec.Body.String()
	for _, want := range []string{"Geben Sie der Anfrage einen Titel.", "Wählen Sie mindestens einen Zielstandort.", "Der Ablauf muss ein Tag sein",
		"Das Exposé ist keine PDF-Datei", "Einige Bedingungen passen nicht zum Register", "&#34;150&#34; is not allowed", "&#34;tissue_warm&#34; is not allowed",
		"kept &lt;b&gt;text&lt;/b&gt;", `value="150"`, `role="alert"`, `aria-invalid="true"`} {
		if rec.Code != http.StatusBadRequest || !strings.Contains(body, want) {
			t.Fatalf("lacks %q: %d\n%s", want, rec.Code, body)
		}
	}
	if len(fb.ins) != 0 {
		t.Fatal("an invalid form created an inquiry")
	}
	// A good PDF with another mistake: the form asks for the file again.
	f = inquiryFields(csrf)
	f.Set("label", " ")
	ct, form = multipartForm(t, f, []byte(testPDF))
	if rec := b.post(InquiriesPath, ct, form); rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "choose it again") {
		t.Fatalf("a PDF with another mistake: %d\n%s", rec.Code, rec.Body)
	}
	// Too large for the form's limit.
	ct, form = multipartForm(t, inquiryFields(csrf), bytes.Repeat([]byte("%PDF-"), 20<<10))
	if rec := b.post(InquiriesPath, ct, form); rec.Code != http.StatusRequestEntityTooLarge {
		t.Fatalf("too large: %d", rec.Code)
	}
	// A malformed builder is a bad request.
	f = inquiryFields(csrf)
	f.Set("qb.cond", "nogroup.c1")
	ct, form = multipartForm(t, f, nil)
	if rec := b.post(InquiriesPath, ct, form); rec.Code != http.StatusBadRequest || len(fb.ins) != 0 {
		t.Fatalf("malformed builder: %d", rec.Code)
	}
}

// TestBuilderFragments: the pieces htmx fetches: a search's data
// elements, a condition of the element's kind, a group, the preview.
func TestBuilderFragments(t *testing.T) {
	e, _, _ := newInqEnv(t)
	b := e.browser()
	b.signIn()
	rec := b.do("GET", QueryPath+"/elements?qb.ns=mdr16&q=age&g=g1", nil, "HX-Request", "true")
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), `hx-get="/explorer/query/condition?urn=urn%3Amdr16%3Adataelement%3A23%3A1&amp;g=g1"`) {
		t.Fatalf("elements: %d\n%s", rec.Code, rec.Body)
	}
	for urn, want := range map[string]string{urnAge: `type="number" value="" step="1" min="0" max="120"`, urnEnum: `type="checkbox" name="qb.c.`, urnDate: `type="date"`, urnICD: `<option value="like"`} {
		rec := b.do("GET", QueryPath+"/condition?"+url.Values{"urn": {urn}, "g": {"g1"}}.Encode(), nil, "HX-Request", "true")
		if rec.Code != 200 || !strings.Contains(rec.Body.String(), want) || !strings.Contains(rec.Body.String(), `name="qb.cond" value="g1.`) || !strings.Contains(rec.Body.String(), `hx-swap-oob="true"`) {
			t.Fatalf("condition on %s: %d\n%s", urn, rec.Code, rec.Body)
		}
	}
	if rec := b.do("GET", QueryPath+"/condition?urn="+urnAbsent+"&g=g1", nil); rec.Code != 404 {
		t.Fatalf("unknown element: %d", rec.Code)
	}
	if rec := b.do("GET", QueryPath+"/group", nil); rec.Code != 200 || !strings.Contains(rec.Body.String(), `name="qb.group"`) {
		t.Fatalf("group: %d\n%s", rec.Code, rec.Body)
	}
	f := inquiryFields("")
	rec = b.do("GET", QueryPath+"/preview?"+f.Encode(), nil, "HX-Request", "true")
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), "Every condition fits the registry.") || !strings.Contains(rec.Body.String(), "&lt;v:LowerBound&gt;18&lt;/v:LowerBound&gt;") {
		t.Fatalf("preview: %d\n%s", rec.Code, rec.Body)
	}
	f.Set("qb.c.c1.from", "100")
	f.Set("qb.c.c1.to", "20")
	rec = b.do("GET", QueryPath+"/preview?"+f.Encode(), nil)
	if !strings.Contains(rec.Body.String(), "Donor age: “From” is above “to”.") {
		t.Fatalf("preview of a reversed range:\n%s", rec.Body)
	}
}

func TestInquiryMessages(t *testing.T) {
	for k, v := range inquiryMessages {
		if fmt.Sprint(messages[k]) != fmt.Sprint(v) {
			t.Errorf("%s is in both catalogues", k)
		}
	}
	if m := messages.Missing(); len(m) > 0 {
		t.Errorf("texts missing: %v", m)
	}
}

func mustTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}
