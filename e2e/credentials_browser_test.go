package e2e

import (
	"crypto/rand"
	"crypto/rsa"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"fris.dev/pkg/identity"
)

// TestCredentialsBrowser walks the credential pages of issue 42 in
// Chromium, each checked with axe-core in light and dark mode: a stranger
// registers keys for three addresses. The operator sees the first marked
// in the users view, opens its credentials by keyboard, is asked to
// confirm a grant, and removes the key (German, 360 px). The second's
// owner, with a password an operator set, removes the unproven key on the
// account page by keyboard. The third's owner resets the password: the
// page names the removed key, and so does the account page.
func TestCredentialsBrowser(t *testing.T) {
	t.Parallel()
	p := newPage(t)
	s := explorerStack(t, Options{})
	grace := registerFreshKey(t, s, "grace@fris.test")
	hedy := registerFreshKey(t, s, "hedy@fris.test")
	ida := registerFreshKey(t, s, "ida@fris.test")
	s.AuthCLI(t, 0, "set-scopes", "-scopes", identity.ScopeOperator, demoEmail)

	// The operator.
	p.signIn(s)
	p.do("search the users", chromedp.Navigate(s.URL+"/explorer/operator/users?q=grace"), chromedp.WaitVisible(chromedp.CSS(`table.users`)))
	p.wantText("table.users tbody tr", grace.email, "unproven credentials")
	p.check("users-marked")
	p.do("open the user by keyboard", chromedp.Focus(chromedp.CSS(`a.user`)), chromedp.KeyEvent(kb.Enter), chromedp.WaitVisible(chromedp.CSS(`a.credentials`)))
	p.wantText("h1", grace.email, "unproven credentials")
	p.wantText("dl.facts", "some nobody has proven")
	p.do("open the credentials by keyboard", chromedp.Focus(chromedp.CSS(`a.credentials`)), chromedp.KeyEvent(kb.Enter),
		chromedp.WaitVisible(chromedp.CSS(`table#credentials`)))
	p.wantText(`table#credentials tr[data-unproven="true"]`, fmt.Sprint(grace.keyID), "registered without sign-in", "unproven")
	p.do("open the removal", chromedp.Click(chromedp.CSS(`table#credentials details.danger summary`)),
		chromedp.WaitVisible(chromedp.CSS(`form[action$="/credentials/remove"] button`)))
	p.check("operator-credentials")

	// A grant asks to be confirmed.
	p.do("back to the user", chromedp.Navigate(s.URL+"/explorer/operator/users/user?email="+grace.email), chromedp.WaitVisible(chromedp.CSS(`form[action$="/scopes"] button`)))
	p.do("grant a role", chromedp.Click(chromedp.CSS(`form[action$="/scopes"] label[for$="-role-broker:researcher"]`)),
		chromedp.Click(chromedp.CSS(`form[action$="/scopes"] button`)), chromedp.WaitVisible(chromedp.ID("grant-ok")))
	p.wantText("[role=alert]", "credentials nobody has proven")
	p.check("grant-confirm")

	// The removal, in German, on a phone-sized screen.
	p.do("open the credentials", chromedp.Navigate(s.URL+"/explorer/operator/users/credentials?lang=de&email="+grace.email),
		chromedp.WaitVisible(chromedp.CSS(`html[lang="de"]`)))
	p.do("a 360 px screen", chromedp.EmulateViewport(360, 740, chromedp.EmulateMobile))
	p.do("remove the key", chromedp.Click(chromedp.CSS(`table#credentials details.danger summary`)),
		chromedp.Click(chromedp.CSS(`form[action$="/credentials/remove"] input[name=confirm]`)),
		chromedp.Click(chromedp.CSS(`form[action$="/credentials/remove"] button`)), chromedp.WaitVisible(chromedp.CSS(`#op-status .done`)))
	p.wantText("#op-status", "jede Anmeldung des Benutzers ist beendet")
	if n := p.count(`table#credentials tr[data-kind="key"]`); n != 0 {
		t.Errorf("%d keys after the removal", n)
	}
	if width, err := chromedp.Run(p.ctx, chromedp.Evaluate[int](`document.documentElement.scrollWidth`)); err != nil || width > 360 {
		t.Errorf("the credentials page is %d px wide on a 360 px screen (%v)", width, err)
	}
	p.check("operator-credentials-removed-de-360px")
	p.do("a wide screen", chromedp.EmulateViewport(1280, 900))
	p.signOut()

	// Hedy, with a password an operator set, removes the key by keyboard.
	s.AuthCLI(t, 0, "set-password", "-password", "hedy's own horse", hedy.email)
	p.do("sign in as hedy", chromedp.Navigate(s.URL+"/explorer/login?return=%2Fexplorer%2Faccount&lang=en"), chromedp.WaitVisible(chromedp.ID("email")),
		chromedp.SendKeys(chromedp.ID("email"), hedy.email), chromedp.SendKeys(chromedp.ID("password"), "hedy's own horse"),
		chromedp.Click(chromedp.CSS("button[type=submit]")), chromedp.WaitVisible(chromedp.CSS(`table#credentials`)))
	p.wantText("#creds-heading", "Ways to sign in")
	p.wantText(`table#credentials tr[data-kind="key"]`, fmt.Sprint(hedy.keyID), "unproven", "registered without sign-in")
	p.wantText(`table#credentials tr[data-kind="password"]`, "by an operator")
	p.check("account-credentials")
	p.do("remove the key by keyboard", chromedp.Focus(chromedp.CSS(`table#credentials details.danger summary`)), chromedp.KeyEvent(kb.Enter),
		chromedp.WaitVisible(chromedp.CSS(`form[action="/explorer/account/credentials/remove"] button`)),
		chromedp.Focus(chromedp.CSS(`form[action="/explorer/account/credentials/remove"] button`)), chromedp.KeyEvent(kb.Enter))
	// An unproven key's removal ends every sign-in, this one's too: the
	// next page is the sign-in.
	p.do("wait for the sign-in", chromedp.WaitVisible(chromedp.ID("email")))
	if res, b := postJSON(t, s, oauth+"/sign_request", fmt.Sprintf(`{"keyId":%d}`, hedy.keyID)); res.StatusCode != 404 {
		t.Errorf("hedy's removed key: %d %v", res.StatusCode, b)
	}

	// Ida claims the account with a reset link.
	p.do("ask for a link", chromedp.Navigate(s.URL+"/oauth2/forgot?lang=en"), chromedp.WaitVisible(chromedp.ID("email")),
		chromedp.SendKeys(chromedp.ID("email"), ida.email), chromedp.Click(chromedp.CSS("button[type=submit]")), chromedp.WaitVisible(chromedp.CSS("[role=status]")))
	link := newResetLink(t, s, ida.email, 1)
	const pass = "ida's very own horse"
	p.do("set a password", chromedp.Navigate(s.URL+strings.TrimPrefix(link, Issuer)), chromedp.WaitVisible(chromedp.ID("password")),
		chromedp.SendKeys(chromedp.ID("password"), pass), chromedp.SendKeys(chromedp.ID("password2"), pass),
		chromedp.Click(chromedp.CSS("button[type=submit]")), chromedp.WaitVisible(chromedp.CSS("ul.removed")))
	p.wantText("ul.removed", fmt.Sprintf("Key %d", ida.keyID), "registered without sign-in")
	p.check("reset-removed")
	p.do("sign in as ida", chromedp.Navigate(s.URL+"/explorer/login?return=%2Fexplorer%2Faccount"), chromedp.WaitVisible(chromedp.ID("email")),
		chromedp.SendKeys(chromedp.ID("email"), ida.email), chromedp.SendKeys(chromedp.ID("password"), pass),
		chromedp.Click(chromedp.CSS("button[type=submit]")), chromedp.WaitVisible(chromedp.ID("creds-gone")))
	p.wantText("#creds-gone", "these ways to sign in were removed", fmt.Sprintf("Key %d", ida.keyID))
	p.do("switch to German", chromedp.Click(chromedp.CSS(`a[hreflang="de"]`)), chromedp.WaitVisible(chromedp.CSS(`html[lang="de"]`)))
	p.wantText("#creds-heading", "Anmeldewege")
	p.wantText("#creds-gone", "Schlüssel")
	p.check("account-removed-de")
}

// registerFreshKey is registerKeyUser with a key of its own (registering
// one key twice is 409).
func registerFreshKey(t *testing.T, s *Stack, email string) keyUser {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	u := keyUser{email: email, key: k}
	res, v := postJSON(t, s, oauth+"/register", fmt.Sprintf(`{"email":%q,"base64EncodedPublicKey":%q}`, email, spkiB64(t, &k.PublicKey)))
	wantStatus(t, res, v, 200)
	u.keyID = int(field(t, v, "keyId").(float64))
	return u
}
