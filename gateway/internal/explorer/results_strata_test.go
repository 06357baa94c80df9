package explorer

import (
	"strings"
	"testing"

	"fris.dev/gateway/internal/i18n"
	brokerv1 "fris.dev/proto/broker/v1"
)

func strat(title string, strata ...*brokerv1.Stratum) *brokerv1.Stratification {
	return &brokerv1.Stratification{Title: title, Strata: strata}
}

// TestStrataOf: stratifications are gathered by entity and title across
// sites (two banks of a site summed; strata in the order the sites,
// sorted, first sent them), a row a stratum and a column a site;
// a hidden stratum is "< k" and left out of the total, which says how many
// sites had one, so the hidden count cannot be worked out from the numbers
// shown; a site without a stratum is "—", not 0; suppressed and unreadable
// replies add nothing; the chart's text alternative has every number.
func TestStrataOf(t *testing.T) {
	one := int32(9)
	replies := []*brokerv1.Reply{
		{SiteId: "dresden", Count: &one, Donor: &brokerv1.ReplyEntity{Count: 9, Stratifications: []*brokerv1.Stratification{
			strat("Geschlecht", &brokerv1.Stratum{Label: "männlich", Count: 6}, &brokerv1.Stratum{Label: "weiblich", Suppressed: true}),
		}}, Sample: &brokerv1.ReplyEntity{Count: 20, Stratifications: []*brokerv1.Stratification{
			strat("Probentyp", &brokerv1.Stratum{Label: "Blut", Count: 20}),
		}}},
		{SiteId: "berlin", Count: &one, Donor: &brokerv1.ReplyEntity{Count: 9, Stratifications: []*brokerv1.Stratification{
			strat("Geschlecht", &brokerv1.Stratum{Label: "weiblich", Count: 9}),
		}}},
		{SiteId: "berlin", Count: &one, Donor: &brokerv1.ReplyEntity{Count: 9, Stratifications: []*brokerv1.Stratification{
			strat("Geschlecht", &brokerv1.Stratum{Label: "weiblich", Suppressed: true}, &brokerv1.Stratum{Label: "divers", Count: 5}),
		}}},
		{SiteId: "köln", Suppressed: true},
		{SiteId: "hamburg", Unreadable: true},
	}
	v := &view{Lang: i18n.English}
	tables := strataOf(v, replies, 5)
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
		"weiblich | 9 + < 5 | < 5 | 9, and 2 sites with fewer than 5",
		"divers | 5 | — | 5",
		"männlich | — | 6 | 6",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("rows:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	alt := "Donors by Geschlecht, as a bar chart; the table beside it has the same numbers: weiblich: berlin 9 + < 5, dresden < 5; divers: berlin 5; männlich: dresden 6."
	if g.Alt != alt {
		t.Errorf("alt = %q\nwant  %q", g.Alt, alt)
	}
	// A bar a site that sent the stratum; a hidden count draws none.
	if len(g.Chart.Bars) != 4 || g.Chart.Bars[1].Text != "< 5" || g.Chart.Bars[1].W != 0 || g.Chart.Bars[0].W != strataBarW {
		t.Errorf("bars: %+v", g.Chart.Bars)
	}
	if !g.Chart.Bars[0].Head || g.Chart.Bars[1].Head || !g.Chart.Bars[2].Head {
		t.Errorf("stratum labels: %+v", g.Chart.Bars)
	}

	// Without the rule (k = 0) nothing is hidden and totals are exact.
	exact := strataOf(v, []*brokerv1.Reply{{SiteId: "a", Count: &one, Donor: &brokerv1.ReplyEntity{Stratifications: []*brokerv1.Stratification{
		strat("Alter", &brokerv1.Stratum{Label: "0-17", Count: 1}),
	}}}, {SiteId: "b", Count: &one, Donor: &brokerv1.ReplyEntity{Stratifications: []*brokerv1.Stratification{
		strat("Alter", &brokerv1.Stratum{Label: "0-17", Count: 2}),
	}}}}, 0)
	if r := exact[0].Rows[0]; r.Total != "3" || r.Cells[0].Text != "1" || r.Cells[1].Text != "2" {
		t.Errorf("exact: %+v", r)
	}
	// Plain counts have no stratifications.
	if s := strataOf(v, []*brokerv1.Reply{{SiteId: "a", Count: &one, Body: "9"}}, 5); len(s) != 0 {
		t.Errorf("plain count: %+v", s)
	}
}
