package e2e

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestAccountBrowser walks the self-service pages in Chromium, checking
// each with axe-core in light and dark mode: the login page's "Forgot your
// password?" link, the request (German), the mailed link's page, signing in
// with the new password, the account page, changing the password there.
func TestAccountBrowser(t *testing.T) {
	t.Parallel()
	p := newPage(t)
	s := explorerStack(t, Options{})

	p.do("open the login page", chromedp.Navigate(s.URL+"/explorer/login?return=%2Fexplorer%2Faccount"), chromedp.WaitVisible(chromedp.ID("email")))
	p.do("follow the forgot link", chromedp.Click(chromedp.CSS(`a[href^="/oauth2/forgot"]`)), chromedp.WaitVisible(chromedp.ID("email")))
	p.wantText("h1", "Forgot your password?")
	p.check("forgot")
	p.do("switch to German", chromedp.Click(chromedp.CSS(`a[hreflang="de"]`)), chromedp.WaitVisible(chromedp.CSS(`html[lang="de"]`)))
	p.wantText("h1", "Passwort vergessen?")
	p.do("ask for a link", chromedp.SendKeys(chromedp.ID("email"), demoEmail), chromedp.Click(chromedp.CSS("button[type=submit]")),
		chromedp.WaitVisible(chromedp.CSS("[role=status]")))
	p.wantText("[role=status]", "Hat ein Konto diese Adresse")
	p.check("forgot-sent-de")

	link := newResetLink(t, s, demoEmail, 1)
	const newPass = "a brand new horse"
	p.do("open the mailed link", chromedp.Navigate(s.URL+strings.TrimPrefix(link, Issuer)), chromedp.WaitVisible(chromedp.ID("password")))
	p.wantText("main", demoEmail)
	p.check("reset-de")
	p.do("set the password", chromedp.SendKeys(chromedp.ID("password"), newPass), chromedp.SendKeys(chromedp.ID("password2"), newPass),
		chromedp.Click(chromedp.CSS("button[type=submit]")), chromedp.WaitVisible(chromedp.CSS("[role=status]")))
	p.wantText("h1", "Passwort geändert")
	p.check("reset-done-de")

	p.do("sign in with it", chromedp.Navigate(s.URL+"/explorer/login?return=%2Fexplorer%2Faccount"), chromedp.WaitVisible(chromedp.ID("email")),
		chromedp.SendKeys(chromedp.ID("email"), demoEmail), chromedp.SendKeys(chromedp.ID("password"), newPass),
		chromedp.Click(chromedp.CSS("button[type=submit]")), chromedp.WaitVisible(chromedp.ID("pw-current")))
	p.wantText("main", "Ihr Konto", demoEmail, "Wo Sie angemeldet sind", "dieser Browser")
	p.check("account-de")
	if shown, err := chromedp.Run(p.ctx, chromedp.Evaluate[bool](`document.querySelector('input[name=username]').offsetParent !== null`)); err != nil || shown {
		t.Errorf("the password manager's username field is shown (%v)", err)
	}

	p.do("change the password", chromedp.SendKeys(chromedp.ID("pw-current"), newPass), chromedp.SendKeys(chromedp.ID("pw-new"), "yet another horse"),
		chromedp.SendKeys(chromedp.ID("pw-new2"), "yet another horse"), chromedp.Click(chromedp.CSS(`form[action="/explorer/account/password"] button`)),
		chromedp.WaitVisible(chromedp.CSS(".done")))
	p.wantText(".done", "Ihr Passwort wurde geändert")
	p.do("open sign out everywhere", chromedp.Click(chromedp.CSS("details.danger summary")), chromedp.WaitVisible(chromedp.CSS(`form[action="/explorer/account/signout-everywhere"] button`)))
	p.check("account-changed-de")
}
