package explorer

import (
	"strings"
	"testing"

	"fris.dev/gateway/internal/i18n"
	brokerv1 "fris.dev/proto/broker/v1"
)

func sc(entity, title, stratum string, count, suppressed int32) *brokerv1.StratumCount {
	return &brokerv1.StratumCount{Entity: entity, Stratification: title, Stratum: stratum, Count: count, Suppressed: suppressed}
}

// TestStrataOf: the broker's strata sums become a table an entity and
// title, a row a stratum (in the broker's order) and a column a site that
// sent it; a hidden stratum is "hidden" ("n + hidden" when a site's other
// bank sent one shown: the broker hides a stratification whole, so it may
// be k or more), a total with hidden counts says at how many sites
// (the broker summed only the counts shown); a site without a stratum is
// "—", not 0; the chart's text alternative has every number, a hidden
// count draws no bar.
func TestStrataOf(t *testing.T) {
	res := &brokerv1.ListRepliesResponse{
		Sites: []*brokerv1.SiteCount{
			{SiteId: "berlin", Strata: []*brokerv1.StratumCount{sc("donor", "Geschlecht", "weiblich", 9, 1), sc("donor", "Geschlecht", "divers", 5, 0)}},
			{SiteId: "dresden", Strata: []*brokerv1.StratumCount{sc("donor", "Geschlecht", "männlich", 6, 0), sc("donor", "Geschlecht", "weiblich", 0, 1),
				sc("sample", "Probentyp", "Blut", 20, 0)}},
			{SiteId: "köln"},
		},
		Strata: []*brokerv1.StratumCount{sc("donor", "Geschlecht", "männlich", 6, 0), sc("donor", "Geschlecht", "weiblich", 9, 2),
			sc("donor", "Geschlecht", "divers", 5, 0), sc("sample", "Probentyp", "Blut", 20, 0)},
	}
	v := &view{Lang: i18n.English}
	tables := strataOf(v, res, 5)
	if len(tables) != 2 {
		t.Fatalf("tables: %+v", tables)
	}
	g, p := tables[0], tables[1]
	if g.Entity != "donor" || g.Title != "Geschlecht" || g.Heading != "Donors by Geschlecht" || strings.Join(g.Sites, ",") != "berlin,dresden" {
		t.Fatalf("first table: %+v", g)
	}
	if p.Entity != "sample" || p.Heading != "Samples by Probentyp" || strings.Join(p.Sites, ",") != "dresden" {
		t.Fatalf("second table: %+v", p)
	}
	var got []string
	for _, row := range g.Rows {
		cells := []string{row.Label}
		for _, c := range row.Cells {
			cells = append(cells, c.Text)
		}
		got = append(got, strings.Join(append(cells, row.Total), " | "))
	}
	want := []string{
		"männlich | — | 6 | 6",
		"weiblich | 9 + hidden | hidden | 9, and hidden at 2 sites",
		"divers | 5 | — | 5",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("rows:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	alt := "Donors by Geschlecht, as a bar chart; the table beside it has the same numbers: männlich: dresden 6; weiblich: berlin 9 + hidden, dresden hidden; divers: berlin 5."
	if g.Alt != alt {
		t.Errorf("alt = %q\nwant  %q", g.Alt, alt)
	}
	// A bar a site that sent the stratum, the longest the largest count
	// shown; a hidden count draws none; each stratum labelled once.
	b := g.Chart.Bars
	if len(b) != 4 || b[1].W != strataBarW || b[2].Text != "hidden" || b[2].W != 0 || !b[0].Head || !b[1].Head || b[2].Head || !b[3].Head {
		t.Errorf("bars: %+v", b)
	}
	de := strataOf(&view{Lang: i18n.German}, res, 5)
	if de[0].Heading != "Spender nach Geschlecht" || de[0].Rows[1].Total != "9, dazu verborgen an 2 Standorten" {
		t.Errorf("German: %q, %q", de[0].Heading, de[0].Rows[1].Total)
	}
	// Without the rule (k = 0) the totals are plain numbers.
	exact := strataOf(v, &brokerv1.ListRepliesResponse{
		Sites:  []*brokerv1.SiteCount{{SiteId: "a", Strata: []*brokerv1.StratumCount{sc("donor", "Alter", "0-17", 1, 0)}}, {SiteId: "b", Strata: []*brokerv1.StratumCount{sc("donor", "Alter", "0-17", 2, 0)}}},
		Strata: []*brokerv1.StratumCount{sc("donor", "Alter", "0-17", 3, 0)}}, 0)
	if r := exact[0].Rows[0]; r.Total != "3" || r.Cells[0].Text != "1" || r.Cells[1].Text != "2" {
		t.Errorf("exact: %+v", r)
	}
	// Plain counts have no strata.
	if s := strataOf(v, &brokerv1.ListRepliesResponse{Sites: []*brokerv1.SiteCount{{SiteId: "a", Count: 9, Replies: 1}}, Total: 9}, 5); len(s) != 0 {
		t.Errorf("plain count: %+v", s)
	}
}
