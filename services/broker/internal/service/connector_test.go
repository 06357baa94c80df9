package service

import (
	"context"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"

	brokerv1 "fris.dev/proto/broker/v1"
)

// TestConnectorCalls covers the calls the deployed connector makes besides
// the spec's: hasexpose, the test inquiry, the reference query, monitoring
// reports and site names.
func TestConnectorCalls(t *testing.T) {
	rs, _, _ := replicas(t, 1, ModeApproval)
	s := rs[0]
	ctx := context.Background()
	admin := Admin{Service: s}
	tok, _, err := s.Register(ctx, "bank@site.example")
	if err != nil {
		t.Fatal(err)
	}
	bank := withAuth("Samply " + tok)
	pending, _, err := s.Register(ctx, "pending@site.example")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := admin.ApproveBank(ctx, &brokerv1.ApproveBankRequest{Email: "bank@site.example", SiteId: "s1"}); err != nil {
		t.Fatal(err)
	}

	withExpose := newContent("s1")
	withExpose.ExposePdf = []byte("%PDF-1.4\n%%EOF\n")
	draft, _ := s.CreateInquiry(ctx, "r", withExpose)
	released, _ := s.CreateInquiry(ctx, "r", withExpose)
	bare, _ := s.CreateInquiry(ctx, "r", newContent("s1"))
	for _, id := range []string{released.GetId(), bare.GetId()} {
		if _, err := s.ReleaseInquiry(ctx, id, ""); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("HasExpose", func(t *testing.T) {
		for _, tc := range []struct {
			id   string
			want bool
			code codes.Code
		}{
			{released.GetId(), true, codes.OK},
			{bare.GetId(), false, codes.OK},
			{draft.GetId(), false, codes.OK}, // a draft shows nothing
			{"999", false, codes.OK},
			{"x", false, codes.InvalidArgument},
			{"\xff\xfe", false, codes.InvalidArgument},
			{strings.Repeat("1", 5000), false, codes.InvalidArgument},
		} {
			got, err := s.HasExpose(ctx, tc.id)
			if code(err) != tc.code || got != tc.want {
				t.Errorf("HasExpose(%.20q) = %v, %v; want %v, %v", tc.id, got, err, tc.want, tc.code)
			}
		}
	})

	t.Run("TestInquiryAndReferenceQuery", func(t *testing.T) {
		for _, ctx := range []context.Context{bank, withAuth("Samply " + pending)} {
			d, err := s.TestInquiry(ctx)
			if err != nil || !strings.Contains(string(d.Body), `<Inquiry xmlns="http://schema.samply.de/common/Inquiry" id="0" revision="1"><Query`) ||
				!strings.Contains(string(d.Body), "<SearchFor>Patienten</SearchFor>") {
				t.Fatalf("test inquiry = %s, %v", d.Body, err)
			}
		}
		if _, err := s.TestInquiry(context.Background()); code(err) != codes.Unauthenticated {
			t.Fatalf("test inquiry without a token: %v", err)
		}
		d, err := s.ReferenceQuery(bank, brokerv1.QueryLanguage_QUERY_LANGUAGE_UNSPECIFIED)
		if err != nil || d.ContentType != xmlType || !strings.Contains(string(d.Body), "<Query") {
			t.Fatalf("reference query = %s %s, %v", d.ContentType, d.Body, err)
		}
		d, err = s.ReferenceQuery(bank, brokerv1.QueryLanguage_QUERY_LANGUAGE_CQL)
		if err != nil || d.ContentType != textType || !strings.HasPrefix(string(d.Body), "library Retrieve") {
			t.Fatalf("CQL reference query = %s %s, %v", d.ContentType, d.Body, err)
		}
		if _, err := s.ReferenceQuery(withAuth("Samply nope"), 0); code(err) != codes.Unauthenticated {
			t.Fatalf("reference query with a wrong token: %v", err)
		}
	})

	t.Run("Monitoring", func(t *testing.T) {
		for _, tc := range []struct {
			ctx  context.Context
			body string
			code codes.Code
		}{
			{bank, `[{"parameterName":"old"}]`, codes.OK},
			{bank, `[{"parameter_name":"bridgehead-teiler","status_text":"ok","exit_status":"0"}]`, codes.OK},
			// Not approved yet: nothing stored, whatever the body.
			{withAuth("Samply " + pending), `[]`, codes.PermissionDenied},
			{withAuth("Samply " + pending), `nope`, codes.PermissionDenied},
			{bank, `nope`, codes.InvalidArgument},
			{bank, "[" + strings.Repeat(" ", 70<<10) + "]", codes.ResourceExhausted},
			{context.Background(), `[]`, codes.Unauthenticated},
		} {
			if err := s.Monitoring(tc.ctx, []byte(tc.body)); code(err) != tc.code {
				t.Errorf("Monitoring(%.30q) = %v, want %v", tc.body, err, tc.code)
			}
		}
		all, err := admin.ListMonitoring(ctx, &brokerv1.ListMonitoringRequest{})
		if err != nil || len(all.GetReports()) != 1 {
			t.Fatalf("reports = %v, %v", all, err)
		}
		one, err := admin.ListMonitoring(ctx, &brokerv1.ListMonitoringRequest{BankEmail: "BANK@site.example"})
		if err != nil || len(one.GetReports()) != 1 {
			t.Fatalf("one bank's reports = %v, %v", one, err)
		}
		r := one.GetReports()[0]
		if r.GetSiteId() != "s1" || len(r.GetItems()) != 1 || r.GetItems()[0].GetParameterName() != "bridgehead-teiler" || r.GetItems()[0].GetExitStatus() != "0" {
			t.Fatalf("latest report = %v", r)
		}
	})

	t.Run("SiteNames", func(t *testing.T) {
		d, err := s.SiteNames(bank)
		if err != nil || d.ContentType != jsonType || string(d.Body) != `[{"name":"s1"}]` {
			t.Fatalf("site names = %s %s, %v", d.ContentType, d.Body, err)
		}
		if _, err := s.SiteNames(context.Background()); code(err) != codes.Unauthenticated {
			t.Fatalf("site names without a token: %v", err)
		}
		for _, tc := range []struct {
			ctx   context.Context
			email string
			name  string
			code  codes.Code
		}{
			{bank, "bank@site.example", "Universitätsklinikum Dresden", codes.OK},
			{bank, "pending@site.example", "x", codes.Unauthenticated},
			{withAuth("Samply " + pending), "pending@site.example", "Charité", codes.PermissionDenied},
			{bank, "bank@site.example", "", codes.InvalidArgument},
			{bank, "bank@site.example", "a\x00b", codes.InvalidArgument},
			{bank, "bank@site.example", strings.Repeat("x", 201), codes.InvalidArgument},
			{bank, "nobody@site.example", "x", codes.NotFound},
		} {
			if err := s.SetSiteName(tc.ctx, tc.email, tc.name); code(err) != tc.code {
				t.Errorf("SetSiteName(%s, %.20q) = %v, want %v", tc.email, tc.name, err, tc.code)
			}
		}
		bs, _ := admin.ListBanks(ctx, &brokerv1.ListBanksRequest{})
		for _, b := range bs.GetBanks() {
			if b.GetEmail() == "bank@site.example" && (b.GetReportedSite() != "Universitätsklinikum Dresden" || b.GetSiteId() != "s1") {
				t.Fatalf("bank = %v", b)
			}
			if b.GetEmail() == "pending@site.example" && b.GetReportedSite() != "" {
				t.Fatalf("a pending bank's site name was recorded: %v", b)
			}
		}
	})
}

// TestBadPathValuesAreInvalidArgument: whatever bytes a path carries, the
// service answers InvalidArgument, never Internal.
func TestBadPathValuesAreInvalidArgument(t *testing.T) {
	rs, _, _ := replicas(t, 1, ModeActivationCode)
	s := rs[0]
	ctx := withAuth("Samply " + strings.Repeat("0", 64))
	for _, v := range []string{"\xff\xfe", "a\x00@b.example", "a@b.example\x00", strings.Repeat("a", 300) + "@b.example", "\u202e@b.example\x7f"} {
		if _, _, err := s.Register(context.Background(), v); code(err) != codes.InvalidArgument {
			t.Errorf("Register(%.20q) = %v", v, err)
		}
		if _, err := s.Status(ctx, v); code(err) != codes.InvalidArgument {
			t.Errorf("Status(%.20q) = %v", v, err)
		}
		if err := s.Delete(ctx, v); code(err) != codes.InvalidArgument {
			t.Errorf("Delete(%.20q) = %v", v, err)
		}
		if _, err := s.HasExpose(ctx, v); code(err) != codes.InvalidArgument {
			t.Errorf("HasExpose(%.20q) = %v", v, err)
		}
	}
}
