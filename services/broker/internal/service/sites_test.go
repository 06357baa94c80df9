package service

import (
	"context"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"

	brokerv1 "fris.dev/proto/broker/v1"
	"fris.dev/services/broker/internal/storage"
)

// TestCreateSite: what the registry accepts, the fallback of a missing
// display name, and if_missing.
func TestCreateSite(t *testing.T) {
	rs, _, _ := replicas(t, 1, ModeApproval)
	admin := Admin{Service: rs[0]}
	ctx := context.Background()
	long := strings.Repeat("x", maxSiteText+1)
	for _, c := range []struct {
		name string
		req  *brokerv1.CreateSiteRequest
		want codes.Code
	}{
		{"complete", &brokerv1.CreateSiteRequest{Id: "ukdd", NameDe: "Universitätsklinikum Dresden", NameEn: "University Hospital Dresden", Contact: "a@b.de", LogoUrl: "https://x.de/l.png"}, codes.OK},
		{"one name", &brokerv1.CreateSiteRequest{Id: "muc", NameEn: "Munich"}, codes.OK},
		{"taken", &brokerv1.CreateSiteRequest{Id: "ukdd", NameDe: "x"}, codes.AlreadyExists},
		{"taken if missing", &brokerv1.CreateSiteRequest{Id: "ukdd", NameDe: "x", IfMissing: true}, codes.OK},
		{"no name", &brokerv1.CreateSiteRequest{Id: "a"}, codes.InvalidArgument},
		{"bad id", &brokerv1.CreateSiteRequest{Id: "a/b", NameDe: "x"}, codes.InvalidArgument},
		{"long name", &brokerv1.CreateSiteRequest{Id: "a", NameDe: long}, codes.InvalidArgument},
		{"control in contact", &brokerv1.CreateSiteRequest{Id: "a", NameDe: "x", Contact: "a\x00"}, codes.InvalidArgument},
		{"script logo", &brokerv1.CreateSiteRequest{Id: "a", NameDe: "x", LogoUrl: "javascript:alert(1)"}, codes.InvalidArgument},
		{"relative logo", &brokerv1.CreateSiteRequest{Id: "a", NameDe: "x", LogoUrl: "/logo.png"}, codes.InvalidArgument},
		{"http logo", &brokerv1.CreateSiteRequest{Id: "a", NameDe: "x", LogoUrl: "http://x.de/l.png"}, codes.InvalidArgument},
		{"logo with credentials", &brokerv1.CreateSiteRequest{Id: "a", NameDe: "x", LogoUrl: "https://u:p@x.de/l.png"}, codes.InvalidArgument},
		{"long logo", &brokerv1.CreateSiteRequest{Id: "a", NameDe: "x", LogoUrl: "https://x.de/" + strings.Repeat("l", maxLogoURL)}, codes.InvalidArgument},
		{"long contact", &brokerv1.CreateSiteRequest{Id: "a", NameDe: "x", Contact: long}, codes.InvalidArgument},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := admin.CreateSite(ctx, c.req); code(err) != c.want {
				t.Fatalf("CreateSite = %v, want %v", err, c.want)
			}
		})
	}
	got, err := admin.GetSite(ctx, &brokerv1.GetSiteRequest{Id: "ukdd"})
	if err != nil || got.GetNameDe() != "Universitätsklinikum Dresden" || got.GetContact() != "a@b.de" {
		t.Fatalf("if_missing changed the site: %v, %v", got, err)
	}
	if got, _ := admin.GetSite(ctx, &brokerv1.GetSiteRequest{Id: "muc"}); got.GetNameDe() != "Munich" {
		t.Fatalf("missing German name: %v", got)
	}
	if _, err := admin.GetSite(ctx, &brokerv1.GetSiteRequest{Id: "nosuch"}); code(err) != codes.NotFound {
		t.Fatalf("GetSite of an unknown site: %v", err)
	}
}

// TestUpdateSite changes only the fields sent.
func TestUpdateSite(t *testing.T) {
	rs, _, _ := replicas(t, 1, ModeApproval)
	admin := Admin{Service: rs[0]}
	ctx := context.Background()
	got, err := admin.UpdateSite(ctx, &brokerv1.UpdateSiteRequest{Id: "charite", NameDe: proto.String("Charité – Universitätsmedizin Berlin"), Contact: proto.String("x@charite.de")})
	if err != nil || got.GetNameDe() != "Charité – Universitätsmedizin Berlin" || got.GetNameEn() != "Site charite" || got.GetContact() != "x@charite.de" {
		t.Fatalf("UpdateSite = %v, %v", got, err)
	}
	if _, err := admin.UpdateSite(ctx, &brokerv1.UpdateSiteRequest{Id: "charite", LogoUrl: proto.String("ftp://x")}); code(err) != codes.InvalidArgument {
		t.Fatalf("bad logo: %v", err)
	}
	if _, err := admin.UpdateSite(ctx, &brokerv1.UpdateSiteRequest{Id: "nosuch", NameDe: proto.String("x")}); code(err) != codes.NotFound {
		t.Fatalf("unknown site: %v", err)
	}
	for name, r := range map[string]*brokerv1.UpdateSiteRequest{
		"http logo":   {Id: "charite", LogoUrl: proto.String("http://charite.de/l.png")},
		"long name":   {Id: "charite", NameEn: proto.String(strings.Repeat("x", maxSiteText+1))},
		"no name":     {Id: "charite", NameDe: proto.String(" "), NameEn: proto.String("")},
		"bad contact": {Id: "charite", NameEn: proto.String("Charité"), Contact: proto.String("a\nb")},
		"bad id":      {Id: "a/b", NameDe: proto.String("x")},
	} {
		if _, err := admin.UpdateSite(ctx, r); code(err) != codes.InvalidArgument {
			t.Fatalf("%s: %v", name, err)
		}
	}
	if got, _ := admin.GetSite(ctx, &brokerv1.GetSiteRequest{Id: "charite"}); got.GetContact() != "x@charite.de" || got.GetNameEn() != "Site charite" {
		t.Fatalf("a refused update changed the site: %v", got)
	}
	// An http logo stored before logos had to be https stays while other
	// fields change, and goes when the operator replaces or clears it.
	if _, err := rs[0].store.UpdateSite(ctx, "charite", func(s *storage.Site) error { s.LogoURL = "http://charite.de/old.png"; return nil }); err != nil {
		t.Fatal(err)
	}
	got, err = admin.UpdateSite(ctx, &brokerv1.UpdateSiteRequest{Id: "charite", NameEn: proto.String("Charité Berlin")})
	if err != nil || got.GetLogoUrl() != "http://charite.de/old.png" || got.GetNameEn() != "Charité Berlin" {
		t.Fatalf("update beside a stored http logo = %v, %v", got, err)
	}
	if got, err = admin.UpdateSite(ctx, &brokerv1.UpdateSiteRequest{Id: "charite", LogoUrl: proto.String("")}); err != nil || got.GetLogoUrl() != "" {
		t.Fatalf("clearing the logo = %v, %v", got, err)
	}
}

// TestUnknownSitesRefused: linking a bank and targeting an inquiry name a
// site of the registry; the message names the unknown one.
func TestUnknownSitesRefused(t *testing.T) {
	rs, _, _ := replicas(t, 1, ModeApproval)
	s := rs[0]
	admin := Admin{Service: s}
	ctx := context.Background()
	if _, _, err := s.Register(ctx, "bank@x.org"); err != nil {
		t.Fatal(err)
	}
	in, err := s.CreateInquiry(ctx, "r", newContent("s1"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		call func() error
	}{
		{"approve", func() error {
			_, err := admin.ApproveBank(ctx, &brokerv1.ApproveBankRequest{Email: "bank@x.org", SiteId: "dresdn"})
			return err
		}},
		{"link", func() error {
			_, err := admin.LinkBankSite(ctx, &brokerv1.LinkBankSiteRequest{Email: "bank@x.org", SiteId: "dresdn"})
			return err
		}},
		{"create inquiry", func() error { _, err := s.CreateInquiry(ctx, "r", newContent("s1", "dresdn")); return err }},
		{"update inquiry", func() error { _, err := s.UpdateInquiry(ctx, in.GetId(), "r", newContent("dresdn")); return err }},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := c.call()
			if code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), `unknown site "dresdn"`) {
				t.Fatalf("err = %v", err)
			}
		})
	}
	if b, _ := s.store.Bank(ctx, "bank@x.org"); b.SiteID != "" || b.Status != storage.BankPending {
		t.Fatalf("a refused approval changed the bank: %+v", b)
	}
	if got, _ := s.GetInquiry(ctx, in.GetId(), "r"); len(got.GetTargetSites()) != 1 || got.GetRevision() != 1 {
		t.Fatalf("a refused update changed the inquiry: %v", got)
	}
}

// TestSitesStatus: the researcher's list tells sites with an active bank
// and when one of their banks last replied.
func TestSitesStatus(t *testing.T) {
	rs, clk, _ := replicas(t, 1, ModeApproval)
	s := rs[0]
	ctx := context.Background()
	tok, _, err := s.Register(ctx, "bank@x.org")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := (Admin{Service: s}).ApproveBank(ctx, &brokerv1.ApproveBankRequest{Email: "bank@x.org", SiteId: "s2"}); err != nil {
		t.Fatal(err)
	}
	in, _ := s.CreateInquiry(ctx, "r", newContent("s2"))
	if _, err := s.ReleaseInquiry(ctx, in.GetId(), "r"); err != nil {
		t.Fatal(err)
	}
	at := clk.now()
	if err := s.Reply(withAuth("Samply "+tok), in.GetId(), "bank@x.org", []byte("3"), "text/plain"); err != nil {
		t.Fatal(err)
	}
	sites, err := s.Sites(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, site := range sites {
		active, replied := site.GetId() == "s2", site.GetLastReplyAt() != nil
		if site.GetHasActiveBank() != active || replied != active {
			t.Fatalf("site %s: active bank %v, last reply %v", site.GetId(), site.GetHasActiveBank(), site.GetLastReplyAt())
		}
		if active && !site.GetLastReplyAt().AsTime().Equal(at) {
			t.Fatalf("last reply at %v, want %v", site.GetLastReplyAt().AsTime(), at)
		}
	}
}

// TestMigrateSites: a store written before the registry (banks linked to
// sites it does not hold) gains those sites, named by their ids, and
// keeps the sites it has.
func TestMigrateSites(t *testing.T) {
	rs, _, _ := replicas(t, 1, ModeApproval)
	s := rs[0]
	ctx := context.Background()
	for email, site := range map[string]string{"a@x.org": "leipzig", "b@x.org": "leipzig", "c@x.org": "s1", "d@x.org": ""} {
		if err := s.store.CreateBank(ctx, storage.Bank{Email: email, TokenHash: email, Status: storage.BankActive, SiteID: site}); err != nil {
			t.Fatal(err)
		}
	}
	for range 2 { // a second start changes nothing
		if err := s.MigrateSites(ctx); err != nil {
			t.Fatal(err)
		}
		sites, err := s.Sites(ctx)
		if err != nil || len(sites) != len(testSites)+1 {
			t.Fatalf("sites = %v, %v", sites, err)
		}
		got, err := (Admin{Service: s}).GetSite(ctx, &brokerv1.GetSiteRequest{Id: "leipzig"})
		if err != nil || got.GetNameDe() != "leipzig" || got.GetNameEn() != "leipzig" || !got.GetHasActiveBank() {
			t.Fatalf("migrated site = %v, %v", got, err)
		}
		if got, _ := (Admin{Service: s}).GetSite(ctx, &brokerv1.GetSiteRequest{Id: "s1"}); got.GetNameEn() != "Site s1" {
			t.Fatalf("the migration changed an existing site: %v", got)
		}
	}
}
