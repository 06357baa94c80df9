package e2e

import (
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
}
