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

// The inquiry pages' tests share these: the registry's and the broker's
// fakes, a test environment with both, and a complete form.

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
	res := &brokerv1.ListSitesResponse{SiteIds: f.sites}
	for _, id := range f.sites {
		res.Sites = append(res.Sites, &brokerv1.Site{Id: id, NameDe: "Standort " + id, NameEn: "Site " + id, HasActiveBank: id != "dresden"})
	}
	return res, nil
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
	a, err := New(Config{MDR: mdr, Broker: fb, Verifier: researcherVerifier{e.v}, Loopback: e.idp, Store: e.store, Now: e.clock.now,
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

func mustTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}
