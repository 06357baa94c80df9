package service

import (
	"context"
	"strings"
	"testing"

	brokerv1 "fris.dev/proto/broker/v1"
	"fris.dev/services/broker/internal/storage"
)

// TestRepliesUnreadable: a reply that carries no count is counted as
// unreadable per site and in total, never as 0, and a Reply document's
// donor and sample counts reach the API. Records stored before the broker
// knew unreadable replies read the same way.
func TestRepliesUnreadable(t *testing.T) {
	rs, _, _ := replicas(t, 1, ModeApproval)
	s := rs[0]
	ctx := context.Background()
	admin := Admin{Service: s}
	banks := map[string]string{}
	for email, site := range map[string]string{"a@x.org": "s1", "b@x.org": "s1", "c@x.org": "s2", "d@x.org": "s3", "e@x.org": "s2"} {
		tok, _, err := s.Register(ctx, email)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := admin.ApproveBank(ctx, &brokerv1.ApproveBankRequest{Email: email, SiteId: site}); err != nil {
			t.Fatal(err)
		}
		banks[email] = tok
	}
	in, _ := s.CreateInquiry(ctx, "r", newContent("s1", "s2", "s3"))
	if _, err := s.ReleaseInquiry(ctx, in.GetId(), "r"); err != nil {
		t.Fatal(err)
	}
	doc := "{\"donor\":{\"label\":\"Spender\",\"count\":12,\"stratifications\":[{\"title\":\"Geschlecht\",\"strata\":[" +
		"{\"label\":\"m\xe4nnlich\",\"count\":5},{\"label\":\"weiblich\",\"count\":7}]}]}," +
		"\"sample\":{\"label\":\"Proben\",\"count\":30,\"stratifications\":[]},\"redirectUrl\":null,\"site\":\"W\xfcrzburg\"}"
	for _, r := range []struct{ email, body, ct string }{
		{"a@x.org", "4", "text/plain"},
		{"b@x.org", "lots <b>", "text/plain"},
		{"c@x.org", doc, "text/plain; charset=ISO-8859-1"},
		{"d@x.org", `{"donor":{"count":"many"}}`, "text/plain"},
	} {
		if err := s.Reply(withAuth("Samply "+banks[r.email]), in.GetId(), r.email, []byte(r.body), r.ct); err != nil {
			t.Fatalf("reply of %s: %v", r.email, err)
		}
	}
	// A record as an older broker stored it: a count for a plain number
	// is kept, and a body without one is unreadable.
	if err := s.store.PutReply(ctx, storage.Reply{InquiryID: in.GetId(), BankEmail: "e@x.org", SiteID: "s2", Body: "n/a", ReceivedAt: 1}); err != nil {
		t.Fatal(err)
	}
	res, err := s.Replies(ctx, in.GetId(), "r")
	if err != nil {
		t.Fatal(err)
	}
	if res.GetTotal() != 16 || res.GetUnreadable() != 3 || res.Samples == nil || res.GetSamples() != 30 {
		t.Fatalf("total %d, unreadable %d, samples %v", res.GetTotal(), res.GetUnreadable(), res.Samples)
	}
	want := map[string]struct {
		count, replies, unreadable int32
		samples                    *int32
	}{
		"s1": {4, 2, 1, nil},
		"s2": {12, 2, 1, ptr(int32(30))},
		"s3": {0, 1, 1, nil},
	}
	if len(res.GetSites()) != len(want) {
		t.Fatalf("sites = %v", res.GetSites())
	}
	for _, sc := range res.GetSites() {
		w := want[sc.GetSiteId()]
		if sc.GetCount() != w.count || sc.GetReplies() != w.replies || sc.GetUnreadable() != w.unreadable ||
			(sc.Samples == nil) != (w.samples == nil) || (w.samples != nil && sc.GetSamples() != *w.samples) {
			t.Errorf("site %s = %v; want %+v", sc.GetSiteId(), sc, w)
		}
	}
	for _, r := range res.GetReplies() {
		switch r.GetBankEmail() {
		case "a@x.org":
			if r.Unreadable || r.Count == nil || r.GetCount() != 4 || r.Donor != nil {
				t.Errorf("plain reply = %v", r)
			}
		case "b@x.org", "d@x.org", "e@x.org":
			if !r.Unreadable || r.Count != nil || r.Donor != nil {
				t.Errorf("unreadable reply = %v", r)
			}
		case "c@x.org":
			d, sm := r.GetDonor(), r.GetSample()
			if r.Unreadable || r.GetCount() != 12 || d.GetLabel() != "Spender" || sm.GetCount() != 30 ||
				len(d.GetStratifications()) != 1 || d.GetStratifications()[0].GetStrata()[0].GetLabel() != "männlich" ||
				r.GetBody() != "{\"donor\":{\"label\":\"Spender\",\"count\":12,\"stratifications\":[{\"title\":\"Geschlecht\",\"strata\":[{\"label\":\"männlich\",\"count\":5},{\"label\":\"weiblich\",\"count\":7}]}]},\"sample\":{\"label\":\"Proben\",\"count\":30,\"stratifications\":[]},\"redirectUrl\":null,\"site\":\"Würzburg\"}" {
				t.Errorf("Reply document = %v", r)
			}
		}
	}
}

// TestResearcherRepliesStrata: the Latin-1 Reply document's strata reach
// the researcher's Replies summed per site and in total, decoded; plain
// and unreadable replies add none.
func TestResearcherRepliesStrata(t *testing.T) {
	rs, _, _ := replicas(t, 1, ModeApproval)
	s := rs[0]
	ctx := context.Background()
	in, _ := s.CreateInquiry(ctx, "r", newContent("s1", "s2"))
	if _, err := s.ReleaseInquiry(ctx, in.GetId(), "r"); err != nil {
		t.Fatal(err)
	}
	doc := "{\"donor\":{\"count\":12,\"stratifications\":[{\"title\":\"Geschlecht\",\"strata\":[" +
		"{\"label\":\"m\xe4nnlich\",\"count\":5},{\"label\":\"weiblich\",\"count\":7}]}]}}"
	for _, r := range []struct{ email, site, body, ct string }{
		{"a@x.org", "s1", "4", "text/plain"},
		{"b@x.org", "s2", doc, "text/plain; charset=ISO-8859-1"},
	} {
		tok, _, err := s.Register(ctx, r.email)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := (Admin{Service: s}).ApproveBank(ctx, &brokerv1.ApproveBankRequest{Email: r.email, SiteId: r.site}); err != nil {
			t.Fatal(err)
		}
		if err := s.Reply(withAuth("Samply "+tok), in.GetId(), r.email, []byte(r.body), r.ct); err != nil {
			t.Fatal(err)
		}
	}
	res, err := s.ResearcherReplies(ctx, in.GetId(), "r")
	if err != nil {
		t.Fatal(err)
	}
	st := res.GetStrata()
	if len(st) != 2 || st[0].GetStratum() != "männlich" || st[0].GetCount() != 5 || st[0].GetEntity() != "donor" || st[1].GetCount() != 7 {
		t.Fatalf("strata = %v", st)
	}
	if s1, s2 := res.GetSites()[0], res.GetSites()[1]; len(s1.GetStrata()) != 0 || len(s2.GetStrata()) != 2 || s2.GetStrata()[0].GetStratification() != "Geschlecht" {
		t.Fatalf("sites = %v", res.GetSites())
	}
}

func ptr[T any](v T) *T { return &v }

func TestAddCountSaturates(t *testing.T) {
	if got := addCount(2147483000, 1000); got != 2147483647 {
		t.Fatalf("addCount = %d", got)
	}
	if got := addCount(3, 4); got != 7 {
		t.Fatalf("addCount = %d", got)
	}
}

// TestParseMemo: a stored reply is parsed once; a new reply of the same
// bank (a new time) is parsed anew; the memo stays bounded.
func TestParseMemo(t *testing.T) {
	var m parseMemo
	r := storage.Reply{InquiryID: "1", BankEmail: "a@x.org", Body: "7", ReceivedAt: 1}
	if got := m.parse(r); got.Count == nil || *got.Count != 7 {
		t.Fatalf("parse = %+v", got)
	}
	r.Body, r.ReceivedAt = "lots <b>", 2
	if got := m.parse(r); got.Readable() {
		t.Fatalf("a new reply read from the memo: %+v", got)
	}
	for i := range maxParsed + 10 {
		m.parse(storage.Reply{InquiryID: "1", BankEmail: "a@x.org", Body: "1", ReceivedAt: int64(i + 10)})
	}
	if n := len(m.m); n > maxParsed {
		t.Fatalf("memo holds %d", n)
	}
	big := strings.Repeat("x", 1<<20)
	for i := range 40 {
		m.parse(storage.Reply{InquiryID: "2", BankEmail: "a@x.org", Body: big, ReceivedAt: int64(i)})
	}
	if m.bytes > maxParsedBytes {
		t.Fatalf("memo holds %d bytes of bodies", m.bytes)
	}
}
