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
	p := newPage(t)
	s := explorerStack(t, Options{})
	s.AuthCLI(t, 0, "set-scopes", "-scopes", "broker:researcher", demoEmail)

	p.do("sign in", chromedp.Navigate(s.URL+"/explorer/inquiries/new"), chromedp.WaitVisible(chromedp.ID("email")),
		chromedp.SendKeys(chromedp.ID("email"), demoEmail), chromedp.SendKeys(chromedp.ID("password"), demoPass),
		chromedp.Click(chromedp.CSS("button[type=submit]")), chromedp.WaitVisible(chromedp.ID("cat")))
	p.do("mark the page", chromedp.Evaluate[chromedp.Void](`window.__sameDocument = true`))

	const (
		sex    = "urn:mdr16:dataelement:23:1"
		age    = "urn:mdr16:dataelement:14:1"
		donor  = "urn:mdr16:dataelementgroup:5:1"
		sample = "urn:mdr16:dataelementgroup:3:1"
	)
	el := func(urn string) string { return `#cat details[data-urn="` + urn + `"]` }
	p.do("open Donor and Sex", chromedp.Click(chromedp.CSS(el(donor)+" > summary")), chromedp.WaitVisible(chromedp.CSS(el(sex)+" > summary")),
		chromedp.Click(chromedp.CSS(el(sex)+" > summary")), chromedp.WaitVisible(chromedp.CSS(el(sex)+` input[value=female]`)))
	p.do("tick two values and add", chromedp.Click(chromedp.CSS(el(sex)+` input[value=female]`)), chromedp.Click(chromedp.CSS(el(sex)+` input[value=male]`)),
		chromedp.Click(chromedp.CSS(el(sex)+` button[data-cat-add]`)),
		chromedp.WaitVisible(chromedp.CSS(`.qb-conds input[type=checkbox][value=male]:checked`)))
	p.wantText("#qb-status", "Condition on Sex added.")
	p.do("open Sample and Donor age, give a range and add", chromedp.Click(chromedp.CSS(el(sample)+" > summary")), chromedp.Click(chromedp.CSS(el(age)+" > summary")),
		chromedp.SendKeys(chromedp.CSS(el(age)+` input[name$=".from"]`), "18"), chromedp.SendKeys(chromedp.CSS(el(age)+` input[name$=".to"]`), "65"),
		chromedp.Click(chromedp.CSS(el(age)+` button[data-cat-add]`)),
		chromedp.Poll[chromedp.Void](`[...document.querySelectorAll('.qb-conds input[name$=".to"]')].some(i => i.value === "65")`, chromedp.WithPollingTimeout(10*time.Second)))
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

	p.do("see the chips", chromedp.Click(chromedp.CSS(`#qb-xml-box summary`)), chromedp.Click(chromedp.CSS(`#qb-xml-box button`)),
		chromedp.WaitVisible(chromedp.CSS(`#qb-preview .ok`)))
	p.wantText("#qb-words", "Sex", "Female", "Male", "Donor age: 18–65")
	same, err := chromedp.Run(p.ctx, chromedp.Evaluate[bool](`window.__sameDocument === true`))
	if err != nil || !same {
		t.Fatalf("the page reloaded (%v)", err)
	}

	p.do("save", chromedp.SendKeys(chromedp.ID("label"), "From the catalogue"), chromedp.Click(chromedp.CSS(`input[name=site][value=charite]`)),
		chromedp.Click(chromedp.CSS(`form.inquiry .actions button[type=submit]`)), chromedp.WaitVisible(chromedp.CSS(`form[action$="/release"]`)))
	p.wantText("main", "From the catalogue", "Sex", "Female", "Donor age: 18–65")

	// With no group left, the catalogue's button sends the form, which
	// comes back with a new group holding the condition.
	p.do("a new form without groups", chromedp.Navigate(s.URL+"/explorer/inquiries/new"), chromedp.WaitVisible(chromedp.ID("cat")),
		chromedp.Click(chromedp.CSS(`#qb-groups [data-group] [data-remove]`)), chromedp.WaitNotPresent(chromedp.CSS(`#qb-groups [data-group]`)),
		chromedp.Click(chromedp.CSS(el(donor)+" > summary")), chromedp.Click(chromedp.CSS(el(sex)+" > summary")),
		chromedp.Click(chromedp.CSS(el(sex)+` input[value=female]`)), chromedp.Click(chromedp.CSS(el(sex)+` button[data-cat-add]`)),
		chromedp.WaitVisible(chromedp.CSS(`#qb-groups [data-group] .qb-conds input[type=checkbox][value=female]:checked`)))
}
