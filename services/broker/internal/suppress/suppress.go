// Package suppress applies the broker's small-count rule to an inquiry's
// replies: a count below the threshold k (flag -min-count) reaches a
// researcher only as "below k". What a researcher gets is built from the
// counts shown alone, so no hidden count can be worked out from one
// answer: a site's count and the totals are the sums of the counts shown,
// with how many sites had one hidden, never the exact sums (exact total
// minus the counts shown would be the hidden count), and a stratification
// with a hidden stratum is hidden whole (secondary suppression: entity
// count minus the strata shown would be the hidden one), as is one whose
// strata leave a remainder below k unlisted (the remainder is a stratum
// too: donors 12 and only männlich 9 give the other 3). Operators get
// the exact replies with the hidden parts marked.
package suppress

import (
	"math"

	"google.golang.org/protobuf/proto"

	brokerv1 "fris.dev/proto/broker/v1"
)

// Mark returns res (exact, as the broker sums it) with every count below k
// marked suppressed and nothing cleared: the operators' view of what the
// rule hides. k <= 0 leaves res as it is.
func Mark(res *brokerv1.ListRepliesResponse, k int32) *brokerv1.ListRepliesResponse {
	if k <= 0 {
		return res
	}
	out := proto.Clone(res).(*brokerv1.ListRepliesResponse)
	out.MinCount = k
	hidden := map[string]int32{}
	for _, r := range out.GetReplies() {
		if mark(r, k) {
			hidden[r.GetSiteId()]++
		}
	}
	for _, sc := range out.GetSites() {
		sc.Suppressed = hidden[sc.GetSiteId()]
		if sc.Suppressed > 0 {
			out.SuppressedSites++
		}
	}
	return out
}

// Hide returns what a researcher may see of res: Mark's, with the hidden
// counts cleared, and the sums made of the counts shown. k <= 0 leaves
// res as it is.
func Hide(res *brokerv1.ListRepliesResponse, k int32) *brokerv1.ListRepliesResponse {
	if k <= 0 {
		return res
	}
	out := Mark(res, k)
	type sums struct {
		count, samples int32
		hasSamples     bool
	}
	bySite := map[string]*sums{}
	var total sums
	for _, r := range out.GetReplies() {
		s := bySite[r.GetSiteId()]
		if s == nil {
			s = &sums{}
			bySite[r.GetSiteId()] = s
		}
		clear(r)
		if r.Count == nil {
			continue
		}
		s.count, total.count = add(s.count, r.GetCount()), add(total.count, r.GetCount())
		// A hidden sample count still makes the samples present (as 0 plus
		// what is shown), so "< k" has a column to stand in.
		if e := r.GetSample(); e != nil {
			s.samples, s.hasSamples = add(s.samples, e.GetCount()), true
			total.samples, total.hasSamples = add(total.samples, e.GetCount()), true
		}
	}
	for _, sc := range out.GetSites() {
		s := bySite[sc.GetSiteId()]
		if s == nil {
			s = &sums{}
		}
		sc.Count, sc.Samples = s.count, nil
		if s.hasSamples {
			sc.Samples = proto.Int32(s.samples)
		}
	}
	out.Total, out.Samples = total.count, nil
	if total.hasSamples {
		out.Samples = proto.Int32(total.samples)
	}
	return out
}

// mark flags the parts of r below k and reports whether its count is.
func mark(r *brokerv1.Reply, k int32) bool {
	if r.Count == nil {
		return false
	}
	for _, e := range []*brokerv1.ReplyEntity{r.GetDonor(), r.GetSample()} {
		if e == nil {
			continue
		}
		e.Suppressed = e.GetCount() < k
		for _, st := range e.GetStratifications() {
			// Secondary suppression: strata usually sum to their entity's
			// count, so with one hidden and the entity and the others
			// shown, subtraction gives it. A stratification with a
			// stratum below k, or of a hidden entity, is hidden whole.
			// So is one whose strata fall short of the entity's count
			// by 1 to k-1: the remainder is a stratum the site did not
			// list (donors 12, only männlich 9: the other 3), and the
			// entity minus the strata shown would give it.
			hide := e.Suppressed
			var listed int64
			for _, row := range st.GetStrata() {
				hide = hide || row.GetCount() < k
				listed += int64(row.GetCount())
			}
			if rest := int64(e.GetCount()) - listed; rest > 0 && rest < int64(k) {
				hide = true
			}
			for _, row := range st.GetStrata() {
				row.Suppressed = hide
			}
		}
	}
	r.Suppressed = r.GetCount() < k
	return r.Suppressed
}

// clear removes from a marked reply what the rule hides. A suppressed
// reply keeps only who sent it and when. The body goes whenever anything
// is hidden, as it holds the hidden numbers; an unreadable body goes
// always, since the broker cannot tell whether it holds a small count.
func clear(r *brokerv1.Reply) {
	switch {
	case r.GetUnreadable():
		r.Body = ""
		return
	case r.GetSuppressed():
		r.Count, r.Body, r.Donor, r.Sample = nil, "", nil, nil
		return
	}
	hid := false
	for _, e := range []*brokerv1.ReplyEntity{r.GetDonor(), r.GetSample()} {
		if e == nil {
			continue
		}
		if e.GetSuppressed() {
			e.Count, hid = 0, true
		}
		for _, st := range e.GetStratifications() {
			for _, row := range st.GetStrata() {
				if row.GetSuppressed() {
					row.Count, hid = 0, true
				}
			}
		}
	}
	if hid {
		r.Body = ""
	}
}

// add sums counts, stopping at the largest int32 rather than wrapping.
func add(a, b int32) int32 {
	if s := int64(a) + int64(b); s <= math.MaxInt32 {
		return int32(s)
	}
	return math.MaxInt32
}
