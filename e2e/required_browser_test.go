package e2e

import (
	"net/url"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"fris.dev/pkg/identity"
)

// TestRequiredActionsBrowser: in Chromium, an operator sets a temporary
// password on a user's page (a disclosure and a confirmation, by
// keyboard) and reads it once; the user signs in with it in German, is
// led to the new-password page, a short one is refused with the rule, and
// a good one signs in. axe-core checks every page, light and dark.
func TestRequiredActionsBrowser(t *testing.T) {
	t.Parallel()
	p := newPage(t)
	s := explorerStack(t, Options{})
	s.AuthCLI(t, 0, "set-scopes", "-confirm", "-scopes", identity.ScopeOperator, demoEmail)
	s.AuthCLI(t, 0, "create-user", "-email", graceEmail, "-password", gracePass, "-name", "Grace Hopper", "-email-verified")

	p.do("sign in", chromedp.Navigate(s.URL+"/explorer/login?return="+url.QueryEscape("/explorer/operator/users/user?email="+url.QueryEscape(graceEmail))),
		chromedp.WaitVisible(chromedp.ID("email")),
		chromedp.SendKeys(chromedp.ID("email"), demoEmail), chromedp.SendKeys(chromedp.ID("password"), demoPass+kb.Enter),
		chromedp.WaitVisible(chromedp.ID("user-required")))
	p.check("user-required-actions")
	p.do("open the temporary password", chromedp.Click(chromedp.CSS(`details:has(form.temppw) summary`)),
		chromedp.WaitVisible(chromedp.ID("user-temp-ok")))
	p.do("confirm by keyboard", chromedp.Focus(chromedp.ID("user-temp-ok")), chromedp.KeyEvent(" "), chromedp.KeyEvent(kb.Tab), chromedp.KeyEvent(kb.Enter),
		chromedp.WaitVisible(chromedp.ID("temp-password")))
	p.wantText("main", "must choose a new password at the next sign-in")
	temp := p.text("#temp-password")
	if len(temp) < 20 {
		t.Fatalf("temporary password %q", temp)
	}
	p.check("user-temporary-password")
	p.do("sign out", chromedp.Click(chromedp.CSS(`form[action="/explorer/logout"] button`)), chromedp.WaitVisible(chromedp.CSS(`header a.button`)))

	p.do("open the login page", chromedp.Navigate(s.URL+"/explorer/login?return=%2Fexplorer%2F"), chromedp.WaitVisible(chromedp.ID("email")))
	p.do("switch to German", chromedp.Click(chromedp.CSS(`a[hreflang="de"]`)), chromedp.WaitVisible(chromedp.CSS(`html[lang="de"]`)))
	p.do("the temporary password", chromedp.SendKeys(chromedp.ID("email"), graceEmail), chromedp.SendKeys(chromedp.ID("password"), temp+kb.Enter),
		chromedp.WaitVisible(chromedp.ID("required_new_password")))
	p.wantText("h1", "Neues Passwort wählen")
	p.check("required-change-de")
	// The field's minlength would stop the browser first: the server's
	// refusal is what is checked.
	if _, err := chromedp.Run(p.ctx, chromedp.Evaluate[bool](`document.querySelectorAll('input[minlength]').forEach(e => e.removeAttribute('minlength')), true`)); err != nil {
		t.Fatal(err)
	}
	p.do("a short one", chromedp.SendKeys(chromedp.ID("required_new_password"), "kurz"), chromedp.SendKeys(chromedp.ID("required_new_password2"), "kurz"),
		chromedp.Click(chromedp.CSS("main form button[type=submit]")), chromedp.WaitVisible(chromedp.ID("change-error")))
	p.wantText("#change-error", "mindestens 12 Zeichen")
	p.check("required-change-refused-de")
	p.do("a good one", chromedp.SendKeys(chromedp.ID("required_new_password"), "graces eigene Passphrase"),
		chromedp.SendKeys(chromedp.ID("required_new_password2"), "graces eigene Passphrase"+kb.Enter),
		chromedp.WaitVisible(chromedp.CSS(`form[action="/explorer/logout"]`)))
	p.wantText("header", "Grace Hopper")
}
