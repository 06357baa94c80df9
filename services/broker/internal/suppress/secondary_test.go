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
// count into 1 to 4 strata that sum to it, as a site's Reply usually does;
// in about one in three the last stratum is left out, so the strata fall
// short of the count by it (the remainder, a stratum not listed).
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
		if rng.IntN(3) == 0 {
			st.Strata = st.Strata[:len(st.Strata)-1]
		}
		e.Stratifications = append(e.Stratifications, st)
	}
	return e
}

// remainder is what st's strata leave of e's count unlisted.
func remainder(e *brokerv1.ReplyEntity, st *brokerv1.Stratification) int32 {
	rest := e.GetCount()
	for _, s := range st.GetStrata() {
		rest -= s.GetCount()
	}
	return rest
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
// to their entity's count, or fall short of it by a remainder (a stratum
// not listed), moving any amount between a stratum below k (set to every
// other value below k; a remainder of 1 to k-1 to every other value from
// 1 to k-1, as a remainder of 0 is no stratum) and another stratum of its
// stratification or the remainder, the entity's count unchanged, leaves
// what a researcher gets (replies, site and total sums, strata sums) byte
// for byte the same: no subtraction within a reply, a site or over the
// sites gives a hidden stratum.
func TestHiddenStrataCannotBeRecovered(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	moves, restMoves := 0, 0
	for round := 0; round < 300; round++ {
		base := randomReplies(rng)
		want := researcher(t, exact(base))
		for ri, r := range base {
			for ei, e := range []*brokerv1.ReplyEntity{r.GetDonor(), r.GetSample()} {
				for si, st := range e.GetStratifications() {
					// Index len(strata) is the remainder: setting it moves
					// the difference to or from a listed stratum.
					rest, n := remainder(e, st), len(st.GetStrata())
					value := func(i int) int32 {
						if i == n {
							return rest
						}
						return st.GetStrata()[i].GetCount()
					}
					for hi := 0; hi <= n; hi++ {
						lo := int32(0)
						if hi == n {
							lo = 1
						}
						if value(hi) < lo || value(hi) >= k {
							continue
						}
						for oi := 0; oi <= n; oi++ {
							for v := lo; v < k; v++ {
								delta := v - value(hi)
								if oi == hi || delta == 0 || value(oi)-delta < 0 {
									continue
								}
								changed := make([]*brokerv1.Reply, len(base))
								for i := range base {
									changed[i] = proto.Clone(base[i]).(*brokerv1.Reply)
								}
								ce := []*brokerv1.ReplyEntity{changed[ri].GetDonor(), changed[ri].GetSample()}[ei]
								if hi < n {
									ce.Stratifications[si].Strata[hi].Count = v
								}
								if oi < n {
									ce.Stratifications[si].Strata[oi].Count -= delta
								}
								moves++
								if hi == n || oi == n {
									restMoves++
								}
								if got := researcher(t, exact(changed)); got != want {
									t.Fatalf("round %d: reply %d, entity %d, stratification %d: stratum %d from %d to %d (stratum %d by %d; %d is the remainder) changes what the researcher gets:\n%s\n%s",
										round, ri, ei, si, hi, value(hi), v, oi, -delta, n, want, got)
								}
							}
						}
					}
				}
			}
		}
	}
	if moves < 1000 || restMoves < 200 {
		t.Fatalf("only %d moves tried, %d with the remainder", moves, restMoves)
	}
}

// TestNoStratumBySubtraction: in what a researcher gets, no hidden stratum
// is its shown entity's count minus the shown strata of its
// stratification while the only one hidden there (the subtraction that
// secondary suppression closes: donors 12, männlich 9 → weiblich 3), and
// no stratification shown whole leaves 1 to k-1 of its entity unlisted
// (donors 12 and only männlich 9 → 3 others).
func TestNoStratumBySubtraction(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	checked, partial := 0, 0
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
					// No stratum hidden: what the strata shown leave of the
					// entity, the unlisted remainder, is 0, k or more, or
					// below 0 (strata that overlap), never 1 to k-1.
					if hidden == 0 && rest > 0 && rest < k {
						t.Fatalf("round %d: reply %d's stratification %q leaves %d unlisted, shown: %v", round, ri, st.GetTitle(), rest, r)
					}
					if hidden == 0 && rest > 0 {
						partial++
					}
					checked++
				}
			}
		}
	}
	if checked < 1000 || partial < 100 {
		t.Fatalf("only %d stratifications checked, %d shown with a remainder", checked, partial)
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

// TestRemainderIsAStratum: strata that fall short of their entity's count
// leave a remainder, a stratum the site did not list; the entity minus
// the strata shown gives it, so a remainder of 1 to k-1 hides its
// stratification whole, as a listed stratum below k does. A remainder of
// 0 or of k and more, or strata that sum to more than the count (they may
// overlap), hide nothing. Only the stratification with the remainder is
// hidden; the entity's count and its other stratifications stay.
func TestRemainderIsAStratum(t *testing.T) {
	for _, tc := range []struct {
		name   string
		count  int32
		strata []int32
		hidden bool
	}{
		{"the issue's: donors 12, only männlich 9 (3 unlisted)", 12, []int32{9}, true},
		{"remainder 1", 12, []int32{6, 5}, true},
		{"remainder k-1", 12, []int32{8}, true},
		{"remainder exactly k", 12, []int32{7}, false},
		{"remainder above k", 20, []int32{5, 5}, false},
		{"remainder 0", 12, []int32{7, 5}, false},
		{"strata sum to more than the count", 12, []int32{9, 8}, false},
		{"more than the count, a stratum below k", 12, []int32{10, 4}, true},
		{"no strata listed", 12, nil, false},
		{"hidden entity, no remainder", 4, []int32{4}, true},
		{"remainder k-1 of a large count", 1000, []int32{600, 396}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, entity := range []string{"donor", "sample"} {
				partial := &brokerv1.Stratification{Title: "Geschlecht"}
				for i, c := range tc.strata {
					partial.Strata = append(partial.Strata, &brokerv1.Stratum{Label: fmt.Sprint("l", i), Count: c})
				}
				// A second stratification of the same entity that sums to
				// its count, all at least k unless the count is below k.
				whole := &brokerv1.Stratification{Title: "Alter", Strata: []*brokerv1.Stratum{{Label: "all", Count: tc.count}}}
				e := &brokerv1.ReplyEntity{Count: tc.count, Stratifications: []*brokerv1.Stratification{partial, whole}}
				r := &brokerv1.Reply{SiteId: "a", Count: proto.Int32(50), Body: "{...}",
					Donor: &brokerv1.ReplyEntity{Count: 50}, Sample: &brokerv1.ReplyEntity{Count: 50}}
				if entity == "donor" {
					r.Count, r.Donor = proto.Int32(max(tc.count, k)), e
				} else {
					r.Sample = e
				}
				res := exact([]*brokerv1.Reply{r})
				got := suppress.Hide(res, k).GetReplies()[0]
				ge := got.GetDonor()
				if entity == "sample" {
					ge = got.GetSample()
				}
				entityHidden := tc.count < k
				if ge.GetSuppressed() != entityHidden {
					t.Fatalf("%s: entity suppressed %v: %s", entity, ge.GetSuppressed(), describe(got))
				}
				for _, s := range ge.GetStratifications()[0].GetStrata() {
					if s.GetSuppressed() != tc.hidden || (tc.hidden && s.GetCount() != 0) {
						t.Errorf("%s: partial stratification, want hidden %v: %s", entity, tc.hidden, describe(got))
					}
				}
				if s := ge.GetStratifications()[1].GetStrata()[0]; s.GetSuppressed() != entityHidden {
					t.Errorf("%s: the whole stratification, want hidden %v: %s", entity, entityHidden, describe(got))
				}
				if hid := tc.hidden || entityHidden; (got.GetBody() == "") != hid {
					t.Errorf("%s: body %q with something hidden %v", entity, got.GetBody(), hid)
				}
				// The operators see the values, marked alike.
				marked := suppress.Mark(res, k).GetReplies()[0]
				me := marked.GetDonor()
				if entity == "sample" {
					me = marked.GetSample()
				}
				for i, s := range me.GetStratifications()[0].GetStrata() {
					if s.GetSuppressed() != tc.hidden || s.GetCount() != tc.strata[i] {
						t.Errorf("%s: operator's stratum %d: %v", entity, i, s)
					}
				}
			}
		})
	}
}
