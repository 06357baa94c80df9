package e2e

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestExplorerStrata: under -min-count 5, charite's connector replies with
// a Reply document in ISO-8859-1 (donors 12 by Geschlecht: männlich 9,
// weiblich 3, and by Alter: unter 40 5, ab 40 7; samples 30) and dresden
// with a plain 3. Without a reload the page shows donors and samples per
// site, the stratified charts and tables with dresden's 3 as "< 5" and
// Geschlecht hidden whole (12 - 9 would give the 3), never summed, Alter
// as sent; the CSV (rectangular) and the
// researcher API say the same; axe-core finds nothing serious.
func TestExplorerStrata(t *testing.T) {
	t.Parallel()
	p := newPage(t)
	s, charite, dresden := inquiryStack(t, "-min-count", "5")
	id := releaseInquiryHTTP(t, s, signInHTTP(t, s), "Stratified")

	p.signIn(s)
	p.do("open the inquiry", chromedp.Navigate(s.URL+"/explorer/inquiries/"+id), chromedp.WaitVisible(chromedp.CSS(`#results[data-updated]`)))
	p.markDocument()
	replyStrata(t, s, id, charite, dresden)
	p.wantStrata()
	p.check("inquiry-strata")
	p.wantStrataCSV(id)
	wantStrataAPI(t, s, id)
}

// replyStrata: charite's connector replies with a Reply document in
// ISO-8859-1 (donors 12 by Geschlecht: männlich 9, weiblich 3, and by
// Alter: unter 40 5, ab 40 7; samples 30), dresden's with a plain 3.
func replyStrata(t *testing.T, s *Stack, id string, charite, dresden bank) {
	t.Helper()
	doc := `{"donor":{"label":"Spender","count":12,"stratifications":[{"title":"Geschlecht","strata":[{"label":"männlich","count":9},{"label":"weiblich","count":3}]},{"title":"Alter","strata":[{"label":"unter 40","count":5},{"label":"ab 40","count":7}]}]},"sample":{"label":"Proben","count":30,"stratifications":[]}}`
	if res, body := s.Do(t, http.MethodPut, sb+"/inquiries/"+id+"/replies/"+charite.email, bytes.NewReader(latin1(doc)),
		append(charite.auth(), "Content-Type", "text/plain; charset=ISO-8859-1")...); res.StatusCode != 200 {
		t.Fatalf("reply: %d %s", res.StatusCode, body)
	}
	reply(t, s, id, dresden, "3")
}

// wantStrata waits for replyStrata's replies on the open inquiry page
// under -min-count 5, without a reload since markDocument: donors and
// samples per site, the stratified chart and table, the 3s as "< 5".
func (p *page) wantStrata() {
	t := p.t
	t.Helper()
	const total = "12, and 1 site with fewer than 5"
	p.do("both replies arrive", chromedp.Poll[chromedp.Void](`document.getElementById("results-total").textContent === "`+total+`" && !!document.querySelector(".strata-table")`,
		chromedp.WithPollingTimeout(15*time.Second)))
	p.wantSameDocument()
	rows := func(sel string) string {
		t.Helper()
		got, err := chromedp.Run(p.ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll(`+"`"+sel+"`"+`)].map(tr =>
			[...tr.children].map(c => c.textContent.trim()).join(" | "))`))
		if err != nil {
			t.Fatal(err)
		}
		return strings.Join(got, "\n")
	}
	if got, want := rows("table.results:not(.strata-table) tbody tr"), "charite | 12 | 30 | 1 | \ndresden | < 5 |  | 1 | "; !strings.HasPrefix(strings.ReplaceAll(got, "UTC", ""), "charite | 12 | 30 | 1 |") || !strings.Contains(got, "dresden | < 5 |  | 1 |") {
		t.Errorf("sites:\n%s\nwant like:\n%s", got, want)
	}
	p.wantText("#results .total", "Donors", total, "Samples", "30")
	if got, want := rows(".strata-table thead tr, .strata-table tbody tr"), "Stratum | charite | Total\nmännlich | hidden | 0, and hidden at 1 site\nweiblich | hidden | 0, and hidden at 1 site\n"+
		"Stratum | charite | Total\nunter 40 | 5 | 5\nab 40 | 7 | 7"; got != want {
		t.Errorf("strata table:\n%s\nwant:\n%s", got, want)
	}
	p.wantText(".strata caption", "Donors by Geschlecht")
	alt, err := chromedp.Run(p.ctx, chromedp.Evaluate[[]string](`(() => { const s = document.querySelector("svg.strata-chart");
		return [s.getAttribute("role"), s.getAttribute("aria-labelledby").split(" ").map(id => document.getElementById(id).textContent).join(" ")]; })()`))
	if err != nil || alt[0] != "img" || !strings.Contains(alt[1], "Donors by Geschlecht") || !strings.Contains(alt[1], "männlich: charite hidden; weiblich: charite hidden") {
		t.Errorf("the chart's text alternative: %q (%v)", alt, err)
	}
}

// wantStrataCSV fetches the inquiry's CSV in the page, with its session,
// and wants what wantStrata saw.
func (p *page) wantStrataCSV(id string) {
	t := p.t
	t.Helper()
	// The CSV: the site rows, then a row per site and stratum, every row
	// as wide as the header.
	file := p.fetchCSV(id)
	recs, err := csv.NewReader(strings.NewReader(csvTable(file))).ReadAll()
	if err != nil {
		t.Fatalf("CSV: %v\n%s", err, file)
	}
	var lines []string
	for _, r := range recs {
		lines = append(lines, strings.Join(r, ","))
	}
	want := []string{"site,answered,count,replies,last_reply_utc,unreadable,samples,entity,stratification,stratum",
		"charite,true,12,1,", "dresden,true,< 5,1,",
		"charite,,hidden,,,,,donor,Geschlecht,männlich", "charite,,hidden,,,,,donor,Geschlecht,weiblich",
		"charite,,5,,,,,donor,Alter,unter 40", "charite,,7,,,,,donor,Alter,ab 40"}
	if len(lines) != len(want) {
		t.Fatalf("CSV:\n%s", file)
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("CSV line %d: %q, want %q...", i, lines[i], w)
		}
	}
	if strings.Contains(file, ",3,") || strings.Contains(file, ",9,") || strings.Contains(file, ",15,") {
		t.Errorf("the CSV has a hidden count or the exact total:\n%s", file)
	}

}

// wantStrataAPI asks the researcher API for the inquiry's replies and
// wants what wantStrata saw.
func wantStrataAPI(t *testing.T, s *Stack, id string) {
	t.Helper()
	// The researcher API: the parsed document, the 3s marked and cleared.
	s.AuthCLI(t, 0, "create-client", "-client-id", demoClient, "-secret", demoSecret, "-name", "E2E Client", "-type", "MDR", "-redirect-url", callback)
	access, _ := researcherToken(t, s, demoEmail, demoPass)
	res, body := s.Do(t, http.MethodGet, sb+"/researcher/inquiries/"+id+"/replies", nil, bearer(access)...)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("replies: %d %s", res.StatusCode, body)
	}
	type stratum struct {
		Label      string `json:"label"`
		Count      int    `json:"count"`
		Suppressed bool   `json:"suppressed"`
	}
	type stratumCount struct {
		Entity         string `json:"entity"`
		Stratification string `json:"stratification"`
		Stratum        string `json:"stratum"`
		Count          int    `json:"count"`
		Suppressed     int    `json:"suppressed"`
	}
	var got struct {
		Strata []stratumCount `json:"strata"`
		Sites  []struct {
			SiteID string         `json:"site_id"`
			Strata []stratumCount `json:"strata"`
		} `json:"sites"`
		Total   int  `json:"total"`
		Samples *int `json:"samples"`
		Replies []struct {
			SiteID     string `json:"site_id"`
			Count      *int   `json:"count"`
			Suppressed bool   `json:"suppressed"`
			Donor      *struct {
				Count           int `json:"count"`
				Stratifications []struct {
					Title  string    `json:"title"`
					Strata []stratum `json:"strata"`
				} `json:"stratifications"`
			} `json:"donor"`
		} `json:"replies"`
	}
	if err := json.Unmarshal(body, &got); err != nil || got.Total != 12 || got.Samples == nil || *got.Samples != 30 || len(got.Replies) != 2 {
		t.Fatalf("replies (%v):\n%s", err, body)
	}
	// The strata summed per site and over the sites: Geschlecht, hidden
	// whole, adds nothing.
	wantStrata := []stratumCount{{"donor", "Geschlecht", "männlich", 0, 1}, {"donor", "Geschlecht", "weiblich", 0, 1},
		{"donor", "Alter", "unter 40", 5, 0}, {"donor", "Alter", "ab 40", 7, 0}}
	if fmt.Sprint(got.Strata) != fmt.Sprint(wantStrata) || len(got.Sites) != 2 || got.Sites[0].SiteID != "charite" ||
		fmt.Sprint(got.Sites[0].Strata) != fmt.Sprint(wantStrata) || len(got.Sites[1].Strata) != 0 {
		t.Errorf("strata:\n%s", body)
	}
	for _, r := range got.Replies {
		switch r.SiteID {
		case "charite":
			if r.Donor == nil || r.Donor.Count != 12 || len(r.Donor.Stratifications) != 2 || r.Donor.Stratifications[0].Title != "Geschlecht" {
				t.Fatalf("charite's reply:\n%s", body)
			}
			if st := r.Donor.Stratifications[0].Strata; len(st) != 2 || st[0] != (stratum{"männlich", 0, true}) || st[1] != (stratum{"weiblich", 0, true}) {
				t.Errorf("charite's strata %+v", st)
			}
		case "dresden":
			if !r.Suppressed || r.Count != nil || r.Donor != nil {
				t.Errorf("dresden's reply of 3: %s", body)
			}
		}
	}
}
