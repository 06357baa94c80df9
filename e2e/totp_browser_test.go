package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/pquerna/otp/totp"
)

// TestTOTPBrowser: in Chromium, the demo user adds an authenticator app on
// the account page by keyboard (English), its recovery codes shown once,
// the page checked on a 360 px screen; signs out, and signs in again in
// German: the password leads to the second step, a wrong code is refused,
// the code computed from the key signs in. axe-core checks every page,
// light and dark.
func TestTOTPBrowser(t *testing.T) {
	t.Parallel()
	p := newPage(t)
	s := explorerStack(t, Options{})

	p.do("sign in", chromedp.Navigate(s.URL+"/explorer/login?return=%2Fexplorer%2Faccount"), chromedp.WaitVisible(chromedp.ID("email")),
		chromedp.SendKeys(chromedp.ID("email"), demoEmail), chromedp.SendKeys(chromedp.ID("password"), demoPass),
		chromedp.Click(chromedp.CSS("main form button[type=submit]")), chromedp.WaitVisible(chromedp.ID("totp-heading")))
	p.do("add an authenticator app by keyboard", chromedp.Focus(chromedp.ID("totp-pw")), chromedp.SendKeys(chromedp.ID("totp-pw"), demoPass+kb.Tab),
		chromedp.KeyEvent(kb.Enter), chromedp.WaitVisible(chromedp.ID("totp-secret")))
	p.wantText("section[aria-labelledby=totp-heading]", "Add this key to your authenticator app")
	secret := p.text("#totp-secret")
	if uri, err := chromedp.Run(p.ctx, chromedp.Evaluate[string](`document.getElementById('totp-uri').getAttribute('href')`)); err != nil ||
		!strings.HasPrefix(uri, "otpauth://totp/") || !strings.Contains(uri, "secret="+secret) {
		t.Fatalf("otpauth link %q (%v)", uri, err)
	}
	p.check("account-totp-key")
	code, err := totp.GenerateCode(secret, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	p.do("enter the first code", chromedp.Focus(chromedp.ID("totp-code")), chromedp.SendKeys(chromedp.ID("totp-code"), code+kb.Enter),
		chromedp.WaitVisible(chromedp.ID("recovery-codes")))
	p.wantText("#totp-done", "Your authenticator app is now your second factor")
	if n := p.count("#recovery-codes li"); n != 10 {
		t.Errorf("%d recovery codes shown, want 10", n)
	}
	p.check("account-totp-added")
	p.do("a 360 px screen", chromedp.EmulateViewport(360, 740, chromedp.EmulateMobile))
	if width, err := chromedp.Run(p.ctx, chromedp.Evaluate[int](`document.documentElement.scrollWidth`)); err != nil || width > 360 {
		t.Errorf("the account page is %d px wide on a 360 px screen (%v)", width, err)
	}
	p.check("account-totp-added-360px")
	p.do("a wide screen", chromedp.EmulateViewport(1280, 900))

	p.do("sign out", chromedp.Click(chromedp.CSS(`form[action="/explorer/logout"] button`)), chromedp.WaitVisible(chromedp.CSS(`header a.button`)))
	p.do("open the login page", chromedp.Navigate(s.URL+"/explorer/login?return=%2Fexplorer%2Faccount"), chromedp.WaitVisible(chromedp.ID("email")))
	p.do("switch to German", chromedp.Click(chromedp.CSS(`a[hreflang="de"]`)), chromedp.WaitVisible(chromedp.CSS(`html[lang="de"]`)))
	p.do("the password", chromedp.SendKeys(chromedp.ID("email"), demoEmail), chromedp.SendKeys(chromedp.ID("password"), demoPass+kb.Enter),
		chromedp.WaitVisible(chromedp.ID("second_factor_code")))
	p.wantText("h1", "Anmeldung in zwei Schritten")
	p.check("second-factor-de")
	p.do("a wrong code", chromedp.SendKeys(chromedp.ID("second_factor_code"), "000000x"+kb.Enter), chromedp.WaitVisible(chromedp.ID("second-error")))
	p.wantText("#second-error", "Der Code ist falsch")
	p.check("second-factor-wrong-de")
	next, err := totp.GenerateCode(secret, time.Now().Add(30*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	p.do("the right code", chromedp.SendKeys(chromedp.ID("second_factor_code"), next+kb.Enter), chromedp.WaitVisible(chromedp.ID("totp-heading")))
	p.wantText("main", "Ihr Konto", demoEmail)
	p.wantText("table#credentials", "Authenticator-App (zweiter Faktor)")
	p.do("open the factor's removal", chromedp.Click(chromedp.CSS(`table#credentials tr[data-kind="totp"] details.danger summary`)),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-kind="totp"] input[name=proof]`)))
	p.check("account-totp-de")
}
