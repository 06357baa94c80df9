package service

import (
	"context"
	"testing"
	"time"

	"google.golang.org/grpc/metadata"

	"fris.dev/pkg/identity"
	brokerv1 "fris.dev/proto/broker/v1"
)

// TestMinCount: with MinCount 5 the researcher's calls (ListReplies and
// WatchReplies) get a reply of 3 as suppressed and a total of the counts
// shown; the admin API gets the exact counts, marked.
func TestMinCount(t *testing.T) {
	rs, _, _ := replicas(t, 1, ModeApproval)
	s := rs[0]
	s.cfg.MinCount, s.cfg.WatchInterval = 5, time.Hour
	ctx := context.Background()
	in, err := s.CreateInquiry(ctx, "r1", newContent("s1", "s2"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.ReleaseInquiry(ctx, in.GetId(), "r1"); err != nil {
		t.Fatal(err)
	}
	got, _ := watch(t, s, in.GetId(), "r1")
	next(t, got, 30*time.Second)
	for site, body := range map[string]string{"s1": "3", "s2": "12"} {
		email := "bank@" + site + ".example"
		tok, _, err := s.Register(ctx, email)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := (Admin{Service: s}).ApproveBank(ctx, &brokerv1.ApproveBankRequest{Email: email, SiteId: site}); err != nil {
			t.Fatal(err)
		}
		if err := s.Reply(withAuth("Samply "+tok), in.GetId(), email, []byte(body), "text/plain"); err != nil {
			t.Fatal(err)
		}
	}
	researcher := func(what string, r *brokerv1.ListRepliesResponse) {
		t.Helper()
		if r.GetTotal() != 12 || r.GetMinCount() != 5 || r.GetSuppressedSites() != 1 {
			t.Fatalf("%s: %v", what, r)
		}
		for _, rp := range r.GetReplies() {
			if rp.GetSiteId() == "s1" && (!rp.GetSuppressed() || rp.Count != nil || rp.GetBody() != "") {
				t.Errorf("%s: the reply of 3 = %v", what, rp)
			}
		}
	}
	var last *brokerv1.ListRepliesResponse
	for last == nil || len(last.GetReplies()) < 2 {
		last = next(t, got, 30*time.Second)
	}
	researcher("watch", last)
	id := identity.Identity{Subject: "r1", Scopes: []string{identity.ScopeResearcher}}
	rctx := metadata.NewIncomingContext(ctx, metadata.Pairs(id.Pairs()...))
	res, err := Researcher{Service: s}.ListReplies(rctx, &brokerv1.ListRepliesRequest{Id: in.GetId()})
	if err != nil {
		t.Fatal(err)
	}
	researcher("ListReplies", res)
	op, err := Admin{Service: s}.ListReplies(ctx, &brokerv1.ListRepliesRequest{Id: in.GetId()})
	if err != nil {
		t.Fatal(err)
	}
	if op.GetTotal() != 15 || op.GetSuppressedSites() != 1 {
		t.Fatalf("operator: %v", op)
	}
	for _, rp := range op.GetReplies() {
		if rp.GetSiteId() == "s1" && (!rp.GetSuppressed() || rp.GetCount() != 3 || rp.GetBody() != "3") {
			t.Errorf("operator: the reply of 3 = %v", rp)
		}
	}
}
