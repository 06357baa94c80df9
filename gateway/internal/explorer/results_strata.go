package explorer

import (
	"sort"
	"strconv"
	"strings"

	brokerv1 "fris.dev/proto/broker/v1"
)

// Stratified results: the Reply documents' breakdowns (share-dto's
// stratifications) as the broker sums them per site and over the sites,
// a table and a chart for each entity and title, e.g. donors by
// "Geschlecht". A stratum count the small-count rule hid is "< k" and
// adds nothing to a total (the broker sums the counts shown); a total with
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
	Text  string
	Sent  bool
	Shown int32
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

// strataOf lays out the broker's strata sums (ListRepliesResponse.strata
// and each site's): a table an entity and title, its rows in the order
// the broker sent them; k is the small-count threshold (0: off).
func strataOf(v *view, res *brokerv1.ListRepliesResponse, k int32) []strataTable {
	type key struct{ entity, title string }
	type acc struct {
		key    key
		labels []string
		totals map[string]*brokerv1.StratumCount
		cells  map[string]map[string]*brokerv1.StratumCount // stratum -> site
		sites  map[string]bool
	}
	var order []*acc
	byKey := map[key]*acc{}
	get := func(r *brokerv1.StratumCount) *acc {
		kk := key{r.GetEntity(), r.GetStratification()}
		a := byKey[kk]
		if a == nil {
			a = &acc{key: kk, totals: map[string]*brokerv1.StratumCount{}, cells: map[string]map[string]*brokerv1.StratumCount{}, sites: map[string]bool{}}
			byKey[kk] = a
			order = append(order, a)
		}
		if a.totals[r.GetStratum()] == nil && a.cells[r.GetStratum()] == nil {
			a.labels = append(a.labels, r.GetStratum())
			a.cells[r.GetStratum()] = map[string]*brokerv1.StratumCount{}
		}
		return a
	}
	for _, r := range res.GetStrata() {
		get(r).totals[r.GetStratum()] = r
	}
	for _, sc := range res.GetSites() {
		for _, r := range sc.GetStrata() {
			a := get(r)
			a.cells[r.GetStratum()][sc.GetSiteId()] = r
			a.sites[sc.GetSiteId()] = true
		}
	}
	tables := make([]strataTable, 0, len(order))
	for i, a := range order {
		t := strataTable{ID: "strata-" + strconv.Itoa(i), Entity: a.key.entity, Title: a.key.title}
		t.Heading = v.T("res.strata."+entityWord(a.key.entity), a.key.title)
		for s := range a.sites {
			t.Sites = append(t.Sites, s)
		}
		sort.Strings(t.Sites)
		for _, label := range a.labels {
			row := strataRow{Label: label}
			for _, site := range t.Sites {
				c := a.cells[label][site]
				if c == nil {
					row.Cells = append(row.Cells, strataCell{Text: "—"})
					continue
				}
				row.Cells = append(row.Cells, strataCell{Sent: true, Shown: c.GetCount(), Text: hiddenText(v, c.GetCount(), int(c.GetSuppressed()), k)})
			}
			tot := a.totals[label]
			row.Total = strconv.Itoa(int(tot.GetCount()))
			switch n := tot.GetSuppressed(); {
			case k <= 0 || n == 0:
			case n == 1:
				row.Total = v.T("res.stratum.total.hidden.one", row.Total)
			default:
				row.Total = v.T("res.stratum.total.hidden", row.Total, n)
			}
			t.Rows = append(t.Rows, row)
		}
		t.layout(v)
		tables = append(tables, t)
	}
	return tables
}

// entityWord keeps a message key to the entities FRIS knows.
func entityWord(e string) string {
	if e == "sample" {
		return "sample"
	}
	return "donor"
}

// hiddenText is a stratum's count made of shown counts and hidden ones:
// the shown sum, "hidden" when all were hidden, "n + hidden" when some
// were. Not "< k": the broker hides a stratification whole when one of
// its strata is below k (else the entity's count minus the others gives
// it), so a hidden stratum may be k or more.
func hiddenText(v *view, shown int32, hidden int, k int32) string {
	switch {
	case hidden == 0 || k <= 0:
		return strconv.Itoa(int(shown))
	case shown == 0:
		return v.T("res.stratum.hidden")
	default:
		return v.T("res.stratum.plushidden", shown)
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
