package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"
)

// TestBrokerMinCount: with -min-count 5, two sites reply 3 and 12. The
// researcher sees the 3 nowhere: the researcher API marks charite's reply
// suppressed without its count or body, the Explorer's page, its results
// stream and its CSV say "< 5", and every total is 12 "and 1 site with
// fewer than 5", never 15 (15 - 12 would be the hidden count). The
// operator's CLI shows the 3, marked. (Without -min-count the exact counts
// show as TestBrokerUnreadableReplies and TestExplorerInquiry check.)
func TestBrokerMinCount(t *testing.T) {
	t.Parallel()
	s := explorerStack(t, Options{BrokerArgs: []string{"-registration", "approval", "-watch-interval", "1s", "-min-count", "5"}})
	s.AuthCLI(t, 0, "set-scopes", "-confirm", "-scopes", "broker:researcher", demoEmail)
	charite := registerBank(t, s, "bank@charite.example")
	dresden := registerBank(t, s, "bank@dresden.example")
	s.BrokerCLI(t, 0, "approve-bank", "-site", "charite", charite.email)
	s.BrokerCLI(t, 0, "approve-bank", "-site", "dresden", dresden.email)
	c := signInHTTP(t, s)
	id := releaseInquiryHTTP(t, s, c, "Selten")
	s.AuthCLI(t, 0, "create-client", "-client-id", demoClient, "-secret", demoSecret, "-name", "E2E Client", "-type", "MDR", "-redirect-url", callback)
	access, _ := researcherToken(t, s, demoEmail, demoPass)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stream := openStream(ctx, t, s, c, id)
	reply(t, s, id, charite, "3")
	reply(t, s, id, dresden, "12")
	const total = "12, and 1 site with fewer than 5"
	untilTotal(t, stream, total, 1)
	cancel()

	// The researcher API.
	res, body := s.Do(t, http.MethodGet, sb+"/researcher/inquiries/"+id+"/replies", nil, bearer(access)...)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("replies: %d %s", res.StatusCode, body)
	}
	var got struct {
		Total           int `json:"total"`
		MinCount        int `json:"min_count"`
		SuppressedSites int `json:"suppressed_sites"`
		Replies         []struct {
			BankEmail  string `json:"bank_email"`
			Count      *int   `json:"count"`
			Body       string `json:"body"`
			Suppressed bool   `json:"suppressed"`
		} `json:"replies"`
		Sites []struct {
			SiteID     string `json:"site_id"`
			Count      int    `json:"count"`
			Suppressed int    `json:"suppressed"`
		} `json:"sites"`
	}
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	if got.Total != 12 || got.MinCount != 5 || got.SuppressedSites != 1 || len(got.Replies) != 2 || len(got.Sites) != 2 {
		t.Fatalf("replies:\n%s", body)
	}
	for _, r := range got.Replies {
		switch r.BankEmail {
		case charite.email:
			if !r.Suppressed || r.Count != nil || r.Body != "" {
				t.Errorf("the reply of 3: %+v", r)
			}
		case dresden.email:
			if r.Suppressed || r.Count == nil || *r.Count != 12 || r.Body != "12" {
				t.Errorf("the reply of 12: %+v", r)
			}
		}
	}
	for _, sc := range got.Sites {
		if want := map[string][2]int{"charite": {0, 1}, "dresden": {12, 0}}[sc.SiteID]; sc.Count != want[0] || sc.Suppressed != want[1] {
			t.Errorf("site %+v, want count %d, suppressed %d", sc, want[0], want[1])
		}
	}
	// A number 15 anywhere (a timestamp's digits aside).
	if regexp.MustCompile(`[:,\[]15[,}\]]`).Match(body) {
		t.Errorf("the researcher API has the exact total:\n%s", body)
	}

	// The Explorer's CSV and page.
	_, csv := getPage(t, c, s.URL+"/explorer/inquiries/"+id+"/replies.csv")
	if !strings.HasPrefix(csvTable(csv), "site,answered,count,replies,last_reply_utc,unreadable,samples,entity,stratification,stratum\ncharite,true,< 5,1,") ||
		!strings.Contains(csv, "\ndresden,true,12,1,") {
		t.Errorf("CSV:\n%s", csv)
	}
	_, page := getPage(t, c, s.URL+"/explorer/inquiries/"+id)
	for _, want := range []string{`<strong id="results-total">` + total + `</strong>`,
		`<tr data-site="charite"><th scope="row">charite</th><td class="num">&lt; 5</td>`, `class="chart-num">&lt; 5</text>`} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Contains(page, ">15<") || strings.Contains(page, ">3<") {
		t.Errorf("the page shows the exact total or the hidden count")
	}
	if t.Failed() {
		t.Logf("page:\n%s", page)
	}

	// The operator sees what the rule hid.
	out := s.BrokerCLI(t, 0, "replies", id)
	for _, want := range []string{"3 (researchers: < 5)", "total: 15", `researchers see counts below 5 as "< 5" and the sum of the counts shown (sites with a hidden count: 1)`} {
		wantContains(t, out, want)
	}

	t.Run("unlisted remainder", func(t *testing.T) { partialStrata(t, s, c, access, charite, dresden) })
}

// partialStrata is the attack of a remainder: under -min-count 5,
// charite's Reply document has donors 12 and lists only the stratum
// männlich 9 of Geschlecht (the 3 others unlisted), Alter in full (unter
// 40 5, ab 40 7); dresden replies 20. 12 - 9 would give the hidden 3, so
// the researcher API, the results stream, the page and the CSV show
// Geschlecht hidden whole and its 9 nowhere, the donors and Alter as
// sent.
func partialStrata(t *testing.T, s *Stack, c *http.Client, access string, charite, dresden bank) {
	id := releaseInquiryHTTP(t, s, c, "Teilweise")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stream := openStream(ctx, t, s, c, id)
	doc := `{"donor":{"label":"Spender","count":12,"stratifications":[{"title":"Geschlecht","strata":[{"label":"männlich","count":9}]},{"title":"Alter","strata":[{"label":"unter 40","count":5},{"label":"ab 40","count":7}]}]},"sample":{"label":"Proben","count":30,"stratifications":[]}}`
	if res, body := s.Do(t, http.MethodPut, sb+"/inquiries/"+id+"/replies/"+charite.email, strings.NewReader(doc),
		append(charite.auth(), "Content-Type", "text/plain; charset=UTF-8")...); res.StatusCode != 200 {
		t.Fatalf("reply: %d %s", res.StatusCode, body)
	}
	reply(t, s, id, dresden, "20")
	const (
		hiddenRow = `<tr><th scope="row">männlich</th><td class="num">hidden</td><td class="num">0, and hidden at 1 site</td></tr>`
		alterRow  = `<tr><th scope="row">ab 40</th><td class="num">7</td><td class="num">7</td></tr>`
	)
	// The results stream: the event with both replies.
	event := untilEvent(t, stream, `<strong id="results-total">32</strong>`)
	cancel()
	for _, want := range []string{hiddenRow, alterRow} {
		if !strings.Contains(event, want) {
			t.Errorf("the results stream lacks %q:\n%s", want, event)
		}
	}
	if strings.Contains(event, ">9<") {
		t.Errorf("the results stream shows the 9:\n%s", event)
	}

	// The researcher API.
	res, body := s.Do(t, http.MethodGet, sb+"/researcher/inquiries/"+id+"/replies", nil, bearer(access)...)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("replies: %d %s", res.StatusCode, body)
	}
	type stratum struct {
		Label      string `json:"label"`
		Count      int    `json:"count"`
		Suppressed bool   `json:"suppressed"`
	}
	var got struct {
		Total   int `json:"total"`
		Replies []struct {
			SiteID string `json:"site_id"`
			Body   string `json:"body"`
			Donor  *struct {
				Count           int `json:"count"`
				Stratifications []struct {
					Title  string    `json:"title"`
					Strata []stratum `json:"strata"`
				} `json:"stratifications"`
			} `json:"donor"`
		} `json:"replies"`
		Strata []struct {
			Stratum    string `json:"stratum"`
			Count      int    `json:"count"`
			Suppressed int    `json:"suppressed"`
		} `json:"strata"`
	}
	if err := json.Unmarshal(body, &got); err != nil || got.Total != 32 || len(got.Replies) != 2 {
		t.Fatalf("replies (%v):\n%s", err, body)
	}
	for _, r := range got.Replies {
		if r.SiteID != "charite" {
			continue
		}
		if r.Body != "" || r.Donor == nil || r.Donor.Count != 12 || len(r.Donor.Stratifications) != 2 {
			t.Fatalf("charite's reply:\n%s", body)
		}
		if st := r.Donor.Stratifications[0].Strata; len(st) != 1 || st[0] != (stratum{"männlich", 0, true}) {
			t.Errorf("Geschlecht %+v, want hidden", st)
		}
		if st := r.Donor.Stratifications[1].Strata; len(st) != 2 || st[0] != (stratum{"unter 40", 5, false}) || st[1] != (stratum{"ab 40", 7, false}) {
			t.Errorf("Alter %+v, want as sent", st)
		}
	}
	if len(got.Strata) != 3 || got.Strata[0].Stratum != "männlich" || got.Strata[0].Count != 0 || got.Strata[0].Suppressed != 1 {
		t.Errorf("the strata summed:\n%s", body)
	}
	if regexp.MustCompile(`[:,\[]9[,}\]]`).Match(body) {
		t.Errorf("the researcher API has the 9:\n%s", body)
	}

	// The page and the CSV.
	_, page := getPage(t, c, s.URL+"/explorer/inquiries/"+id)
	for _, want := range []string{hiddenRow, alterRow} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Contains(page, ">9<") {
		t.Errorf("the page shows the 9:\n%s", page)
	}
	_, csv := getPage(t, c, s.URL+"/explorer/inquiries/"+id+"/replies.csv")
	for _, want := range []string{"\ncharite,,hidden,,,,,donor,Geschlecht,männlich", "\ncharite,,7,,,,,donor,Alter,ab 40"} {
		if !strings.Contains(csv, want) {
			t.Errorf("CSV lacks %q:\n%s", want, csv)
		}
	}
	if strings.Contains(csv, ",9,") {
		t.Errorf("the CSV has the 9:\n%s", csv)
	}
}

// untilEvent reads a stream's events until one holds want and returns it.
func untilEvent(t *testing.T, r *bufio.Reader, want string) string {
	t.Helper()
	var event strings.Builder
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("the stream ended before an event with %s: %v", want, err)
		}
		if line == "\n" {
			if strings.Contains(event.String(), want) {
				return event.String()
			}
			event.Reset()
			continue
		}
		event.WriteString(line)
	}
}
