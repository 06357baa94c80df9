package e2e

import (
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// TestExplorerInquiryStepsBrowser: in a real browser, a draft without a
// condition warns before its release, which the keyboard alone confirms
// (the checkboxes are required: the browser does not send the form
// without them); the released page says how far the inquiry has got; axe
// finds nothing serious on either.
func TestExplorerInquiryStepsBrowser(t *testing.T) {
	t.Parallel()
	p := newPage(t)
	s, _, _ := inquiryStack(t)
	p.do("open the form, which asks to sign in", chromedp.Navigate(s.URL+"/explorer/inquiries/new?lang=en"), chromedp.WaitVisible(chromedp.ID("email")))
	p.do("sign in", chromedp.SendKeys(chromedp.ID("email"), demoEmail), chromedp.SendKeys(chromedp.ID("password"), demoPass),
		chromedp.Click(chromedp.CSS("button[type=submit]")), chromedp.WaitVisible(chromedp.ID("label")))
	p.do("a draft without a condition", chromedp.SendKeys(chromedp.ID("label"), "Everyone"),
		chromedp.Click(chromedp.CSS(`input[name=site][value=charite]`)),
		chromedp.Click(chromedp.CSS(`form.inquiry .actions button[type=submit]`)), chromedp.WaitVisible(chromedp.ID("empty-warning")))
	p.wantText("#empty-warning", "This inquiry has no condition")
	p.check("inquiry-empty-warning")

	// Without the ticks the browser keeps the form; the page stays.
	p.do("release unticked", chromedp.Click(chromedp.CSS(`form[action$="/release"] button`)))
	p.wantText("main", "Draft")
	p.do("tick both and release with the keyboard", chromedp.Focus(chromedp.ID("release-ok")), chromedp.KeyEvent(" "),
		chromedp.Focus(chromedp.ID("release-empty-ok")), chromedp.KeyEvent(" "),
		chromedp.Focus(chromedp.CSS(`form[action$="/release"] button`)), chromedp.KeyEvent(kb.Enter), chromedp.WaitVisible(chromedp.ID("h-reach")))
	p.wantText("main", "Released", "0 of 1 target sites have fetched the inquiry.", "never yet")
	p.check("inquiry-reach")
}
