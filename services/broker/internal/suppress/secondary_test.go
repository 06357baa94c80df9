package suppress_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	brokerv1 "fris.dev/proto/broker/v1"
	"fris.dev/services/broker/internal/strata"
	"fris.dev/services/broker/internal/suppress"
)

const k = 5

// summedEntity is an entity whose 1 or 2 stratifications each split its
// count into 1 to 4 strata that sum to it, as a site's Reply usually does.
func summedEntity(rng *rand.Rand, label string) *brokerv1.ReplyEntity {
	n := rng.Int32N(25)
	e := &brokerv1.ReplyEntity{Label: label, Count: n}
	for i := 0; i <= rng.IntN(2); i++ {
		st := &brokerv1.Stratification{Title: fmt.Sprint("t", i)}
		left, parts := n, 1+rng.IntN(4)
		for j := 0; j < parts; j++ {
			c := left
			if j < parts-1 {
				c = rng.Int32N(left + 1)
			}
			left -= c
			st.Strata = append(st.Strata, &brokerv1.Stratum{Label: fmt.Sprint("l", j), Count: c})
		}
		e.Stratifications = append(e.Stratifications, st)
	}
	return e
}

// exact is an inquiry's replies with the site counts and totals the broker
// sums from them.
func exact(replies []*brokerv1.Reply) *brokerv1.ListRepliesResponse {
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
		sc.Count += r.GetCount()
		res.Total += r.GetCount()
		sc.Samples = proto.Int32(sc.GetSamples() + r.GetSample().GetCount())
		res.Samples = proto.Int32(res.GetSamples() + r.GetSample().GetCount())
	}
	return res
}

func randomReplies(rng *rand.Rand) []*brokerv1.Reply {
	var replies []*brokerv1.Reply
	for j := 0; j < 1+rng.IntN(5); j++ {
		site := fmt.Sprint("s", rng.IntN(3))
		d := summedEntity(rng, "donors")
		replies = append(replies, &brokerv1.Reply{SiteId: site, BankEmail: fmt.Sprint(site, j, "@bank"), Count: proto.Int32(d.Count),
			Body: "{...}", Donor: d, Sample: summedEntity(rng, "samples")})
	}
	return replies
}

// researcher is what a researcher gets of res, as the service builds it.
func researcher(t *testing.T, res *brokerv1.ListRepliesResponse) string {
	t.Helper()
	b, err := protojson.Marshal(strata.Sum(suppress.Hide(res, k)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestHiddenStrataCannotBeRecovered: for random replies whose strata sum
// to their entity's count, moving any amount between a stratum below k
// (set to every other value below k) and another stratum of its
// stratification, the entity's count unchanged, leaves what a researcher
// gets (replies, site and total sums, strata sums) byte for byte the same:
// no subtraction within a reply, a site or over the sites gives a hidden
// stratum.
func TestHiddenStrataCannotBeRecovered(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	moves := 0
	for round := 0; round < 300; round++ {
		base := randomReplies(rng)
		want := researcher(t, exact(base))
		for ri, r := range base {
			for ei, e := range []*brokerv1.ReplyEntity{r.GetDonor(), r.GetSample()} {
				for si, st := range e.GetStratifications() {
					for hi, h := range st.GetStrata() {
						if h.GetCount() >= k {
							continue
						}
						for oi, o := range st.GetStrata() {
							for v := int32(0); v < k; v++ {
								delta := v - h.GetCount()
								if oi == hi || delta == 0 || o.GetCount()-delta < 0 {
									continue
								}
								changed := make([]*brokerv1.Reply, len(base))
								for i := range base {
									changed[i] = proto.Clone(base[i]).(*brokerv1.Reply)
								}
								ce := []*brokerv1.ReplyEntity{changed[ri].GetDonor(), changed[ri].GetSample()}[ei]
								ce.Stratifications[si].Strata[hi].Count = v
								ce.Stratifications[si].Strata[oi].Count -= delta
								moves++
								if got := researcher(t, exact(changed)); got != want {
									t.Fatalf("round %d: reply %d, entity %d, stratification %d: stratum %d from %d to %d (stratum %d by %d) changes what the researcher gets:\n%s\n%s",
										round, ri, ei, si, hi, h.GetCount(), v, oi, -delta, want, got)
								}
							}
						}
					}
				}
			}
		}
	}
	if moves < 1000 {
		t.Fatalf("only %d moves tried", moves)
	}
}

// TestNoStratumBySubtraction: in what a researcher gets, no hidden stratum
// is its shown entity's count minus the shown strata of its
// stratification while the only one hidden there (the subtraction that
// secondary suppression closes: donors 12, männlich 9 → weiblich 3).
func TestNoStratumBySubtraction(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	checked := 0
	for round := 0; round < 3000; round++ {
		base := exact(randomReplies(rng))
		got := suppress.Hide(base, k)
		for ri, r := range got.GetReplies() {
			if r.GetSuppressed() {
				continue
			}
			truth := []*brokerv1.ReplyEntity{base.GetReplies()[ri].GetDonor(), base.GetReplies()[ri].GetSample()}
			for ei, e := range []*brokerv1.ReplyEntity{r.GetDonor(), r.GetSample()} {
				if e.GetSuppressed() {
					continue
				}
				for si, st := range e.GetStratifications() {
					rest, hidden := e.GetCount(), 0
					for _, s := range st.GetStrata() {
						if s.GetSuppressed() {
							hidden++
						} else {
							rest -= s.GetCount()
						}
					}
					for hi, s := range st.GetStrata() {
						v := truth[ei].GetStratifications()[si].GetStrata()[hi].GetCount()
						if s.GetSuppressed() && hidden == 1 && v == rest {
							t.Fatalf("round %d: reply %d's stratum %q (%d) is the entity's %d minus the strata shown: %v", round, ri, s.GetLabel(), v, e.GetCount(), r)
						}
						if !s.GetSuppressed() && v < k {
							t.Fatalf("round %d: stratum %d below %d shown: %v", round, v, k, r)
						}
					}
					checked++
				}
			}
		}
	}
	if checked < 1000 {
		t.Fatalf("only %d stratifications checked", checked)
	}
}

// TestSecondarySuppression: the example, donors 12 with männlich
// 9 and weiblich 3, hides the stratification whole and keeps the donors;
// another stratification of the same donors, all at least k, stays; a
// hidden sample count hides its strata too. Operators see the values,
// every hidden one marked.
func TestSecondarySuppression(t *testing.T) {
	r := &brokerv1.Reply{SiteId: "a", Count: proto.Int32(12), Body: "{...}",
		Donor: &brokerv1.ReplyEntity{Count: 12, Stratifications: []*brokerv1.Stratification{
			{Title: "Geschlecht", Strata: []*brokerv1.Stratum{{Label: "männlich", Count: 9}, {Label: "weiblich", Count: 3}}},
			{Title: "Alter", Strata: []*brokerv1.Stratum{{Label: "<40", Count: 5}, {Label: ">=40", Count: 7}}},
		}},
		Sample: &brokerv1.ReplyEntity{Count: 4, Stratifications: []*brokerv1.Stratification{
			{Title: "Probentyp", Strata: []*brokerv1.Stratum{{Label: "Blut", Count: 4}}},
		}}}
	res := exact([]*brokerv1.Reply{r})
	got := suppress.Hide(res, k).GetReplies()[0]
	want := `donor 12: Geschlecht männlich=0(hidden) weiblich=0(hidden) Alter <40=5 >=40=7 | sample 0(hidden): Probentyp Blut=0(hidden)`
	if s := describe(got); s != want {
		t.Errorf("researcher:\n%s\nwant:\n%s", s, want)
	}
	marked := suppress.Mark(res, k).GetReplies()[0]
	want = `donor 12: Geschlecht männlich=9(hidden) weiblich=3(hidden) Alter <40=5 >=40=7 | sample 4(hidden): Probentyp Blut=4(hidden)`
	if s := describe(marked); s != want {
		t.Errorf("operator:\n%s\nwant:\n%s", s, want)
	}
}

func describe(r *brokerv1.Reply) string {
	out := ""
	for i, e := range []*brokerv1.ReplyEntity{r.GetDonor(), r.GetSample()} {
		if i > 0 {
			out += " | "
		}
		out += fmt.Sprintf("%s %d%s:", []string{"donor", "sample"}[i], e.GetCount(), flag(e.GetSuppressed()))
		for _, st := range e.GetStratifications() {
			out += " " + st.GetTitle()
			for _, s := range st.GetStrata() {
				out += fmt.Sprintf(" %s=%d%s", s.GetLabel(), s.GetCount(), flag(s.GetSuppressed()))
			}
		}
	}
	return out
}

func flag(b bool) string {
	if b {
		return "(hidden)"
	}
	return ""
}
