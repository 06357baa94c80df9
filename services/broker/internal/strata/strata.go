// Package strata sums the stratifications of an inquiry's Reply documents
// per site and over the sites, so an API client need not add them up from
// the replies. It sums what the replies carry: after the small-count rule
// (package suppress) a hidden stratum's count is 0 and it adds nothing but
// to suppressed, so no sum gives a hidden count away. As a reply's
// stratification with a stratum hidden is hidden whole, a site's or the
// total's donors minus its shown strata is the sum of whole hidden
// stratifications, never one stratum.
package strata

import (
	"math"

	brokerv1 "fris.dev/proto/broker/v1"
)

type key struct{ entity, title, label string }

// table is StratumCounts in the order they were first met.
type table struct {
	order []key
	rows  map[key]*brokerv1.StratumCount
}

func (t *table) row(k key) *brokerv1.StratumCount {
	if t.rows == nil {
		t.rows = map[key]*brokerv1.StratumCount{}
	}
	r := t.rows[k]
	if r == nil {
		r = &brokerv1.StratumCount{Entity: k.entity, Stratification: k.title, Stratum: k.label}
		t.rows[k] = r
		t.order = append(t.order, k)
	}
	return r
}

func (t *table) list() []*brokerv1.StratumCount {
	out := make([]*brokerv1.StratumCount, 0, len(t.order))
	for _, k := range t.order {
		out = append(out, t.rows[k])
	}
	return out
}

// Sum sets res's sites' and res's strata from its replies (in place) and
// returns res. Donor strata come before sample strata; within each, the
// order is the replies' (by site as res.Sites is).
func Sum(res *brokerv1.ListRepliesResponse) *brokerv1.ListRepliesResponse {
	bySite := map[string]*table{}
	var total table
	hidden := map[key]map[string]bool{}
	replies := map[string][]*brokerv1.Reply{}
	for _, rp := range res.GetReplies() {
		if !rp.GetUnreadable() && !rp.GetSuppressed() {
			replies[rp.GetSiteId()] = append(replies[rp.GetSiteId()], rp)
		}
	}
	for _, entity := range []string{"donor", "sample"} {
		for _, sc := range res.GetSites() {
			for _, rp := range replies[sc.GetSiteId()] {
				e := rp.GetDonor()
				if entity == "sample" {
					e = rp.GetSample()
				}
				for _, st := range e.GetStratifications() {
					for _, s := range st.GetStrata() {
						k := key{entity, st.GetTitle(), s.GetLabel()}
						t := bySite[sc.GetSiteId()]
						if t == nil {
							t = &table{}
							bySite[sc.GetSiteId()] = t
						}
						site, all := t.row(k), total.row(k)
						site.Count, all.Count = add(site.Count, s.GetCount()), add(all.Count, s.GetCount())
						if s.GetSuppressed() {
							site.Suppressed++
							if hidden[k] == nil {
								hidden[k] = map[string]bool{}
							}
							hidden[k][sc.GetSiteId()] = true
						}
					}
				}
			}
		}
	}
	for _, sc := range res.GetSites() {
		if t := bySite[sc.GetSiteId()]; t != nil {
			sc.Strata = t.list()
		}
	}
	res.Strata = total.list()
	for k, sites := range hidden {
		total.rows[k].Suppressed = int32(len(sites))
	}
	return res
}

// add sums counts, stopping at the largest int32 rather than wrapping.
func add(a, b int32) int32 {
	if s := int64(a) + int64(b); s <= math.MaxInt32 {
		return int32(s)
	}
	return math.MaxInt32
}
