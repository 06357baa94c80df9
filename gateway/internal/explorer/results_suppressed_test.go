package explorer

import (
	"net/http"
	"strings"
	"testing"

	brokerv1 "fris.dev/proto/broker/v1"
)

// suppressedReplies is what the broker sends a researcher under -min-count
// 5 when berlin replied 3 (hidden) and dresden 12 with a stratum of 2: the
// total is the sum of the counts shown, and dresden's Geschlecht is hidden
// whole (männlich 10 would give weiblich as 12 - 10).
func suppressedReplies() *brokerv1.ListRepliesResponse {
	twelve, zero := int32(12), int32(0)
	return &brokerv1.ListRepliesResponse{InquiryId: "1", Total: 12, Unreadable: 1, MinCount: 5, SuppressedSites: 1, Samples: &zero,
		Replies: []*brokerv1.Reply{
			{SiteId: "berlin", Suppressed: true},
			{SiteId: "dresden", Count: &twelve,
				Donor: &brokerv1.ReplyEntity{Label: "Spender", Count: 12, Stratifications: []*brokerv1.Stratification{
					{Title: "Geschlecht", Strata: []*brokerv1.Stratum{{Label: "männlich", Suppressed: true}, {Label: "weiblich", Suppressed: true}}}}},
				Sample: &brokerv1.ReplyEntity{Label: "Proben", Suppressed: true}},
			{SiteId: "köln", Unreadable: true},
		},
		Sites: []*brokerv1.SiteCount{
			{SiteId: "berlin", Replies: 1, Suppressed: 1},
			{SiteId: "dresden", Count: 12, Replies: 1, Samples: &zero, Strata: []*brokerv1.StratumCount{
				{Entity: "donor", Stratification: "Geschlecht", Stratum: "männlich", Suppressed: 1},
				{Entity: "donor", Stratification: "Geschlecht", Stratum: "weiblich", Suppressed: 1}}},
			{SiteId: "köln", Replies: 1, Unreadable: 1},
		},
		Strata: []*brokerv1.StratumCount{
			{Entity: "donor", Stratification: "Geschlecht", Stratum: "männlich", Suppressed: 1},
			{Entity: "donor", Stratification: "Geschlecht", Stratum: "weiblich", Suppressed: 1}}}
}

// TestResultsSuppressed: a count the broker's small-count rule hid is "< 5"
// on the page, in its chart, the results stream and the CSV (a hidden
// sample count too), a hidden stratum "hidden" (it may be k or more); the total is the sum of the counts shown with how many sites had a
// count below 5, and a withheld unreadable body says why it is missing.
func TestResultsSuppressed(t *testing.T) {
	e, fb, _ := newInqEnv(t)
	fb.sites = []string{"berlin", "dresden", "köln"}
	fb.ins["1"], fb.authors["1"] = &brokerv1.Inquiry{Id: "1", Status: brokerv1.InquiryStatus_RELEASED, TargetSites: []string{"berlin", "dresden", "köln"}}, "42"
	fb.replies["1"] = suppressedReplies()
	b := e.browser()
	b.signIn()
	body := b.do("GET", InquiriesPath+"/1", nil).Body.String()
	checkSuppressed := func(what, body string) {
		t.Helper()
		for _, want := range []string{
			`<strong id="results-total">12 (1 unreadable), and 1 site with fewer than 5</strong>`,
			`Counts below 5 are shown as &#34;&lt; 5&#34;`,
			`<tr data-site="berlin"><th scope="row">berlin</th><td class="num">&lt; 5</td>`,
			`<tr data-site="dresden"><th scope="row">dresden</th><td class="num">12</td><td class="num">&lt; 5</td>`,
			`<tr data-site="berlin"><th scope="row">berlin</th><td class="num">&lt; 5</td><td class="num"></td>`,
			`<strong id="results-samples">0, and 1 site with fewer than 5</strong>`,
			`class="chart-num">&lt; 5</text>`,
			`<tr><th scope="row">weiblich</th><td class="num">hidden</td><td class="num">0, and hidden at 1 site</td></tr>`,
			`<tr><th scope="row">männlich</th><td class="num">hidden</td><td class="num">0, and hidden at 1 site</td></tr>`,
			`männlich: dresden hidden; weiblich: dresden hidden.</desc>`,
			`all strata of its breakdown at that site are hidden`,
			`<code>(not shown: it may hold a count below the threshold)</code>`,
		} {
			if !strings.Contains(body, want) {
				t.Errorf("%s lacks %q", what, want)
			}
		}
		if strings.Contains(body, `<td class="num">0</td>`) || strings.Contains(body, `class="chart-num">0<`) {
			t.Errorf("%s shows a hidden count as 0", what)
		}
		if t.Failed() {
			t.Logf("%s:\n%s", what, body)
		}
	}
	checkSuppressed("page", body)

	fb.watch = []*brokerv1.ListRepliesResponse{suppressedReplies()}
	ev := b.do("GET", InquiriesPath+"/1/events", nil)
	if ev.Code != http.StatusOK || !strings.Contains(ev.Body.String(), "event: results") {
		t.Fatalf("events: %d\n%s", ev.Code, ev.Body)
	}
	checkSuppressed("results event", ev.Body.String())

	rec := b.do("GET", InquiriesPath+"/1/replies.csv", nil)
	want := "site,answered,count,replies,last_reply_utc,unreadable,samples,entity,stratification,stratum\n" +
		"berlin,true,< 5,1,,0,,,,\n" +
		"dresden,true,12,1,,0,< 5,,,\n" +
		"köln,true,unreadable,1,,1,,,,\n" +
		"dresden,,hidden,,,,,donor,Geschlecht,männlich\n" +
		"dresden,,hidden,,,,,donor,Geschlecht,weiblich\n"
	if rec.Code != http.StatusOK || csvRows(rec.Body.String()) != want {
		t.Fatalf("CSV: %d\n%s", rec.Code, rec.Body)
	}
	de := b.do("GET", InquiriesPath+"/1?lang=de", nil).Body.String()
	if !strings.Contains(de, "12 (1 nicht lesbar), dazu 1 Standort mit weniger als 5") {
		t.Errorf("German page lacks its total:\n%s", de)
	}
}

func TestSiteCountText(t *testing.T) {
	v := &view{}
	for _, tc := range []struct {
		sc   *brokerv1.SiteCount
		k    int32
		want string
	}{
		{&brokerv1.SiteCount{Count: 3, Replies: 1}, 0, "3"},
		{&brokerv1.SiteCount{Replies: 1, Suppressed: 1}, 5, "< 5"},
		{&brokerv1.SiteCount{Count: 9, Replies: 2, Suppressed: 1}, 5, "9 + < 5"},
		{&brokerv1.SiteCount{Replies: 2, Suppressed: 1, Unreadable: 1}, 5, "< 5 (1 unreadable)"},
		{&brokerv1.SiteCount{Count: 12, Replies: 1}, 5, "12"},
	} {
		if got := siteCountText(v, tc.sc, tc.k); got != tc.want {
			t.Errorf("siteCountText(%v, %d) = %q, want %q", tc.sc, tc.k, got, tc.want)
		}
	}
}
