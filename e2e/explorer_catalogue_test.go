package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestExplorerCatalogue: a researcher builds a query from the criteria
// catalogue in a real browser: opens the Donor group, ticks two values of
// Sex, gives Donor age a range, all without a reload; the element search
// finds by words ("age" is no Manager or Storage temperature) and closes
// after a pick; a condition is removed; the chips say the query; axe finds
// nothing serious with the catalogue open, light and dark; the draft is
// saved with the query.
func TestExplorerCatalogue(t *testing.T) {
	t.Parallel()
	p := newPage(t)
	s := explorerStack(t, Options{})
	s.AuthCLI(t, 0, "set-scopes", "-confirm", "-scopes", "broker:researcher", demoEmail)

	p.signInToBuilder(s)
	p.markDocument()
	p.addSexFromCatalogue("female", "male")
	p.addAgeFromCatalogue("18", "65")
	if v := attr(p, `.qb-conds input[type=checkbox][value=female]`, "checked"); v == "" {
		if on, _ := chromedp.Run(p.ctx, chromedp.Evaluate[bool](`document.querySelector('.qb-conds input[type=checkbox][value=female]').checked`)); !on {
			t.Error("female is not ticked in the builder")
		}
	}
	p.check("inquiry-catalogue")

	// The search: whole words and prefixes; the list closes after a pick.
	p.do("search age", chromedp.SendKeys(chromedp.CSS(`.qb-find input[type=search]`), "age"),
		chromedp.WaitVisible(chromedp.CSS(`.qb-found button[hx-get*="dataelement%3A14%3A1"]`)),
		chromedp.Poll[chromedp.Void](`!document.querySelector(".htmx-request")`), chromedp.Sleep(500*time.Millisecond))
	found := p.text(".qb-found")
	for _, not := range []string{"Manager", "Storage temperature"} {
		if strings.Contains(found, not) {
			t.Errorf("age finds %q: %q", not, found)
		}
	}
	p.do("pick Donor age", chromedp.Click(chromedp.CSS(`.qb-found button[hx-get*="dataelement%3A14%3A1"]`)),
		chromedp.WaitNotPresent(chromedp.CSS(`.qb-found`)))
	if v, _ := chromedp.Run(p.ctx, chromedp.Evaluate[string](`document.querySelector(".qb-find input[type=search]").value`)); v != "" {
		t.Errorf("the search keeps %q after a pick", v)
	}
	p.do("remove the third condition", chromedp.Click(chromedp.CSS(`.qb-conds > li:nth-child(3) [data-remove]`)),
		chromedp.Poll[chromedp.Void](`document.querySelectorAll(".qb-conds > li").length === 2`, chromedp.WithPollingTimeout(10*time.Second)))

	p.previewQuery()
	p.wantText("#qb-words", "Sex", "Female", "Male", "Donor age: 18–65")
	p.wantSameDocument()

	p.do("save", chromedp.SendKeys(chromedp.ID("label"), "From the catalogue"), chromedp.Click(chromedp.CSS(`input[name=site][value=charite]`)),
		chromedp.Click(chromedp.CSS(`form.inquiry .actions button[type=submit]`)), chromedp.WaitVisible(chromedp.CSS(`form[action$="/release"]`)))
	p.wantText("main", "From the catalogue", "Sex", "Female", "Donor age: 18–65")

	// With no group left, the catalogue's button sends the form, which
	// comes back with a new group holding the condition.
	p.do("a new form without groups", chromedp.Navigate(s.URL+"/explorer/inquiries/new"), chromedp.WaitVisible(chromedp.ID("cat")),
		chromedp.Click(chromedp.CSS(`#qb-groups [data-group] [data-remove]`)), chromedp.WaitNotPresent(chromedp.CSS(`#qb-groups [data-group]`)),
		chromedp.Click(chromedp.CSS(catEl(catDonor)+" > summary")), chromedp.Click(chromedp.CSS(catEl(catSex)+" > summary")),
		chromedp.Click(chromedp.CSS(catEl(catSex)+` input[value=female]`)), chromedp.Click(chromedp.CSS(catEl(catSex)+` button[data-cat-add]`)),
		chromedp.WaitVisible(chromedp.CSS(`#qb-groups [data-group] .qb-conds input[type=checkbox][value=female]:checked`)))
}

// The demo registry's catalogue entries the browser tests pick from.
const (
	catSex    = "urn:mdr16:dataelement:23:1"
	catAge    = "urn:mdr16:dataelement:14:1"
	catDonor  = "urn:mdr16:dataelementgroup:5:1"
	catSample = "urn:mdr16:dataelementgroup:3:1"
)

// catEl selects the catalogue's entry for urn.
func catEl(urn string) string { return `#cat details[data-urn="` + urn + `"]` }

// signInToBuilder signs the demo user in and opens the query builder
// with its catalogue.
func (p *page) signInToBuilder(s *Stack) {
	p.t.Helper()
	p.signIn(s)
	p.do("open the builder", chromedp.Navigate(s.URL+"/explorer/inquiries/new"), chromedp.WaitVisible(chromedp.ID("cat")))
}

// addSexFromCatalogue opens Donor and Sex in the catalogue, ticks values
// and adds the condition.
func (p *page) addSexFromCatalogue(values ...string) {
	p.t.Helper()
	p.do("open Donor and Sex", chromedp.Click(chromedp.CSS(catEl(catDonor)+" > summary")), chromedp.WaitVisible(chromedp.CSS(catEl(catSex)+" > summary")),
		chromedp.Click(chromedp.CSS(catEl(catSex)+" > summary")), chromedp.WaitVisible(chromedp.CSS(catEl(catSex)+` input[value=female]`)))
	var ticks []chromedp.Action[chromedp.Void]
	for _, v := range values {
		ticks = append(ticks, chromedp.Click(chromedp.CSS(catEl(catSex)+` input[value=`+v+`]`)))
	}
	p.do("tick values and add", append(ticks, chromedp.Click(chromedp.CSS(catEl(catSex)+` button[data-cat-add]`)),
		chromedp.WaitVisible(chromedp.CSS(`.qb-conds input[type=checkbox][value=`+values[len(values)-1]+`]:checked`)))...)
	p.wantText("#qb-status", "Condition on Sex added.")
}

// addAgeFromCatalogue opens Sample and Donor age in the catalogue, gives
// the range and adds the condition.
func (p *page) addAgeFromCatalogue(from, to string) {
	p.t.Helper()
	p.do("open Sample and Donor age, give a range and add", chromedp.Click(chromedp.CSS(catEl(catSample)+" > summary")), chromedp.Click(chromedp.CSS(catEl(catAge)+" > summary")),
		chromedp.SendKeys(chromedp.CSS(catEl(catAge)+` input[name$=".from"]`), from), chromedp.SendKeys(chromedp.CSS(catEl(catAge)+` input[name$=".to"]`), to),
		chromedp.Click(chromedp.CSS(catEl(catAge)+` button[data-cat-add]`)),
		chromedp.Poll[chromedp.Void](`[...document.querySelectorAll('.qb-conds input[name$=".to"]')].some(i => i.value === "`+to+`")`, chromedp.WithPollingTimeout(10*time.Second)))
}

// previewQuery asks the builder for its preview, which brings the chips
// up to date, and waits for the registry's approval.
func (p *page) previewQuery() {
	p.t.Helper()
	p.do("see the chips", chromedp.Evaluate[chromedp.Void](`document.querySelector("#qb-xml-box").open = true`), chromedp.Click(chromedp.CSS(`#qb-xml-box button`)),
		chromedp.WaitVisible(chromedp.CSS(`#qb-preview .ok`)))
}

// markDocument marks the page's document: a reload loses the mark.
func (p *page) markDocument() {
	p.t.Helper()
	p.do("mark the page", chromedp.Evaluate[chromedp.Void](`window.__sameDocument = true`))
}

// wantSameDocument fails the test if the page reloaded since markDocument.
func (p *page) wantSameDocument() {
	p.t.Helper()
	if same, err := chromedp.Run(p.ctx, chromedp.Evaluate[bool](`window.__sameDocument === true`)); err != nil || !same {
		p.t.Fatalf("the page reloaded (%v)", err)
	}
}
