package service

import (
	"context"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	brokerv1 "fris.dev/proto/broker/v1"
)

// TestReach: a site's poll and its first fetch of an inquiry are noted,
// and only the inquiry's author reads them; the expose too.
func TestReach(t *testing.T) {
	rs, clock, _ := replicas(t, 1, ModeApproval)
	s := rs[0]
	ctx := context.Background()
	tok, _, err := s.Register(ctx, "a@x.org")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := (Admin{Service: s}).ApproveBank(ctx, &brokerv1.ApproveBankRequest{Email: "a@x.org", SiteId: "s1"}); err != nil {
		t.Fatal(err)
	}
	c := newContent("s1", "s2")
	c.ExposePdf, c.ExposeFilename = []byte("%PDF-1.4 study\n%%EOF"), "study.pdf"
	in, err := s.CreateInquiry(ctx, "r", c)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.ReleaseInquiry(ctx, in.GetId(), "r"); err != nil {
		t.Fatal(err)
	}
	res, err := s.Reach(ctx, in.GetId(), "r")
	if err != nil || res.GetSeen() != 0 || len(res.GetSites()) != 2 || res.GetSites()[0].GetLastPollAt() != nil {
		t.Fatalf("before any poll: %v, %v", res, err)
	}
	bank := withAuth("Samply " + tok)
	start := clock.now()
	if _, err := s.List(bank); err != nil {
		t.Fatal(err)
	}
	// A poll within the grain is not written; a later one is.
	clock.add(time.Second)
	if _, err := s.List(bank); err != nil {
		t.Fatal(err)
	}
	if res, _ = s.Reach(ctx, in.GetId(), "r"); !res.GetSites()[0].GetLastPollAt().AsTime().Equal(start) || res.GetSeen() != 0 {
		t.Fatalf("after the polls: %v", res)
	}
	clock.add(time.Minute)
	if _, err := s.Part(bank, in.GetId(), brokerv1.InquiryPart_WHOLE); err != nil {
		t.Fatal(err)
	}
	seen := clock.now()
	clock.add(time.Minute)
	if _, err := s.Part(bank, in.GetId(), brokerv1.InquiryPart_QUERY); err != nil {
		t.Fatal(err)
	}
	if _, err := s.List(bank); err != nil {
		t.Fatal(err)
	}
	res, _ = s.Reach(ctx, in.GetId(), "r")
	if res.GetSeen() != 1 || !res.GetSites()[0].GetSeenAt().AsTime().Equal(seen) || !res.GetSites()[0].GetLastPollAt().AsTime().Equal(clock.now()) ||
		res.GetSites()[1].GetSiteId() != "s2" || res.GetSites()[1].GetSeenAt() != nil || res.GetSites()[1].GetLastPollAt() != nil {
		t.Fatalf("after the fetch: %v", res)
	}
	if _, err := s.Reach(ctx, in.GetId(), "someone else"); code(err) != codes.NotFound {
		t.Fatalf("another's reach: %v", err)
	}

	d, err := s.InquiryExpose(ctx, in.GetId(), "r")
	if err != nil || string(d.Body) != "%PDF-1.4 study\n%%EOF" || d.Filename != "study.pdf" || d.ContentType != "application/pdf" {
		t.Fatalf("expose: %+v, %v", d, err)
	}
	if _, err := s.InquiryExpose(ctx, in.GetId(), "someone else"); code(err) != codes.NotFound {
		t.Fatalf("another's expose: %v", err)
	}
	bare, _ := s.CreateInquiry(ctx, "r", newContent("s1"))
	if _, err := s.InquiryExpose(ctx, bare.GetId(), "r"); code(err) != codes.NotFound {
		t.Fatalf("no expose: %v", err)
	}
}
