package e2e

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestExplorerResearchJourney is the researcher's journey of issue 32 in
// one browser session, under -min-count 5: build a query from the
// catalogue with "is not" (Sex: none of one value) and "has any value"
// (Donor age), set by each condition's operator; see it in chips; save;
// release with the confirmation; the two sites' connectors reply (a Reply
// document with stratifications in ISO-8859-1, a plain 3); without a
// reload the page shows donors and samples per site, the stratified chart
// and "< 5"; the CSV fetched in the page and the researcher API hold the
// same per-site counts and strata; axe-core finds nothing serious on the
// builder and the results, light and dark.
func TestExplorerResearchJourney(t *testing.T) {
	t.Parallel()
	p := newPage(t)
	s, charite, dresden := inquiryStack(t, "-min-count", "5")

	p.signInToBuilder(s)
	p.markDocument()
	op := func(urn string) string { return `.qb-conds li:has(input[value="` + urn + `"]) select[name$=".op"]` }
	p.addSexFromCatalogue("male")
	p.do("Sex is none of", chromedp.SetValue(chromedp.CSS(op(catSex)), "notin"))
	p.addAgeFromCatalogue("18", "65")
	p.do("Donor age has any value", chromedp.SetValue(chromedp.CSS(op(catAge)), "any"))
	p.previewQuery()
	chips := []string{"Sex is not Male", "Donor age has any value"}
	p.wantText("#qb-words", chips...)
	p.wantText("#qb-preview", "<Neq>", "<IsNotNull>")
	p.wantSameDocument()
	p.check("journey-builder")

	p.do("save", chromedp.SendKeys(chromedp.ID("label"), "Research journey"),
		chromedp.Click(chromedp.CSS(`input[name=site][value=charite]`)), chromedp.Click(chromedp.CSS(`input[name=site][value=dresden]`)),
		chromedp.Click(chromedp.CSS(`form.inquiry .actions button[type=submit]`)), chromedp.WaitVisible(chromedp.CSS(`form[action$="/release"]`)))
	p.wantText("main", append([]string{"Research journey", "Draft"}, chips...)...)
	id := strings.TrimPrefix(p.location(), s.URL+"/explorer/inquiries/")
	p.do("release it", chromedp.Click(chromedp.ID("release-ok")), chromedp.Click(chromedp.CSS(`form[action$="/release"] button`)),
		chromedp.WaitVisible(chromedp.CSS(`#results[data-updated]`)))
	p.wantText("main", "Released", "0 of 2 sites answered")
	p.markDocument()

	replyStrata(t, s, id, charite, dresden)
	p.wantStrata()
	p.check("journey-results")
	p.wantStrataCSV(id)
	wantStrataAPI(t, s, id)
}
