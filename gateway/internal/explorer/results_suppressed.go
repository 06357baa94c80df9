package explorer

import (
	"strconv"

	brokerv1 "fris.dev/proto/broker/v1"
)

// The broker's small-count rule (flag -min-count) sends a count below k
// without its value, marked suppressed; the sums it sends are of the
// counts shown. The page, the results stream and the CSV say "< k" for
// such a count and never compute anything from what was hidden.

// belowText is a hidden count: "< k".
func belowText(v *view, k int32) string { return v.T("res.below", k) }

// siteCountText is a site's count as the page and the CSV show it: "< k"
// when every count the site sent is hidden, the shown sum with "+ < k"
// when some are, else as countText.
func siteCountText(v *view, sc *brokerv1.SiteCount, k int32) string {
	hidden := sc.GetSuppressed()
	if hidden == 0 || k <= 0 {
		return countText(v, sc.GetCount(), sc.GetReplies(), sc.GetUnreadable())
	}
	shown := sc.GetReplies() - sc.GetUnreadable() - hidden
	text := belowText(v, k)
	if shown > 0 {
		text = v.T("res.count.plusbelow", sc.GetCount(), k)
	}
	if sc.GetUnreadable() > 0 {
		text = v.T("res.count.partialtext", text, sc.GetUnreadable())
	}
	return text
}

// totalText is the total as the page shows it: the sum of the counts
// shown, and how many sites sent a count below k. Never the exact sum:
// with the counts shown it would give the hidden one away.
func totalText(v *view, res *brokerv1.ListRepliesResponse) string {
	text := countText(v, res.GetTotal(), int32(len(res.GetReplies())), res.GetUnreadable())
	switch n := res.GetSuppressedSites(); {
	case n == 0 || res.GetMinCount() <= 0:
	case n == 1:
		text = v.T("res.total.below.one", text, res.GetMinCount())
	default:
		text = v.T("res.total.below", text, n, res.GetMinCount())
	}
	return text
}

// samplesText sets the samples as shown: a sample count the small-count
// rule hid is "< k", and the total says how many sites had one.
func (r *results) samplesText(rows map[string]*siteRow, res *brokerv1.ListRepliesResponse) {
	hidden := map[string]int{}
	for _, rp := range res.GetReplies() {
		if rp.GetSample().GetSuppressed() {
			hidden[rp.GetSiteId()]++
		}
	}
	k := res.GetMinCount()
	for site, row := range rows {
		switch {
		case row.Samples == nil:
		case hidden[site] == 0 || k <= 0:
			row.SamplesText = strconv.Itoa(int(*row.Samples))
		case *row.Samples == 0:
			row.SamplesText = belowText(r.V, k)
		default:
			row.SamplesText = r.V.T("res.count.plusbelow", *row.Samples, k)
		}
	}
	if r.Samples == nil {
		return
	}
	r.SamplesText = strconv.Itoa(int(*r.Samples))
	switch n := len(hidden); {
	case n == 0 || k <= 0:
	case n == 1:
		r.SamplesText = r.V.T("res.total.below.one", r.SamplesText, k)
	default:
		r.SamplesText = r.V.T("res.total.below", r.SamplesText, n, k)
	}
}
