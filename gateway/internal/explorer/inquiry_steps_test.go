package explorer

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	brokerv1 "fris.dev/proto/broker/v1"
)

// TestReleaseEmptyQuery: an inquiry without a condition is released only
// with the second confirmation; the page warns of it.
func TestReleaseEmptyQuery(t *testing.T) {
	e, fb, _ := newInqEnv(t)
	b := e.browser()
	b.signIn()
	csrf := csrfOf(t, b.do("GET", InquiriesPath+"/new", nil).Body.String())
	ct, form := multipartForm(t, url.Values{"csrf_token": {csrf}, "label": {"Everyone"}, "lastname": {"Lovelace"}, "site": {"berlin"}}, nil)
	if rec := b.post(InquiriesPath, ct, form); rec.Code != http.StatusSeeOther {
		t.Fatalf("create: %d\n%s", rec.Code, rec.Body)
	}
	page := b.do("GET", InquiriesPath+"/1", nil).Body.String()
	for _, want := range []string{`id="empty-warning"`, "has no condition", `name="confirm_empty" value="yes" required`, `name="confirm" value="yes" required`} {
		if !strings.Contains(page, want) {
			t.Fatalf("the draft's page lacks %q:\n%s", want, page)
		}
	}
	rec := b.do("POST", InquiriesPath+"/1/release", url.Values{"csrf_token": {csrf}, "confirm": {"yes"}})
	if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "Not released: this inquiry has no condition") || fb.ins["1"].GetStatus() != brokerv1.InquiryStatus_DRAFT {
		t.Fatalf("released without the second confirmation: %d\n%s", rec.Code, rec.Body)
	}
	if rec := b.do("POST", InquiriesPath+"/1/release", url.Values{"csrf_token": {csrf}, "confirm": {"yes"}, "confirm_empty": {"yes"}}); rec.Code != http.StatusSeeOther ||
		fb.ins["1"].GetStatus() != brokerv1.InquiryStatus_RELEASED {
		t.Fatalf("release with both confirmations: %d\n%s", rec.Code, rec.Body)
	}
	if page := b.do("GET", InquiriesPath+"/1", nil).Body.String(); strings.Contains(page, "empty-warning") {
		t.Fatal("a released inquiry still warns")
	}
}

func TestNoCondition(t *testing.T) {
	for doc, want := range map[string]bool{
		`<Query xmlns="http://schema.samply.de/common/Query"><Where></Where></Query>`:                                                            true,
		`<Query xmlns="http://schema.samply.de/common/Query"><Where><And></And></Where></Query>`:                                                 true,
		`<Query xmlns="http://schema.samply.de/common/Query"><Where><IsNull><MdrKey>urn:mdr16:dataelement:1:1</MdrKey></IsNull></Where></Query>`: false,
		`not xml`: false,
	} {
		if got := noCondition(doc); got != want {
			t.Errorf("noCondition(%s) = %v", doc, got)
		}
	}
}
