package e2e

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// TestBrokerUnreadableReplies: the connector's Reply document, sent as
// ISO-8859-1 with umlauts in its labels, is read whole (donor and sample
// counts, stratifications); a reply that is not a count ("lots <b>") is
// kept as sent and shown as unreadable, never as 0, in the researcher API,
// the Explorer's page (English and German), its CSV and the broker CLI.
func TestBrokerUnreadableReplies(t *testing.T) {
	t.Parallel()
	s, charite, dresden := inquiryStack(t)
	c := signInHTTP(t, s)
	id := releaseInquiryHTTP(t, s, c, "Unlesbar")
	// The researcher API's client: a token of the same user.
	s.AuthCLI(t, 0, "create-client", "-client-id", demoClient, "-secret", demoSecret, "-name", "E2E Client", "-type", "MDR", "-redirect-url", callback)
	access, _ := researcherToken(t, s, demoEmail, demoPass)

	doc := `{"donor":{"label":"Spender","count":12,"stratifications":[{"title":"Geschlecht","strata":[` +
		`{"label":"männlich","count":5},{"label":"weiblich","count":7}]}]},` +
		`"sample":{"label":"Proben","count":30,"stratifications":[{"title":"Gewebeart","strata":[{"label":"Blut","count":30}]}]},` +
		`"redirectUrl":null,"site":"Charité Berlin"}`
	for _, r := range []struct {
		b    bank
		body []byte
	}{{charite, latin1(doc)}, {dresden, []byte("lots <b>")}} {
		res, body := s.Do(t, http.MethodPut, sb+"/inquiries/"+id+"/replies/"+r.b.email, strings.NewReader(string(r.body)),
			append(r.b.auth(), "Content-Type", "text/plain; charset=ISO-8859-1")...)
		if res.StatusCode != http.StatusOK {
			t.Fatalf("reply of %s: %d %s", r.b.email, res.StatusCode, body)
		}
	}

	// The researcher API.
	res, body := s.Do(t, http.MethodGet, sb+"/researcher/inquiries/"+id+"/replies", nil, bearer(access)...)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("replies: %d %s", res.StatusCode, body)
	}
	var got struct {
		Total      int  `json:"total"`
		Unreadable int  `json:"unreadable"`
		Samples    *int `json:"samples"`
		Replies    []struct {
			BankEmail  string `json:"bank_email"`
			Count      *int   `json:"count"`
			Unreadable bool   `json:"unreadable"`
			Body       string `json:"body"`
			Donor      *struct {
				Label           string `json:"label"`
				Count           int    `json:"count"`
				Stratifications []struct {
					Title  string `json:"title"`
					Strata []struct {
						Label string `json:"label"`
						Count int    `json:"count"`
					} `json:"strata"`
				} `json:"stratifications"`
			} `json:"donor"`
			Sample *struct {
				Label string `json:"label"`
				Count int    `json:"count"`
			} `json:"sample"`
		} `json:"replies"`
		Sites []struct {
			SiteID     string `json:"site_id"`
			Count      int    `json:"count"`
			Replies    int    `json:"replies"`
			Unreadable int    `json:"unreadable"`
			Samples    *int   `json:"samples"`
		} `json:"sites"`
	}
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	if got.Total != 12 || got.Unreadable != 1 || got.Samples == nil || *got.Samples != 30 || len(got.Replies) != 2 || len(got.Sites) != 2 {
		t.Fatalf("replies:\n%s", body)
	}
	for _, r := range got.Replies {
		switch r.BankEmail {
		case charite.email:
			d := r.Donor
			if r.Unreadable || r.Count == nil || *r.Count != 12 || d == nil || d.Label != "Spender" || len(d.Stratifications) != 1 ||
				d.Stratifications[0].Title != "Geschlecht" || len(d.Stratifications[0].Strata) != 2 ||
				d.Stratifications[0].Strata[0].Label != "männlich" || d.Stratifications[0].Strata[0].Count != 5 ||
				r.Sample == nil || r.Sample.Count != 30 || !strings.Contains(r.Body, `"site":"Charité Berlin"`) {
				t.Errorf("Reply document: %+v", r)
			}
		case dresden.email:
			if !r.Unreadable || r.Count != nil || r.Donor != nil || r.Body != "lots <b>" {
				t.Errorf("unreadable reply: %+v", r)
			}
		}
	}
	for _, sc := range got.Sites {
		switch sc.SiteID {
		case "charite":
			if sc.Count != 12 || sc.Unreadable != 0 || sc.Samples == nil || *sc.Samples != 30 {
				t.Errorf("charite: %+v", sc)
			}
		case "dresden":
			if sc.Count != 0 || sc.Replies != 1 || sc.Unreadable != 1 || sc.Samples != nil {
				t.Errorf("dresden: %+v", sc)
			}
		}
	}
	// The Explorer's CSV and page.
	_, csv := getPage(t, c, s.URL+"/explorer/inquiries/"+id+"/replies.csv")
	if !strings.HasPrefix(csvTable(csv), "site,answered,count,replies,last_reply_utc,unreadable,samples,entity,stratification,stratum\ncharite,true,12,1,") ||
		!strings.Contains(csv, ",0,30,,,\ndresden,true,unreadable,1,") || !strings.Contains(csv, ",1,,,,\ncharite,,5,,,,,donor,Geschlecht,männlich\n") {
		t.Errorf("CSV:\n%s", csv)
	}
	_, page := getPage(t, c, s.URL+"/explorer/inquiries/"+id)
	for _, want := range []string{`<strong id="results-total">12 (1 unreadable)</strong>`, `<strong id="results-samples">30</strong>`,
		`<td class="num">unreadable</td>`, "Unreadable replies, not in the total: 1", `>Donors by Geschlecht</caption>`,
		`<th scope="row">männlich</th><td class="num">5</td>`, `<code>lots &lt;b&gt;</code>`} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if t.Failed() {
		t.Logf("page:\n%s", page)
	}
	_, de := getPage(t, c, s.URL+"/explorer/inquiries/"+id+"?lang=de")
	if !strings.Contains(de, `<td class="num">nicht lesbar</td>`) || !strings.Contains(de, "12 (1 nicht lesbar)") {
		t.Errorf("German page lacks the unreadable count")
	}

	// The operator's CLI.
	out := s.BrokerCLI(t, 0, "replies", id)
	for _, want := range []string{"site dresden: unreadable from 1 replies", "site charite: 12 from 1 replies, 30 samples", "total: 12 (1 unreadable), 30 samples"} {
		wantContains(t, out, want)
	}
}
