package suppress

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	brokerv1 "fris.dev/proto/broker/v1"
)

// sum is an exact response as the broker builds it from replies: site
// counts and totals are the exact sums.
func sum(replies ...*brokerv1.Reply) *brokerv1.ListRepliesResponse {
	res := &brokerv1.ListRepliesResponse{InquiryId: "1", Replies: replies}
	bySite := map[string]*brokerv1.SiteCount{}
	for _, r := range replies {
		sc := bySite[r.GetSiteId()]
		if sc == nil {
			sc = &brokerv1.SiteCount{SiteId: r.GetSiteId()}
			bySite[r.GetSiteId()] = sc
			res.Sites = append(res.Sites, sc)
		}
		sc.Replies++
		if r.Count == nil {
			sc.Unreadable++
			res.Unreadable++
			continue
		}
		sc.Count += r.GetCount()
		res.Total += r.GetCount()
		if r.GetSample() != nil {
			sc.Samples = proto.Int32(sc.GetSamples() + r.GetSample().GetCount())
			res.Samples = proto.Int32(res.GetSamples() + r.GetSample().GetCount())
		}
	}
	return res
}

func plainReply(site string, n int32) *brokerv1.Reply {
	return &brokerv1.Reply{SiteId: site, BankEmail: site + "@bank", Count: proto.Int32(n), Body: fmt.Sprint(n)}
}

func docReply(site string, donors, samples int32, strata ...int32) *brokerv1.Reply {
	st := &brokerv1.Stratification{Title: "sex"}
	for i, n := range strata {
		st.Strata = append(st.Strata, &brokerv1.Stratum{Label: fmt.Sprint("s", i), Count: n})
	}
	return &brokerv1.Reply{SiteId: site, BankEmail: site + "@bank", Count: proto.Int32(donors), Body: "{...}",
		Donor:  &brokerv1.ReplyEntity{Label: "donors", Count: donors, Stratifications: []*brokerv1.Stratification{st}},
		Sample: &brokerv1.ReplyEntity{Label: "samples", Count: samples}}
}

func TestHide(t *testing.T) {
	tests := []struct {
		name              string
		k                 int32
		in                *brokerv1.ListRepliesResponse
		total             int32
		samples           *int32
		suppressedSites   int32
		siteCounts        map[string]int32
		suppressedReplies int
		bodiesKept        int
	}{
		{name: "off", k: 0, in: sum(plainReply("a", 3), plainReply("b", 12)),
			total: 15, siteCounts: map[string]int32{"a": 3, "b": 12}, bodiesKept: 2},
		{name: "one below", k: 5, in: sum(plainReply("a", 3), plainReply("b", 12)),
			total: 12, suppressedSites: 1, siteCounts: map[string]int32{"a": 0, "b": 12}, suppressedReplies: 1, bodiesKept: 1},
		{name: "zero is below too", k: 5, in: sum(plainReply("a", 0), plainReply("b", 5)),
			total: 5, suppressedSites: 1, siteCounts: map[string]int32{"a": 0, "b": 5}, suppressedReplies: 1, bodiesKept: 1},
		{name: "k itself is shown", k: 5, in: sum(plainReply("a", 5)),
			total: 5, siteCounts: map[string]int32{"a": 5}, bodiesKept: 1},
		{name: "all below", k: 5, in: sum(plainReply("a", 1), plainReply("b", 4)),
			total: 0, suppressedSites: 2, siteCounts: map[string]int32{"a": 0, "b": 0}, suppressedReplies: 2},
		{name: "two banks of one site, one below", k: 5, in: sum(plainReply("a", 2), &brokerv1.Reply{SiteId: "a", BankEmail: "x@bank", Count: proto.Int32(9), Body: "9"}),
			total: 9, suppressedSites: 1, siteCounts: map[string]int32{"a": 9}, suppressedReplies: 1, bodiesKept: 1},
		{name: "small samples and strata of a shown reply", k: 5, in: sum(docReply("a", 12, 3, 9, 3), docReply("b", 20, 30, 10, 10)),
			total: 32, samples: proto.Int32(30), siteCounts: map[string]int32{"a": 12, "b": 20}, bodiesKept: 1},
		{name: "unreadable bodies are withheld", k: 5, in: sum(&brokerv1.Reply{SiteId: "a", Body: `{"cnt": 2}`, Unreadable: true}),
			siteCounts: map[string]int32{"a": 0}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := proto.Clone(tc.in)
			got := Hide(tc.in, tc.k)
			if !proto.Equal(before, tc.in) {
				t.Fatal("Hide changed its input")
			}
			if got.GetTotal() != tc.total || got.GetSuppressedSites() != tc.suppressedSites || got.GetMinCount() != tc.k {
				t.Fatalf("total %d, suppressed sites %d, min count %d; want %d, %d, %d", got.GetTotal(), got.GetSuppressedSites(), got.GetMinCount(), tc.total, tc.suppressedSites, tc.k)
			}
			if (got.Samples == nil) != (tc.samples == nil) || (tc.samples != nil && got.GetSamples() != *tc.samples) {
				t.Fatalf("samples %v, want %v", got.Samples, tc.samples)
			}
			for _, sc := range got.GetSites() {
				if sc.GetCount() != tc.siteCounts[sc.GetSiteId()] {
					t.Errorf("site %s: count %d, want %d", sc.GetSiteId(), sc.GetCount(), tc.siteCounts[sc.GetSiteId()])
				}
			}
			hidden, kept := 0, 0
			for _, r := range got.GetReplies() {
				if r.GetSuppressed() {
					hidden++
					if r.Count != nil || r.GetBody() != "" || r.GetDonor() != nil || r.GetSample() != nil {
						t.Errorf("a suppressed reply keeps a part: %v", r)
					}
				}
				if r.GetBody() != "" {
					kept++
				}
				for _, e := range []*brokerv1.ReplyEntity{r.GetDonor(), r.GetSample()} {
					if e.GetSuppressed() && e.GetCount() != 0 {
						t.Errorf("a suppressed entity keeps its count: %v", e)
					}
					for _, st := range e.GetStratifications() {
						for _, row := range st.GetStrata() {
							if row.GetSuppressed() && row.GetCount() != 0 {
								t.Errorf("a suppressed stratum keeps its count: %v", row)
							}
						}
					}
				}
			}
			if hidden != tc.suppressedReplies || kept != tc.bodiesKept {
				t.Errorf("%d replies suppressed, %d bodies kept; want %d, %d", hidden, kept, tc.suppressedReplies, tc.bodiesKept)
			}
		})
	}
}

// TestMarkKeepsCounts: operators see every count, with what the rule hides
// marked.
func TestMarkKeepsCounts(t *testing.T) {
	got := Mark(sum(plainReply("a", 3), docReply("b", 12, 2, 10, 2)), 5)
	if got.GetTotal() != 15 || got.GetSamples() != 2 || got.GetSuppressedSites() != 1 {
		t.Fatalf("total %d samples %d suppressed sites %d, want the exact 15, 2 and 1", got.GetTotal(), got.GetSamples(), got.GetSuppressedSites())
	}
	a, b := got.GetReplies()[0], got.GetReplies()[1]
	if !a.GetSuppressed() || a.GetCount() != 3 || a.GetBody() != "3" {
		t.Errorf("operator's reply a = %v, want count 3 marked", a)
	}
	if b.GetSuppressed() || !b.GetSample().GetSuppressed() || b.GetSample().GetCount() != 2 ||
		!b.GetDonor().GetStratifications()[0].GetStrata()[1].GetSuppressed() {
		t.Errorf("operator's reply b = %v, want the sample and the second stratum marked, kept", b)
	}
	if got.GetSites()[0].GetSuppressed() != 1 || got.GetSites()[0].GetCount() != 3 {
		t.Errorf("site a = %v", got.GetSites()[0])
	}
}

// TestHiddenCountsCannotBeRecovered: for random replies, what a researcher
// gets is the same whatever value below k any one hidden count has: a
// hidden count cannot be worked out from it (sums, bodies, sites).
func TestHiddenCountsCannotBeRecovered(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const k = 5
	for i := 0; i < 2000; i++ {
		var replies []*brokerv1.Reply
		for j := 0; j < 1+rng.IntN(6); j++ {
			site := fmt.Sprint("s", rng.IntN(4))
			switch rng.IntN(3) {
			case 0:
				replies = append(replies, plainReply(site, rng.Int32N(15)))
			case 1:
				replies = append(replies, docReply(site, rng.Int32N(15), rng.Int32N(15), rng.Int32N(15), rng.Int32N(15)))
			default:
				replies = append(replies, &brokerv1.Reply{SiteId: site, BankEmail: site + "@x", Body: "?", Unreadable: true})
			}
		}
		base := sum(replies...)
		want := researcherBytes(t, Hide(base, k))
		// Every place a count below k sits: change it to every other value
		// below k, the sums following as the broker would compute them.
		for ri, r := range base.GetReplies() {
			for _, set := range hiddenSetters(r, k) {
				for v := int32(0); v < k; v++ {
					changed := proto.Clone(base).(*brokerv1.ListRepliesResponse)
					cr := changed.GetReplies()[ri]
					set(cr, v)
					changed = sum(changed.GetReplies()...)
					if got := researcherBytes(t, Hide(changed, k)); got != want {
						t.Fatalf("round %d: reply %d with a hidden count set to %d changes what the researcher gets:\n%s\n%s", i, ri, v, want, got)
					}
				}
			}
		}
	}
}

// hiddenSetters are setters for each count of r below k.
func hiddenSetters(r *brokerv1.Reply, k int32) []func(*brokerv1.Reply, int32) {
	var out []func(*brokerv1.Reply, int32)
	if r.Count == nil {
		return nil
	}
	if r.GetCount() < k {
		out = append(out, func(c *brokerv1.Reply, v int32) {
			c.Count = proto.Int32(v)
			c.Body = fmt.Sprint(v)
			if c.GetDonor() != nil {
				c.Donor.Count = v
			}
		})
	}
	if r.GetSample() != nil && r.GetSample().GetCount() < k {
		out = append(out, func(c *brokerv1.Reply, v int32) { c.Sample.Count = v })
	}
	for si, st := range r.GetDonor().GetStratifications() {
		for ri, row := range st.GetStrata() {
			if row.GetCount() < k {
				out = append(out, func(c *brokerv1.Reply, v int32) {
					c.Donor.Stratifications[si].Strata[ri].Count = v
				})
			}
		}
	}
	return out
}

func researcherBytes(t *testing.T, res *brokerv1.ListRepliesResponse) string {
	b, err := protojson.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
