package explorer

import (
	"sort"
	"strconv"

	"google.golang.org/protobuf/types/known/timestamppb"

	brokerv1 "fris.dev/proto/broker/v1"
)

// results are an inquiry's replies by site: every target site, answered
// or not, with its count and a bar for the chart. A reply FRIS cannot read
// has no count: it is shown as unreadable, never as 0.
type results struct {
	Total int32
	// TotalText is Total, or "unreadable" when every reply was, with the
	// number of unreadable replies.
	TotalText  string
	Unreadable int32
	// Samples is the sum of the sample counts of Reply documents; nil
	// when none carries one, and then the table has no sample column.
	Samples *int32
	// SamplesText is Samples as shown, with the sites whose sample count
	// the small-count rule hid.
	SamplesText string
	Answered    int
	Targets     int
	Rows        []siteRow
	Pending     []string
	// Strata are the Reply documents' breakdowns across sites; Unread
	// the bodies that are not counts, as sent.
	Strata []strataTable
	Unread []unreadReply
	// Summary is the sentence a screen reader hears on each update.
	Summary string
	Chart   chart
	V       *view
	// MinCount is the broker's small-count threshold (0: off); counts
	// below it come without their value, SuppressedSites is how many sites
	// have one, and Total is the sum of the counts shown.
	MinCount        int32
	SuppressedSites int32
}

type siteRow struct {
	Site       string
	Answered   bool
	Target     bool
	Count      int32
	CountText  string
	Unreadable int32
	// Suppressed is how many of the site's replies have a count below the
	// min count, left out of Count.
	Suppressed int32
	Samples    *int32
	// SamplesText is Samples as shown: "< k" for a hidden sample count.
	SamplesText string
	Replies     int32
	Last        string
	// Y and W place the row's bar in the chart.
	Y, BarY, W, TextY, NumX int
}

type unreadReply struct {
	Site, Body string
}

// maxShownBody bounds an unreadable body on the page; the API has it whole.
const maxShownBody = 300

// chart is the geometry of the bar chart, server-drawn SVG: it needs no
// script, takes the page's colours in dark mode, and screen readers read
// the table it sits beside (the SVG is one labelled image).
type chart struct {
	Height, LabelW, LabelX, BarW, Width int
}

const (
	barRow   = 32
	barLabel = 150
	barMax   = 360
)

// resultsOf is an inquiry's results as the page shows them.
func resultsOf(v *view, in *brokerv1.Inquiry, res *brokerv1.ListRepliesResponse) *results {
	r := &results{Total: res.GetTotal(), V: v, MinCount: res.GetMinCount(), SuppressedSites: res.GetSuppressedSites()}
	rows := siteRowsOf(v, in, res)
	r.Unreadable, r.Samples = res.GetUnreadable(), res.Samples
	r.TotalText = totalText(v, res)
	last := r.readReplies(res.GetReplies())
	r.samplesText(rows, res)
	r.Strata = strataOf(v, res, r.MinCount)
	for _, row := range rows {
		row.Last = minute(last[row.Site])
		r.Rows = append(r.Rows, *row)
	}
	sort.Slice(r.Rows, func(i, j int) bool { return r.Rows[i].Site < r.Rows[j].Site })
	r.layout()
	r.Summary = v.T("res.summary", r.TotalText, r.Answered, r.Targets)
	return r
}

// siteRowsOf is a row for every target site and every site that answered.
func siteRowsOf(v *view, in *brokerv1.Inquiry, res *brokerv1.ListRepliesResponse) map[string]*siteRow {
	rows := map[string]*siteRow{}
	for _, s := range in.GetTargetSites() {
		rows[s] = &siteRow{Site: s, Target: true}
	}
	for _, sc := range res.GetSites() {
		row := rows[sc.GetSiteId()]
		if row == nil {
			row = &siteRow{Site: sc.GetSiteId()}
			rows[sc.GetSiteId()] = row
		}
		row.Answered, row.Count, row.Replies = true, sc.GetCount(), sc.GetReplies()
		row.Unreadable, row.Samples, row.Suppressed = sc.GetUnreadable(), sc.Samples, sc.GetSuppressed()
		row.CountText = siteCountText(v, sc, res.GetMinCount())
	}
	return rows
}

// readReplies takes the unreadable replies by site; it returns each
// site's latest reply's time.
func (r *results) readReplies(replies []*brokerv1.Reply) map[string]*timestamppb.Timestamp {
	last := map[string]*timestamppb.Timestamp{}
	for _, rp := range replies {
		if t := last[rp.GetSiteId()]; t == nil || rp.GetReceivedAt().AsTime().After(t.AsTime()) {
			last[rp.GetSiteId()] = rp.GetReceivedAt()
		}
		if rp.GetUnreadable() {
			body := abbreviate(rp.GetBody(), maxShownBody)
			if body == "" && r.MinCount > 0 {
				// The small-count rule withholds unreadable bodies.
				body = r.V.T("res.unread.withheld")
			}
			r.Unread = append(r.Unread, unreadReply{Site: rp.GetSiteId(), Body: body})
		}
	}
	sort.SliceStable(r.Unread, func(i, j int) bool { return r.Unread[i].Site < r.Unread[j].Site })
	return last
}

// layout counts the sites that were asked and answered, and places each
// row's bar in the chart, the longest the largest count.
func (r *results) layout() {
	var top int32
	for _, row := range r.Rows {
		top = max(top, row.Count)
	}
	for i := range r.Rows {
		row := &r.Rows[i]
		if row.Target {
			r.Targets++
		}
		if row.Answered {
			r.Answered++
		} else {
			r.Pending = append(r.Pending, row.Site)
		}
		row.Y = i * barRow
		row.TextY = row.Y + barRow/2 + 5
		row.BarY = row.Y + 6
		if top > 0 {
			row.W = int(int64(row.Count) * barMax / int64(top))
		}
		if row.Answered && row.Count > 0 && row.W < 2 {
			row.W = 2
		}
		row.NumX = barLabel + row.W + 8
	}
	r.Chart = chart{Height: len(r.Rows)*barRow + 4, LabelW: barLabel, LabelX: barLabel - 8, BarW: barMax, Width: barLabel + barMax + 90}
}

// countText is a summed count as the page shows it: "unreadable" when
// every reply summed was, else the count with how many were.
func countText(v *view, count, replies, unreadable int32) string {
	switch {
	case unreadable == 0:
		return strconv.Itoa(int(count))
	case unreadable >= replies:
		return v.T("res.unreadable")
	default:
		return v.T("res.count.partial", count, unreadable)
	}
}

// abbreviate cuts s to at most n runes, marking the cut.
func abbreviate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}
