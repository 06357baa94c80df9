package explorer

import (
	"sort"
	"strconv"
	"strings"

	brokerv1 "fris.dev/proto/broker/v1"
)

// Stratified results: the Reply documents' breakdowns (share-dto's
// stratifications) gathered across sites, a table and a chart for each
// entity and title, e.g. donors by "Geschlecht". A stratum count the
// small-count rule hid is "< k" and adds nothing to a total; a total with
// hidden counts says how many sites had one, as the page's total does.

// strataTable is one stratification across sites: a row a stratum, a
// column a site that sent it, and the total.
type strataTable struct {
	// ID makes the chart's and the table's ids unique on the page.
	ID string
	// Entity is "donor" or "sample" (the CSV's words); Heading is the
	// entity and the title in the page's language.
	Entity, Title, Heading string
	Sites                  []string
	Rows                   []strataRow
	// Alt is the chart's text alternative: every number it draws.
	Alt   string
	Chart strataChart
}

type strataRow struct {
	Label string
	// Cells are the sites' counts in the order of Sites.
	Cells []strataCell
	Total string
}

type strataCell struct {
	// Text is the count as shown ("< k" when hidden, "—" when the site
	// sent no such stratum).
	Text   string
	Sent   bool
	Shown  int32
	Hidden int
}

// strataChart is the geometry of a stratification's bar chart: a group a
// stratum, a bar a site.
type strataChart struct {
	Height, Width, LabelX, BarX int
	// Bars are the drawn rows in order, each with its stratum and site.
	Bars []strataBar
}

type strataBar struct {
	Stratum, Site, Text string
	// Head is set on a stratum's first bar: the stratum's label is drawn
	// above it at HeadY.
	Head                        bool
	HeadY, BarY, TextY, W, NumX int
}

const (
	strataRowH  = 22
	strataHeadH = 20
	strataLabel = 150
	strataBarW  = 300
)

// strataOf gathers the readable replies' stratifications; k is the
// small-count threshold (0: off).
func strataOf(v *view, replies []*brokerv1.Reply, k int32) []strataTable {
	type key struct{ entity, title string }
	type cell struct {
		shown  int32
		hidden int
	}
	type acc struct {
		key    key
		sites  map[string]bool
		labels []string
		counts map[string]map[string]*cell // stratum -> site -> cell
	}
	var order []*acc
	byKey := map[key]*acc{}
	sorted := append([]*brokerv1.Reply(nil), replies...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].GetSiteId() < sorted[j].GetSiteId() })
	for _, entity := range []string{"donor", "sample"} {
		for _, rp := range sorted {
			if rp.GetUnreadable() || rp.GetSuppressed() {
				continue
			}
			e := rp.GetDonor()
			if entity == "sample" {
				e = rp.GetSample()
			}
			for _, st := range e.GetStratifications() {
				kk := key{entity, st.GetTitle()}
				a := byKey[kk]
				if a == nil {
					a = &acc{key: kk, sites: map[string]bool{}, counts: map[string]map[string]*cell{}}
					byKey[kk] = a
					order = append(order, a)
				}
				a.sites[rp.GetSiteId()] = true
				for _, s := range st.GetStrata() {
					bySite := a.counts[s.GetLabel()]
					if bySite == nil {
						bySite = map[string]*cell{}
						a.counts[s.GetLabel()] = bySite
						a.labels = append(a.labels, s.GetLabel())
					}
					c := bySite[rp.GetSiteId()]
					if c == nil {
						c = &cell{}
						bySite[rp.GetSiteId()] = c
					}
					if s.GetSuppressed() && k > 0 {
						c.hidden++
					} else {
						c.shown = add32(c.shown, s.GetCount())
					}
				}
			}
		}
	}
	tables := make([]strataTable, 0, len(order))
	for i, a := range order {
		t := strataTable{ID: "strata-" + strconv.Itoa(i), Entity: a.key.entity, Title: a.key.title}
		t.Heading = v.T("res.strata."+a.key.entity, a.key.title)
		for s := range a.sites {
			t.Sites = append(t.Sites, s)
		}
		sort.Strings(t.Sites)
		for _, label := range a.labels {
			row := strataRow{Label: label}
			var total int32
			hiddenSites := 0
			for _, site := range t.Sites {
				c := a.counts[label][site]
				if c == nil {
					row.Cells = append(row.Cells, strataCell{Text: "—"})
					continue
				}
				sc := strataCell{Sent: true, Shown: c.shown, Hidden: c.hidden, Text: hiddenText(v, c.shown, c.hidden, k)}
				total = add32(total, c.shown)
				if c.hidden > 0 {
					hiddenSites++
				}
				row.Cells = append(row.Cells, sc)
			}
			row.Total = strconv.Itoa(int(total))
			switch {
			case hiddenSites == 1:
				row.Total = v.T("res.total.below.one", row.Total, k)
			case hiddenSites > 1:
				row.Total = v.T("res.total.below", row.Total, hiddenSites, k)
			}
			t.Rows = append(t.Rows, row)
		}
		t.layout(v)
		tables = append(tables, t)
	}
	return tables
}

// hiddenText is a count made of shown counts and hidden ones: the shown
// sum, "< k" when all were hidden, "n + < k" when some were.
func hiddenText(v *view, shown int32, hidden int, k int32) string {
	switch {
	case hidden == 0:
		return strconv.Itoa(int(shown))
	case shown == 0:
		return belowText(v, k)
	default:
		return v.T("res.count.plusbelow", shown, k)
	}
}

// layout places the chart's bars, the longest the largest count shown,
// and writes its text alternative.
func (t *strataTable) layout(v *view) {
	var top int32
	for _, row := range t.Rows {
		for _, c := range row.Cells {
			top = max(top, c.Shown)
		}
	}
	y := 0
	var alt []string
	for _, row := range t.Rows {
		var parts []string
		head := true
		for i, c := range row.Cells {
			if !c.Sent {
				continue
			}
			b := strataBar{Stratum: row.Label, Site: t.Sites[i], Text: c.Text, Head: head}
			if head {
				b.HeadY = y + strataHeadH - 5
				y += strataHeadH
				head = false
			}
			b.BarY = y + 3
			b.TextY = y + strataRowH/2 + 5
			if top > 0 {
				b.W = int(int64(c.Shown) * strataBarW / int64(top))
			}
			if c.Shown > 0 && b.W < 2 {
				b.W = 2
			}
			b.NumX = strataLabel + b.W + 8
			y += strataRowH
			t.Chart.Bars = append(t.Chart.Bars, b)
			parts = append(parts, t.Sites[i]+" "+c.Text)
		}
		if len(parts) > 0 {
			alt = append(alt, row.Label+": "+strings.Join(parts, ", "))
		}
	}
	t.Chart.Height, t.Chart.Width = y+4, strataLabel+strataBarW+110
	t.Chart.LabelX, t.Chart.BarX = strataLabel-8, strataLabel
	t.Alt = v.T("res.strata.alt", t.Heading, strings.Join(alt, "; "))
}

// add32 sums counts, stopping at the largest int32 rather than wrapping.
func add32(a, b int32) int32 {
	if s := int64(a) + int64(b); s <= 1<<31-1 {
		return int32(s)
	}
	return 1<<31 - 1
}
