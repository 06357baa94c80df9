package explorer

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"fris.dev/gateway/internal/i18n"
	brokerv1 "fris.dev/proto/broker/v1"
)

// TestResultsUnreadable: a site whose replies carried no count shows
// "unreadable" (in the page's language), never 0, on the page, in its
// chart and in the CSV; a site with some unreadable replies shows its count
// and how many were; a Reply document's samples and breakdowns are shown.
func TestResultsUnreadable(t *testing.T) {
	e, fb, _ := newInqEnv(t)
	fb.sites = []string{"berlin", "dresden", "köln"}
	fb.ins["1"], fb.authors["1"] = &brokerv1.Inquiry{Id: "1", Status: brokerv1.InquiryStatus_RELEASED, TargetSites: []string{"berlin", "dresden", "köln"}}, "42"
	four, twelve := int32(4), int32(12)
	thirty := int32(30)
	fb.replies["1"] = &brokerv1.ListRepliesResponse{InquiryId: "1", Total: 16, Unreadable: 3, Samples: &thirty,
		Replies: []*brokerv1.Reply{
			{SiteId: "berlin", Count: &four, Body: "4"},
			{SiteId: "berlin", Unreadable: true, Body: "lots <b>"},
			{SiteId: "dresden", Count: &twelve, Body: "{}",
				Donor: &brokerv1.ReplyEntity{Label: "Spender", Count: 12, Stratifications: []*brokerv1.Stratification{
					{Title: "Geschlecht", Strata: []*brokerv1.Stratum{{Label: "männlich", Count: 5}, {Label: "weiblich", Count: 7}}}}},
				Sample: &brokerv1.ReplyEntity{Label: "Proben", Count: 30}},
			{SiteId: "köln", Unreadable: true, Body: "n/a"},
			{SiteId: "köln", Unreadable: true, Body: "<script>x</script>"},
		},
		Sites: []*brokerv1.SiteCount{
			{SiteId: "berlin", Count: 4, Replies: 2, Unreadable: 1},
			{SiteId: "dresden", Count: 12, Replies: 1, Samples: &thirty, Strata: []*brokerv1.StratumCount{
				{Entity: "donor", Stratification: "Geschlecht", Stratum: "männlich", Count: 5},
				{Entity: "donor", Stratification: "Geschlecht", Stratum: "weiblich", Count: 7}}},
			{SiteId: "köln", Replies: 2, Unreadable: 2},
		},
		Strata: []*brokerv1.StratumCount{
			{Entity: "donor", Stratification: "Geschlecht", Stratum: "männlich", Count: 5},
			{Entity: "donor", Stratification: "Geschlecht", Stratum: "weiblich", Count: 7}}}
	b := e.browser()
	b.signIn()
	body := b.do("GET", InquiriesPath+"/1", nil).Body.String()
	for _, want := range []string{
		`<strong id="results-total">16 (3 unreadable)</strong>`,
		`<strong id="results-samples">30</strong>`,
		"Unreadable replies, not in the total: 3",
		`<tr data-site="berlin"><th scope="row">berlin</th><td class="num">4 (1 unreadable)</td><td class="num"></td><td class="num">2</td>`,
		`<tr data-site="dresden"><th scope="row">dresden</th><td class="num">12</td><td class="num">30</td><td class="num">1</td>`,
		`<tr data-site="köln"><th scope="row">köln</th><td class="num">unreadable</td><td class="num"></td><td class="num">2</td>`,
		`class="chart-num">unreadable</text>`,
		`<caption id="strata-0-c">Donors by Geschlecht</caption>`,
		`<tr><th scope="row">männlich</th><td class="num">5</td><td class="num">5</td></tr>`,
		`<th scope="col">Donors</th><th scope="col">Samples</th>`,
		`<code>lots &lt;b&gt;</code>`,
		`<code>&lt;script&gt;x&lt;/script&gt;</code>`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Contains(body, `<td class="num">0</td>`) || strings.Contains(body, `class="chart-num">0<`) {
		t.Errorf("an unreadable site is shown as 0:\n%s", body)
	}
	if t.Failed() {
		t.Logf("page:\n%s", body)
	}
	de := b.do("GET", InquiriesPath+"/1?lang=de", nil).Body.String()
	for _, want := range []string{`<td class="num">nicht lesbar</td>`, `16 (3 nicht lesbar)`, ">Proben</th>"} {
		if !strings.Contains(de, want) {
			t.Errorf("German page lacks %q", want)
		}
	}

	rec := b.do("GET", InquiriesPath+"/1/replies.csv", nil)
	want := "site,answered,count,replies,last_reply_utc,unreadable,samples,entity,stratification,stratum\n" +
		"berlin,true,4,2,,1,,,,\n" +
		"dresden,true,12,1,,0,30,,,\n" +
		"köln,true,unreadable,2,,2,,,,\n" +
		"dresden,,5,,,,,donor,Geschlecht,männlich\n" +
		"dresden,,7,,,,,donor,Geschlecht,weiblich\n"
	if rec.Code != http.StatusOK || csvRows(rec.Body.String()) != want {
		t.Fatalf("CSV: %d\n%s", rec.Code, rec.Body)
	}
}

func TestCountText(t *testing.T) {
	for _, tc := range []struct {
		count, replies, unreadable int32
		want                       string
	}{
		{0, 1, 0, "0"},
		{7, 2, 0, "7"},
		{0, 2, 2, "unreadable"},
		{5, 3, 1, "5 (1 unreadable)"},
	} {
		if got := countText(&view{Lang: i18n.English}, tc.count, tc.replies, tc.unreadable); got != tc.want {
			t.Errorf("countText(%d, %d, %d) = %q; want %q", tc.count, tc.replies, tc.unreadable, got, tc.want)
		}
	}
}

// TestEventsEndOnShutdown: an open event stream ends when the gateway
// begins to shut down.
func TestEventsEndOnShutdown(t *testing.T) {
	done := make(chan struct{})
	e, fb, _ := newInqEnv(t, done)
	fb.ins["1"], fb.authors["1"] = &brokerv1.Inquiry{Id: "1", Status: brokerv1.InquiryStatus_RELEASED, TargetSites: []string{"berlin"}}, "42"
	fb.watch, fb.hold = []*brokerv1.ListRepliesResponse{{InquiryId: "1"}}, true
	b := e.browser()
	b.signIn()
	ended := make(chan *httptest.ResponseRecorder, 1)
	go func() { ended <- b.do("GET", InquiriesPath+"/1/events", nil) }()
	select {
	case rec := <-ended:
		t.Fatalf("the stream ended by itself: %d\n%s", rec.Code, rec.Body)
	case <-time.After(200 * time.Millisecond):
	}
	close(done)
	select {
	case rec := <-ended:
		if rec.Code != 200 || !strings.Contains(rec.Body.String(), "event: results") {
			t.Fatalf("stream: %d\n%s", rec.Code, rec.Body)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("the stream outlived the shutdown")
	}
}
