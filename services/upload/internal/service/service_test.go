package service

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"fris.dev/pkg/errinfo"
	"fris.dev/pkg/grpctest"
	"fris.dev/pkg/kv"
	"fris.dev/pkg/password"
	uploadv1 "fris.dev/proto/upload/v1"
	"fris.dev/services/upload/internal/contenttype"
	"fris.dev/services/upload/internal/patient"
	"fris.dev/services/upload/internal/stats"
	"fris.dev/services/upload/internal/storage"
)

// fakeRegistry refuses values equal to "bad", fails when down and does
// not answer (until the call's context ends) when hung.
type fakeRegistry struct {
	down, hung bool
	calls      int
}

func (f *fakeRegistry) Check(ctx context.Context, vs []patient.Value) ([]Problem, error) {
	f.calls++
	if f.hung {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	if f.down {
		return nil, errors.New("registry down")
	}
	var out []Problem
	for _, v := range vs {
		if v.Text == "bad" {
			out = append(out, Problem{Value: v, Reason: "bad is not allowed"})
		}
	}
	return out, nil
}

type fixture struct {
	pub   uploadv1.UploadServiceClient
	admin uploadv1.UploadAdminClient
	reg   *fakeRegistry
	now   time.Time
}

func newFixture(t *testing.T, mode string) *fixture {
	db, err := kv.OpenBolt(filepath.Join(t.TempDir(), "u.db"), kv.BoltOptions{NoSync: true, Partitions: storage.Partitions})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	f := &fixture{reg: &fakeRegistry{}, now: time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)}
	svc := New(Config{MaxDocumentBytes: 4096, MaxDepth: 16, Validation: mode, RegistryTimeout: 50 * time.Millisecond}, storage.New(db),
		password.New(password.Params{Time: 1, Memory: 1024, Threads: 1}, time.Minute), f.reg, nil, slog.New(slog.DiscardHandler))
	svc.SetClock(func() time.Time { return f.now })
	cc := grpctest.Serve(t, func(s *grpc.Server) {
		uploadv1.RegisterUploadServiceServer(s, Public{Service: svc})
		uploadv1.RegisterUploadAdminServer(s, Admin{Service: svc})
	})
	f.pub, f.admin = uploadv1.NewUploadServiceClient(cc), uploadv1.NewUploadAdminClient(cc)
	return f
}

func as(user, pass string) context.Context {
	return metadata.AppendToOutgoingContext(context.Background(), "authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(user+":"+pass)))
}

var t1 = &uploadv1.Teiler{SiteId: "charite", TeilerId: "teiler1"}

func doc(id, value string) []byte {
	return []byte(`<Patient xmlns="http://schema.samply.de/ccp/Patient" id="` + id + `"><Case xmlns="http://schema.samply.de/ccp/Case" id="c">` +
		`<Attribute xmlns="http://schema.samply.de/ccp/Attribute"><MdrKey xmlns="http://schema.samply.de/ccp/MdrKey">urn:x:dataelement:1:1</MdrKey>` +
		`<Value xmlns="http://schema.samply.de/ccp/Value">` + value + `</Value></Attribute></Case></Patient>`)
}

func wantCode(t *testing.T, err error, c codes.Code, msg string) {
	t.Helper()
	if status.Code(err) != c || !strings.Contains(status.Convert(err).Message(), msg) {
		t.Fatalf("err = %v, want %v containing %q", err, c, msg)
	}
}

func TestCredentials(t *testing.T) {
	f := newFixture(t, ValidateOff)
	ctx := context.Background()
	res, err := f.admin.CreateCredential(ctx, &uploadv1.CreateCredentialRequest{Username: "u1", Teiler: t1})
	if err != nil || len(res.GetPassword()) < 20 {
		t.Fatalf("generated password %q, %v", res.GetPassword(), err)
	}
	pass := res.GetPassword()
	if _, err := f.pub.GetUploadStats(as("u1", pass), &uploadv1.GetUploadStatsRequest{Teiler: t1}); err != nil {
		t.Fatal(err)
	}
	_, err = f.admin.CreateCredential(ctx, &uploadv1.CreateCredentialRequest{Username: "u1", Teiler: t1, Password: "another password"})
	wantCode(t, err, codes.AlreadyExists, "exists")
	again, err := f.admin.CreateCredential(ctx, &uploadv1.CreateCredentialRequest{Username: "u1", Teiler: t1, IfMissing: true})
	if err != nil || !again.GetExisted() || again.GetPassword() != "" {
		t.Fatalf("if_missing = %v, %v", again, err)
	}
	_, err = f.admin.CreateCredential(ctx, &uploadv1.CreateCredentialRequest{Username: "u1", Teiler: &uploadv1.Teiler{SiteId: "x", TeilerId: "y"}, IfMissing: true})
	wantCode(t, err, codes.AlreadyExists, "belongs to charite/teiler1")
	for _, bad := range []*uploadv1.CreateCredentialRequest{
		{Username: "a:b", Teiler: t1}, {Username: "", Teiler: t1}, {Username: "ok", Teiler: &uploadv1.Teiler{SiteId: "s"}},
		{Username: "ok", Teiler: t1, Password: "short"},
	} {
		_, err := f.admin.CreateCredential(ctx, bad)
		wantCode(t, err, codes.InvalidArgument, "")
	}
	for _, c := range []struct {
		ctx  context.Context
		code codes.Code
	}{
		{context.Background(), codes.Unauthenticated},
		{as("u1", "wrong"), codes.Unauthenticated},
		{as("nobody", pass), codes.Unauthenticated},
		{metadata.AppendToOutgoingContext(context.Background(), "authorization", "Basic !!"), codes.Unauthenticated},
	} {
		_, err := f.pub.GetUploadStats(c.ctx, &uploadv1.GetUploadStatsRequest{Teiler: t1})
		wantCode(t, err, c.code, "")
	}
	_, err = f.pub.GetUploadStats(as("u1", pass), &uploadv1.GetUploadStatsRequest{Teiler: &uploadv1.Teiler{SiteId: "dresden", TeilerId: "teiler1"}})
	wantCode(t, err, codes.PermissionDenied, "dresden/teiler1")
	set, err := f.admin.SetCredentialPassword(ctx, &uploadv1.SetCredentialPasswordRequest{Username: "u1", Password: "a new password"})
	if err != nil || set.GetPassword() != "a new password" {
		t.Fatal(err)
	}
	_, err = f.pub.GetUploadStats(as("u1", pass), &uploadv1.GetUploadStatsRequest{Teiler: t1})
	wantCode(t, err, codes.Unauthenticated, "")
	if _, err := f.admin.SetCredentialDisabled(ctx, &uploadv1.SetCredentialDisabledRequest{Username: "u1", Disabled: true}); err != nil {
		t.Fatal(err)
	}
	_, err = f.pub.GetUploadStats(as("u1", "a new password"), &uploadv1.GetUploadStatsRequest{Teiler: t1})
	wantCode(t, err, codes.Unauthenticated, "")
	_, err = f.admin.SetCredentialDisabled(ctx, &uploadv1.SetCredentialDisabledRequest{Username: "ghost", Disabled: true})
	wantCode(t, err, codes.NotFound, "ghost")
	list, _ := f.admin.ListCredentials(ctx, &uploadv1.ListCredentialsRequest{})
	if len(list.GetCredentials()) != 1 || !list.GetCredentials()[0].GetDisabled() {
		t.Fatalf("ListCredentials = %v", list)
	}
}

func seeded(t *testing.T, mode string) (*fixture, context.Context) {
	f := newFixture(t, mode)
	if _, err := f.admin.CreateCredential(context.Background(), &uploadv1.CreateCredentialRequest{Username: "u", Teiler: t1, Password: "password1234"}); err != nil {
		t.Fatal(err)
	}
	return f, as("u", "password1234")
}

func TestPutPatientOutcomes(t *testing.T) {
	f, ctx := seeded(t, ValidateOff)
	put := func(id string, d []byte) (*uploadv1.PutPatientResponse, error) {
		return f.pub.PutPatient(ctx, &uploadv1.PutPatientRequest{Teiler: t1, PatientId: id, Document: d})
	}
	if res, err := put("p1", doc("p1", "1")); err != nil || res.GetOutcome() != uploadv1.PutPatientResponse_CREATED {
		t.Fatalf("first = %v, %v", res, err)
	}
	if res, err := put("p1", doc("p1", "2")); err != nil || res.GetOutcome() != uploadv1.PutPatientResponse_REPLACED {
		t.Fatalf("second = %v, %v", res, err)
	}
	_, err := put("p2", doc("p1", "1"))
	wantCode(t, err, codes.InvalidArgument, `the document's id "p1" is not the path's patient id "p2"`)
	_, err = put("p3", []byte("<Patient"))
	wantCode(t, err, codes.InvalidArgument, "malformed XML")
	_, err = put("p4", append(doc("p4", "1"), make([]byte, 5000)...))
	wantCode(t, err, codes.ResourceExhausted, "larger than 4096")
	// (Invalid UTF-8 cannot travel in a proto string; the gateway refuses it.)
	for _, id := range []string{"", "a\x00b", strings.Repeat("x", 513)} {
		_, err = put(id, doc(id, "1"))
		wantCode(t, err, codes.InvalidArgument, "patient id")
	}
	got, err := f.admin.GetPatient(context.Background(), &uploadv1.GetPatientRequest{Teiler: t1, PatientId: "p1"})
	if err != nil || string(got.GetDocument()) != string(doc("p1", "2")) || got.GetSummary().GetCases() != 1 || got.GetSummary().GetAttributes() != 1 {
		t.Fatalf("GetPatient = %v, %v", got, err)
	}
	for _, id := range []string{"p3", "p4"} {
		_, err := f.admin.GetPatient(context.Background(), &uploadv1.GetPatientRequest{Teiler: t1, PatientId: id})
		wantCode(t, err, codes.NotFound, id)
	}
	if f.reg.calls != 0 {
		t.Fatal("mode off asked the registry")
	}
	_, err = f.pub.DeletePatientsByPrefix(ctx, &uploadv1.DeletePatientsByPrefixRequest{Teiler: t1})
	wantCode(t, err, codes.InvalidArgument, "prefix")
}

func TestValidationModes(t *testing.T) {
	f, ctx := seeded(t, ValidateReject)
	res, err := f.pub.PutPatient(ctx, &uploadv1.PutPatientRequest{Teiler: t1, PatientId: "p", Document: doc("p", "bad")})
	if err != nil || res.GetOutcome() != uploadv1.PutPatientResponse_REJECTED || len(res.GetProblems()) != 1 ||
		res.GetProblems()[0].GetWhere() != `case "c"` || res.GetProblems()[0].GetReason() != "bad is not allowed" {
		t.Fatalf("reject = %v, %v", res, err)
	}
	if _, err := f.admin.GetPatient(context.Background(), &uploadv1.GetPatientRequest{Teiler: t1, PatientId: "p"}); status.Code(err) != codes.NotFound {
		t.Fatalf("rejected document stored: %v", err)
	}
	f.reg.down = true
	_, err = f.pub.PutPatient(ctx, &uploadv1.PutPatientRequest{Teiler: t1, PatientId: "p", Document: doc("p", "good")})
	wantCode(t, err, codes.Unavailable, "registry")

	w, wctx := seeded(t, ValidateWarn)
	res, err = w.pub.PutPatient(wctx, &uploadv1.PutPatientRequest{Teiler: t1, PatientId: "p", Document: doc("p", "bad")})
	if err != nil || res.GetOutcome() != uploadv1.PutPatientResponse_CREATED || len(res.GetProblems()) != 1 {
		t.Fatalf("warn = %v, %v", res, err)
	}
	w.reg.down = true
	res, err = w.pub.PutPatient(wctx, &uploadv1.PutPatientRequest{Teiler: t1, PatientId: "p", Document: doc("p", "bad")})
	if err != nil || res.GetOutcome() != uploadv1.PutPatientResponse_REPLACED {
		t.Fatalf("warn with the registry down = %v, %v", res, err)
	}
}

// A registry that does not answer is given up on after RegistryTimeout,
// well inside the call's own deadline: warn stores the document unchecked,
// reject answers Unavailable (the gateway's 503), neither waits for the
// caller's deadline (the gateway's 504).
func TestValidationRegistryHangs(t *testing.T) {
	for _, tc := range []struct {
		mode string
		want codes.Code
	}{{ValidateWarn, codes.OK}, {ValidateReject, codes.Unavailable}} {
		t.Run(tc.mode, func(t *testing.T) {
			f, ctx := seeded(t, tc.mode)
			f.reg.hung = true
			ctx, cancel := context.WithTimeout(ctx, time.Hour)
			defer cancel()
			res, err := f.pub.PutPatient(ctx, &uploadv1.PutPatientRequest{Teiler: t1, PatientId: "p", Document: doc("p", "good")})
			if status.Code(err) != tc.want || ctx.Err() != nil {
				t.Fatalf("PutPatient = %v, %v (call context: %v)", res, err, ctx.Err())
			}
			_, err = f.admin.GetPatient(context.Background(), &uploadv1.GetPatientRequest{Teiler: t1, PatientId: "p"})
			if stored := err == nil; stored != (tc.want == codes.OK) {
				t.Fatalf("stored = %v after %v", stored, tc.want)
			}
		})
	}
}

func TestUploadStats(t *testing.T) {
	f, ctx := seeded(t, ValidateOff)
	// get reads the document GET answers, as the connector would.
	get := func() time.Time {
		res, err := f.pub.GetUploadStats(ctx, &uploadv1.GetUploadStatsRequest{Teiler: t1})
		if err != nil {
			t.Fatal(err)
		}
		if res.GetContentType() != "application/xml; charset=utf-8" {
			t.Fatalf("GetUploadStats content type %q", res.GetContentType())
		}
		at, ok, err := stats.Parse(bytes.NewReader(res.GetDocument()), contenttype.UTF8)
		if err != nil || !ok {
			t.Fatalf("GetUploadStats document %q: %v %v", res.GetDocument(), ok, err)
		}
		return at
	}
	if !get().Equal(time.Unix(0, 0)) {
		t.Fatal("a fresh teiler has a timestamp after the epoch")
	}
	for _, tc := range []struct {
		body, contentType string
		want              time.Time
		fromDoc           bool
	}{
		{`<Uploadstats><LastUploadTimestamp>Mon, 23 Nov 2026 10:00:00 CET</LastUploadTimestamp></Uploadstats>`, "application/xml", time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC), true},
		{`<Uploadstats/>`, "", f.now, false},
		// An hour ahead of the server: the server's clock wins.
		{`<Uploadstats><LastUploadTimestamp>Mon, 23 Nov 2026 13:00:00 GMT</LastUploadTimestamp></Uploadstats>`, "", f.now, false},
		// The connector's exact request, and ISO-8859-1 beyond ASCII.
		{`<UploadStats><LastUploadTimestamp>Mon, 23 Nov 2026 08:19:46 CET</LastUploadTimestamp></UploadStats>`, "text/plain; charset=ISO-8859-1", time.Date(2026, 11, 23, 7, 19, 46, 0, time.UTC), true},
		{"<UploadStats><!-- M\xfcnchen --><LastUploadTimestamp>Mon, 23 Nov 2026 08:00:00 GMT</LastUploadTimestamp></UploadStats>", "text/plain; charset=latin1", time.Date(2026, 11, 23, 8, 0, 0, 0, time.UTC), true},
		{`<Uploadstats><LastUploadTimestamp>Mon, 23 Nov 2026 07:00:00 UTC</LastUploadTimestamp></Uploadstats>`, "text/xml; charset=US-ASCII", time.Date(2026, 11, 23, 7, 0, 0, 0, time.UTC), true},
		// An empty body: now.
		{``, "text/plain; charset=ISO-8859-1", f.now, false},
	} {
		res, err := f.pub.PutUploadStats(ctx, &uploadv1.PutUploadStatsRequest{Teiler: t1, Document: []byte(tc.body), ContentType: tc.contentType})
		if err != nil || res.GetFromDocument() != tc.fromDoc || !res.GetStored().AsTime().Equal(tc.want) || !get().Equal(tc.want) {
			t.Fatalf("%s: %v, %v; stored %v", tc.body, res, err, get())
		}
	}
	_, err := f.pub.PutUploadStats(ctx, &uploadv1.PutUploadStatsRequest{Teiler: t1, Document: []byte(`<x/>`)})
	wantCode(t, err, codes.InvalidArgument, "Uploadstats")
	_, err = f.pub.PutUploadStats(ctx, &uploadv1.PutUploadStatsRequest{Teiler: t1, Document: []byte(`<Uploadstats/>`), ContentType: "text/plain; charset=koi8-r"})
	wantMediaType(t, err, `charset "koi8-r" is not supported: send UTF-8 or ISO-8859-1`)
	if !get().Equal(f.now) {
		t.Fatal("a refused document changed the timestamp")
	}
}

// wantMediaType checks an unsupported media type: the message for the
// client and the reason the gateway answers 415 for.
func wantMediaType(t *testing.T, err error, msg string) {
	t.Helper()
	st := status.Convert(err)
	if st.Code() != codes.InvalidArgument || st.Message() != msg || !errinfo.Has(st, errinfo.UnsupportedMediaType) {
		t.Fatalf("err = %v (reason %q), want InvalidArgument %q with %s", err, errinfo.Reason(st), msg, errinfo.UnsupportedMediaType)
	}
}

func TestMediaTypes(t *testing.T) {
	f, ctx := seeded(t, ValidateOff)
	put := func(ctx context.Context, ct string) error {
		_, err := f.pub.PutPatient(ctx, &uploadv1.PutPatientRequest{Teiler: t1, PatientId: "p", Document: doc("p", "1"), ContentType: ct})
		return err
	}
	for _, ct := range []string{"", "application/xml", "text/xml; charset=UTF-8", "application/x+xml; charset=us-ascii"} {
		if err := put(ctx, ct); err != nil {
			t.Errorf("patient as %q: %v", ct, err)
		}
	}
	wantMediaType(t, put(ctx, "application/json"), "Content-Type application/json is not supported: send application/xml")
	wantMediaType(t, put(ctx, "application/xml; charset=ISO-8859-1"), `charset "iso-8859-1" is not supported: send UTF-8`)
	// Before the credentials, as when the gateway decided it.
	wantMediaType(t, put(context.Background(), "text/plain"), "Content-Type text/plain is not supported: send application/xml")
	_, err := f.pub.PutUploadStats(context.Background(), &uploadv1.PutUploadStatsRequest{Teiler: t1, ContentType: "application/json"})
	wantMediaType(t, err, "Content-Type application/json is not supported: send application/xml or a text type")
	_, err = f.pub.PutUploadStats(ctx, &uploadv1.PutUploadStatsRequest{Teiler: t1, ContentType: "text/html; charset=latin1"})
	if err != nil {
		t.Fatalf("upload statistics as text/html in latin1: %v", err)
	}
}

func TestListPatientsPaging(t *testing.T) {
	f, ctx := seeded(t, ValidateOff)
	for _, id := range []string{"a", "b", "c", "d", "e"} {
		if _, err := f.pub.PutPatient(ctx, &uploadv1.PutPatientRequest{Teiler: t1, PatientId: id, Document: doc(id, "1")}); err != nil {
			t.Fatal(err)
		}
	}
	var ids []string
	tok := ""
	for {
		page, err := f.admin.ListPatients(context.Background(), &uploadv1.ListPatientsRequest{Teiler: t1, PageSize: 2, PageToken: tok})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range page.GetPatients() {
			ids = append(ids, p.GetPatientId())
		}
		if tok = page.GetNextPageToken(); tok == "" {
			break
		}
	}
	if strings.Join(ids, ",") != "a,b,c,d,e" {
		t.Fatalf("pages = %v", ids)
	}
	_, err := f.admin.ListPatients(context.Background(), &uploadv1.ListPatientsRequest{Teiler: t1, PageToken: "garbage"})
	wantCode(t, err, codes.InvalidArgument, "page_token")
	n, err := f.admin.CountPatients(context.Background(), &uploadv1.CountPatientsRequest{Teiler: t1})
	if err != nil || n.GetCount() != 5 {
		t.Fatalf("CountPatients = %v, %v", n, err)
	}
	if _, err := f.pub.DeletePatient(ctx, &uploadv1.DeletePatientRequest{Teiler: t1, PatientId: "a"}); err != nil {
		t.Fatal(err)
	}
	_, err = f.pub.DeletePatient(ctx, &uploadv1.DeletePatientRequest{Teiler: t1, PatientId: "a"})
	wantCode(t, err, codes.NotFound, `no patient "a"`)
	del, err := f.pub.DeletePatientsByPrefix(ctx, &uploadv1.DeletePatientsByPrefixRequest{Teiler: t1, Prefix: "b"})
	if err != nil || del.GetDeleted() != 1 {
		t.Fatalf("prefix delete = %v, %v", del, err)
	}
}

// Ids at the store's key limit: the longest allowed ids store; ids whose
// escaped key cannot fit, and unknown overlong ids, get client errors.
func TestIDsAtTheKeyLimit(t *testing.T) {
	f := newFixture(t, ValidateOff)
	admin := context.Background()
	long := &uploadv1.Teiler{SiteId: strings.Repeat("s", 128), TeilerId: strings.Repeat("t", 128)}
	if _, err := f.admin.CreateCredential(admin, &uploadv1.CreateCredentialRequest{Username: "u", Teiler: long, Password: "password1234"}); err != nil {
		t.Fatal(err)
	}
	_, err := f.admin.CreateCredential(admin, &uploadv1.CreateCredentialRequest{Username: "v", Teiler: &uploadv1.Teiler{SiteId: strings.Repeat("s", 129), TeilerId: "t"}})
	wantCode(t, err, codes.InvalidArgument, "at most 128 bytes")
	ctx := as("u", "password1234")
	put := func(id string) (*uploadv1.PutPatientResponse, error) {
		return f.pub.PutPatient(ctx, &uploadv1.PutPatientRequest{Teiler: long, PatientId: id, Document: doc(id, "1")})
	}
	id := strings.Repeat("a", 512)
	if res, err := put(id); err != nil || res.GetOutcome() != uploadv1.PutPatientResponse_CREATED {
		t.Fatalf("512-byte id = %v, %v", res, err)
	}
	_, err = put(strings.Repeat("%", 512))
	wantCode(t, err, codes.InvalidArgument, "too long")
	_, err = f.pub.DeletePatient(ctx, &uploadv1.DeletePatientRequest{Teiler: long, PatientId: strings.Repeat("%/", 1000)})
	wantCode(t, err, codes.NotFound, "")
	_, err = f.admin.GetPatient(admin, &uploadv1.GetPatientRequest{Teiler: long, PatientId: strings.Repeat("x", 2000)})
	wantCode(t, err, codes.NotFound, "")
	got, err := f.admin.GetPatient(admin, &uploadv1.GetPatientRequest{Teiler: long, PatientId: id})
	if err != nil || string(got.GetDocument()) != string(doc(id, "1")) {
		t.Fatalf("GetPatient = %v, %v", got, err)
	}
}

// TestValidationInContainers: reject mode finds a bad value however deep
// its container sits, and nil or empty values are stored, not refused.
func TestValidationInContainers(t *testing.T) {
	f, ctx := seeded(t, ValidateReject)
	ccp := func(id, inner string) []byte {
		return []byte(`<ns2:Patient xmlns:ns2="http://schema.samply.de/ccp/Patient" xmlns:ns3="http://schema.samply.de/ccp/Attribute" xmlns:ns4="http://schema.samply.de/ccp/MdrKey" xmlns:ns5="http://schema.samply.de/ccp/Value" xmlns:ns6="http://schema.samply.de/ccp/Container" xmlns:ns7="http://schema.samply.de/ccp/Case" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" id="` + id + `">` +
			`<ns6:Container id="t1" designation="Tumour"><ns6:Container id="h1" designation="Histology">` + inner + `</ns6:Container></ns6:Container>` +
			`<ns7:Case id="c1"><ns6:Container id="p1" designation="Progress"><ns3:Attribute><ns4:MdrKey>urn:x:dataelement:2:1</ns4:MdrKey><ns5:Value xsi:nil="true"/></ns3:Attribute></ns6:Container><Ref><EntityId>t1</EntityId></Ref></ns7:Case>` +
			`</ns2:Patient>`)
	}
	attr := func(v string) string {
		return `<ns3:Attribute><ns4:MdrKey>urn:x:dataelement:1:1</ns4:MdrKey>` + v + `</ns3:Attribute>`
	}
	res, err := f.pub.PutPatient(ctx, &uploadv1.PutPatientRequest{Teiler: t1, PatientId: "deep", Document: ccp("deep", attr(`<ns5:Value>bad</ns5:Value>`))})
	if err != nil || res.GetOutcome() != uploadv1.PutPatientResponse_REJECTED || len(res.GetProblems()) != 1 || res.GetProblems()[0].GetWhere() != `container "h1"` {
		t.Fatalf("bad value in a nested container = %v, %v", res, err)
	}
	res, err = f.pub.PutPatient(ctx, &uploadv1.PutPatientRequest{Teiler: t1, PatientId: "deep", Document: ccp("deep", attr(`<ns5:Value/>`)+attr(`<ns5:Value xsi:nil="true"/>`))})
	if err != nil || res.GetOutcome() != uploadv1.PutPatientResponse_CREATED || len(res.GetProblems()) != 0 {
		t.Fatalf("empty and nil values = %v, %v", res, err)
	}
	got, err := f.admin.GetPatient(context.Background(), &uploadv1.GetPatientRequest{Teiler: t1, PatientId: "deep"})
	if s := got.GetSummary(); err != nil || s.GetCases() != 1 || s.GetContainers() != 3 || s.GetRefs() != 1 || s.GetAttributes() != 3 {
		t.Fatalf("summary = %v, %v", s, err)
	}
}

// TestListTeilers: every teiler with a credential, its patients, when the
// newest was stored and its last upload statistics.
func TestListTeilers(t *testing.T) {
	f, ctx := seeded(t, ValidateOff)
	t2 := &uploadv1.Teiler{SiteId: "aachen", TeilerId: "t9"}
	for _, u := range []string{"a1", "a2"} {
		if _, err := f.admin.CreateCredential(context.Background(), &uploadv1.CreateCredentialRequest{Username: u, Teiler: t2, Password: "password1234"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.admin.SetCredentialDisabled(context.Background(), &uploadv1.SetCredentialDisabledRequest{Username: "a2", Disabled: true}); err != nil {
		t.Fatal(err)
	}
	stored := f.now
	for _, id := range []string{"p1", "p2"} {
		if _, err := f.pub.PutPatient(ctx, &uploadv1.PutPatientRequest{Teiler: t1, PatientId: id, Document: doc(id, "1")}); err != nil {
			t.Fatal(err)
		}
		f.now = f.now.Add(time.Minute)
		stored = stored.Add(time.Minute)
	}
	stored = stored.Add(-time.Minute)
	if _, err := f.pub.PutUploadStats(ctx, &uploadv1.PutUploadStatsRequest{Teiler: t1, Document: []byte(`<Uploadstats/>`)}); err != nil {
		t.Fatal(err)
	}
	res, err := f.admin.ListTeilers(context.Background(), &uploadv1.ListTeilersRequest{})
	if err != nil {
		t.Fatal(err)
	}
	ts := res.GetTeilers()
	if len(ts) != 2 {
		t.Fatalf("teilers %v", ts)
	}
	a, c := ts[0], ts[1]
	if a.GetTeiler().GetSiteId() != "aachen" || a.GetPatients() != 0 || a.GetLastUpload() != nil || a.GetLastStored() != nil ||
		a.GetCredentials() != 2 || a.GetDisabled() != 1 {
		t.Errorf("aachen: %v", a)
	}
	if c.GetTeiler().GetSiteId() != "charite" || c.GetPatients() != 2 || !c.GetLastStored().AsTime().Equal(stored) ||
		!c.GetLastUpload().AsTime().Equal(f.now) || c.GetCredentials() != 1 || c.GetDisabled() != 0 {
		t.Errorf("charite: %v (want last stored %v, last upload %v)", c, stored, f.now)
	}
	names, err := f.admin.ListTeilers(context.Background(), &uploadv1.ListTeilersRequest{NamesOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if n := names.GetTeilers(); len(n) != 2 || n[1].GetTeiler().GetSiteId() != "charite" || n[1].GetPatients() != 0 || n[1].GetLastUpload() != nil || n[1].GetCredentials() != 1 {
		t.Errorf("names only: %v", n)
	}
}
