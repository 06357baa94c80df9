package e2e

import (
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"fris.dev/pkg/identity"
)

// clientToken asks for a client_credentials token: the status.
func clientToken(t *testing.T, s *Stack, id, secret string) int {
	t.Helper()
	res, _ := postJSON(t, s, oauth+"/token", fmt.Sprintf(`{"grant_type":"client_credentials","client_id":%q,"client_secret":%q}`, id, secret))
	return res.StatusCode
}

var secretRE = regexp.MustCompile(`<code id="client-secret">([^<]+)</code>`)

// TestExplorerClients: the clients and keys views over HTTP against the
// real services. A non-operator is refused on both; an operator creates a
// client (its secret, shown once, gets tokens), edits its redirect URLs,
// disables and enables it; rotates the signing key; auth audits each
// change with the operator as actor.
func TestExplorerClients(t *testing.T) {
	t.Parallel()
	s := explorerStack(t, Options{})
	researcher := signInHTTP(t, s)
	for _, p := range []string{"clients", "keys"} {
		if code, body := getPage(t, researcher, s.URL+"/explorer/operator/"+p); code != http.StatusForbidden ||
			!strings.Contains(body, "lacks the operator role (scope fris:operator)") {
			t.Fatalf("non-operator on %s: %d\n%s", p, code, body)
		}
	}

	s.AuthCLI(t, 0, "set-scopes", "-confirm", "-scopes", identity.ScopeOperator, demoEmail)
	op := userID(t, s, demoEmail)
	c := signInHTTP(t, s)
	code, body := getPage(t, c, s.URL+"/explorer/operator/clients")
	if code != 200 || !strings.Contains(body, "<code>"+explorerClient+"</code>") || !strings.Contains(body, "this Explorer") {
		t.Fatalf("clients: %d\n%s", code, body)
	}
	csrf := csrfRE.FindStringSubmatch(body)[1]
	post := func(path string, form url.Values) (int, string) {
		t.Helper()
		form.Set("csrf_token", csrf)
		res, err := c.PostForm(s.URL+"/explorer/operator/"+path, form)
		if err != nil {
			t.Fatal(err)
		}
		return res.StatusCode, readAll(t, res)
	}

	code, body = post("clients/create", url.Values{"client_id": {"lab-app"}, "name": {"Lab app"}, "type": {"MDR"}, "redirect_urls": {"https://lab.example/cb"}})
	m := secretRE.FindStringSubmatch(body)
	if code != 200 || m == nil || !strings.Contains(body, "The client lab-app is created.") {
		t.Fatalf("create: %d\n%s", code, body)
	}
	secret := m[1]
	waitAudit(t, s.Auth, "auth.admin.CreateClient", map[string]any{"actor": op, "client_id": "lab-app", "outcome": "success"})
	if st := clientToken(t, s, "lab-app", secret); st != 200 {
		t.Fatalf("the new client's token: %d", st)
	}
	if _, body := getPage(t, c, s.URL+"/explorer/operator/clients"); strings.Contains(body, secret) {
		t.Error("the list shows the secret again")
	}
	// auth's own check of a redirect URL, with its reason.
	if code, body := post("clients/update", url.Values{"client_id": {"lab-app"}, "name": {"Lab app"}, "redirect_urls": {"ftp://lab.example/cb"}}); code != http.StatusBadRequest ||
		!strings.Contains(body, "must be an absolute http(s) URL") {
		t.Errorf("a bad redirect URL: %d\n%s", code, body)
	}
	if code, body := post("clients/update", url.Values{"client_id": {"lab-app"}, "name": {"Lab app"}, "description": {"the lab's"}, "redirect_urls": {"https://lab.example/cb\nhttps://lab.example/cb2"}}); code != 200 ||
		!strings.Contains(body, "The client lab-app is saved.") || !strings.Contains(body, "<li><code>https://lab.example/cb2</code></li>") {
		t.Fatalf("update: %d\n%s", code, body)
	}
	waitAudit(t, s.Auth, "auth.admin.UpdateClient", map[string]any{"actor": op, "client_id": "lab-app", "outcome": "success"})
	if out := s.AuthCLI(t, 0, "clients"); !strings.Contains(out, "https://lab.example/cb,https://lab.example/cb2") {
		t.Errorf("auth's list after the update:\n%s", out)
	}

	if code, _ := post("clients/disable", url.Values{"client_id": {"lab-app"}}); code != http.StatusBadRequest {
		t.Errorf("disable unconfirmed: %d", code)
	}
	if code, body := post("clients/disable", url.Values{"client_id": {"lab-app"}, "confirm": {"yes"}}); code != 200 || !strings.Contains(body, "The client lab-app is disabled.") {
		t.Fatalf("disable: %d\n%s", code, body)
	}
	waitAudit(t, s.Auth, "auth.admin.SetClientDisabled", map[string]any{"actor": op, "client_id": "lab-app", "disabled": "true", "outcome": "success"})
	if st := clientToken(t, s, "lab-app", secret); st == 200 {
		t.Error("a disabled client got a token")
	}
	if code, body := post("clients/enable", url.Values{"client_id": {"lab-app"}}); code != 200 || !strings.Contains(body, "The client lab-app is enabled.") {
		t.Fatalf("enable: %d\n%s", code, body)
	}
	// A new secret that also ends the tokens issued so far (a leak).
	res, v := postJSON(t, s, oauth+"/token", fmt.Sprintf(`{"grant_type":"client_credentials","client_id":"lab-app","client_secret":%q}`, secret))
	wantStatus(t, res, v, 200)
	before, _ := v.(map[string]any)["access_token"].(string)
	code, body = post("clients/rotate-secret", url.Values{"client_id": {"lab-app"}, "confirm": {"yes"}, "revoke": {"yes"}})
	m = secretRE.FindStringSubmatch(body)
	if code != 200 || m == nil || m[1] == secret {
		t.Fatalf("rotate: %d\n%s", code, body)
	}
	old := secret
	secret = m[1]
	waitAudit(t, s.Auth, "auth.admin.RotateClientSecret", map[string]any{"actor": op, "client_id": "lab-app", "revoke_tokens": "true", "outcome": "success"})
	if st := clientToken(t, s, "lab-app", old); st == 200 {
		t.Error("the old secret still gets a token")
	}
	res, v = postForm(t, s, oauth+"/introspect", url.Values{"token": {before}}, "lab-app", secret)
	wantStatus(t, res, v, 200)
	if active := v.(map[string]any)["active"]; active != false {
		t.Errorf("a token of the old secret after the rotation with revoke: active %v", active)
	}

	// The Explorer's own client is not disabled from the Explorer.
	if code, body := post("clients/disable", url.Values{"client_id": {explorerClient}, "confirm": {"yes"}}); code != http.StatusBadRequest || !strings.Contains(body, "the client the Explorer signs in with") {
		t.Errorf("disabling the Explorer's client: %d\n%s", code, body)
	}

	// Keys: one active key per algorithm (RS256, ES256, EdDSA); rotate
	// needs the confirmation; then a new key of each signs.
	code, body = getPage(t, c, s.URL+"/explorer/operator/keys")
	if code != 200 || strings.Count(body, `data-state="active"`) != 3 || !strings.Contains(body, "<dd>ES256</dd>") || !strings.Contains(body, "<dd>EdDSA</dd>") {
		t.Fatalf("keys: %d\n%s", code, body)
	}
	if code, _ := post("keys/rotate", url.Values{}); code != http.StatusBadRequest {
		t.Errorf("rotate unconfirmed: %d", code)
	}
	code, body = post("keys/rotate", url.Values{"confirm": {"yes"}})
	if code != 200 || !strings.Contains(body, "New keys sign from now on") || !strings.Contains(body, `data-state="published"`) {
		t.Fatalf("rotate: %d\n%s", code, body)
	}
	waitAudit(t, s.Auth, "auth.admin.RotateKeys", map[string]any{"actor": op, "outcome": "success"})
	kid := regexp.MustCompile(`the RSA key is (\S+)\.<`).FindStringSubmatch(body)[1]
	res, v = postJSON(t, s, oauth+"/token", fmt.Sprintf(`{"grant_type":"client_credentials","client_id":"lab-app","client_secret":%q}`, secret))
	wantStatus(t, res, v, 200)
	access, _ := v.(map[string]any)["access_token"].(string)
	if got, _ := jwtPart(t, access, 0).(map[string]any)["kid"].(string); got != kid {
		t.Errorf("a token after the rotation is signed by %q, want %q", got, kid)
	}

	// bin/auth's counterparts: a flag left out keeps its value; a new
	// secret is printed once and the old one refused.
	s.AuthCLI(t, 0, "update-client", "-name", "Lab app (CLI)", "lab-app")
	if out := s.AuthCLI(t, 0, "clients"); !strings.Contains(out, "Lab app (CLI)") || !strings.Contains(out, "https://lab.example/cb,https://lab.example/cb2") {
		t.Errorf("auth's list after update-client:\n%s", out)
	}
	out := s.AuthCLI(t, 0, "rotate-client-secret", "lab-app")
	fresh := regexp.MustCompile(`client_secret=(\S+)`).FindStringSubmatch(out)
	if fresh == nil {
		t.Fatalf("rotate-client-secret printed:\n%s", out)
	}
	if st := clientToken(t, s, "lab-app", secret); st == 200 {
		t.Error("the secret before rotate-client-secret still gets a token")
	}
	if st := clientToken(t, s, "lab-app", fresh[1]); st != 200 {
		t.Errorf("the secret of rotate-client-secret: %d", st)
	}
}

// TestExplorerClientsBrowser: in Chromium, an operator rotates a client's
// secret (the browser holds the form back until the confirmation is
// ticked); the page shows the new secret once; the old secret is refused
// at the token endpoint and the new one gets a token. The signing key is
// rotated by keyboard only. Both views pass axe-core, light and dark, in
// English, in German and on a phone-sized screen, and a non-operator sees
// the reason.
func TestExplorerClientsBrowser(t *testing.T) {
	t.Parallel()
	p := newPage(t)
	s := explorerStack(t, Options{})
	out := s.AuthCLI(t, 0, "create-client", "-client-id", "lab-app", "-name", "Lab app", "-type", "MDR", "-redirect-url", "https://lab.example/cb")
	old := regexp.MustCompile(`client_secret=(\S+)`).FindStringSubmatch(out)[1]
	if st := clientToken(t, s, "lab-app", old); st != 200 {
		t.Fatalf("the first secret: %d", st)
	}

	// Not an operator yet: the reason, on both pages.
	p.signIn(s)
	for _, path := range []string{"clients", "keys"} {
		p.do("a non-operator opens "+path, chromedp.Navigate(s.URL+"/explorer/operator/"+path), chromedp.WaitVisible(chromedp.CSS("main")))
		p.wantText("main", "lacks the operator role (scope fris:operator)")
	}
	p.signOut()

	s.AuthCLI(t, 0, "set-scopes", "-confirm", "-scopes", identity.ScopeOperator, demoEmail)
	p.signIn(s)
	li := `li[data-client="lab-app"]`
	p.do("open the clients view", chromedp.Navigate(s.URL+"/explorer/operator/clients"), chromedp.WaitVisible(chromedp.ID("clients-heading")))
	p.wantText(li+" h3", "Lab app", "lab-app")
	p.check("operator-clients")
	p.do("open the rotation", chromedp.Click(chromedp.CSS(li+` details.danger summary`)),
		chromedp.WaitVisible(chromedp.CSS(li+` form[action$="/rotate-secret"] button`)))
	p.do("rotate unconfirmed", chromedp.Click(chromedp.CSS(li+` form[action$="/rotate-secret"] button`)))
	if valid, err := chromedp.Run(p.ctx, chromedp.Evaluate[bool](`document.querySelector('`+li+` form[action$="/rotate-secret"]').checkValidity()`)); err != nil || valid {
		t.Errorf("the unconfirmed rotation form is valid (%v)", err)
	}
	p.do("confirm and rotate", chromedp.Click(chromedp.CSS(li+` form[action$="/rotate-secret"] input[name=confirm]`)),
		chromedp.Click(chromedp.CSS(li+` form[action$="/rotate-secret"] button`)),
		chromedp.WaitVisible(chromedp.ID("client-secret")))
	p.wantText("#op-status", "The client lab-app has a new secret")
	fresh := p.text("#client-secret")
	if fresh == "" || fresh == old {
		t.Fatalf("the new secret %q", fresh)
	}
	p.check("operator-clients-secret")

	if st := clientToken(t, s, "lab-app", old); st == 200 {
		t.Error("the old secret still gets a token")
	}
	if st := clientToken(t, s, "lab-app", fresh); st != 200 {
		t.Errorf("the new secret: %d", st)
	}
	waitAudit(t, s.Auth, "auth.admin.RotateClientSecret", map[string]any{"actor": userID(t, s, demoEmail), "client_id": "lab-app", "outcome": "success"})

	// Shown once: the list no longer has it.
	p.do("back to the list", chromedp.Navigate(s.URL+"/explorer/operator/clients"), chromedp.WaitVisible(chromedp.ID("clients-heading")))
	if n := p.count("#client-secret"); n != 0 {
		t.Error("the list shows a secret")
	}

	p.do("open the keys view by its tab", chromedp.Click(chromedp.CSS(`.optabs a[href="/explorer/operator/keys"]`)), chromedp.WaitVisible(chromedp.ID("keys-heading")))
	if n := p.count(`li[data-state="active"]`); n != 3 {
		t.Errorf("%d active keys, want one per algorithm", n)
	}
	p.check("operator-keys")
	// By keyboard only: open the disclosure, tick the confirmation, send.
	p.do("rotate the key by keyboard", chromedp.Focus(chromedp.CSS(`details.danger summary`)), chromedp.KeyEvent(kb.Enter),
		chromedp.WaitVisible(chromedp.ID("keys-rotate-ok")), chromedp.KeyEvent(kb.Tab), chromedp.KeyEvent(" "),
		chromedp.KeyEvent(kb.Tab), chromedp.KeyEvent(kb.Enter),
		chromedp.WaitVisible(chromedp.CSS(`#op-status .done[data-done="rotated"]`)))
	if n := p.count(`li[data-state="published"]`); n != 3 {
		t.Errorf("%d retired keys still published after the rotation, want one per algorithm", n)
	}

	p.do("switch to German", chromedp.Click(chromedp.CSS(`a[hreflang="de"]`)), chromedp.WaitVisible(chromedp.CSS(`html[lang="de"]`)))
	p.wantText("h1", "Signaturschlüssel")
	p.wantText(`li[data-state="active"] h3`, "aktiv: signiert neue Tokens")
	p.check("operator-keys-de")

	// Last, as the emulation stays: a phone-sized screen.
	p.do("a 360 px screen", chromedp.EmulateViewport(360, 740, chromedp.EmulateMobile))
	for _, path := range []string{"clients", "keys"} {
		p.do("open "+path, chromedp.Navigate(s.URL+"/explorer/operator/"+path), chromedp.WaitVisible(chromedp.ID(path+"-heading")))
		if path == "clients" {
			p.do("open the editing", chromedp.Click(chromedp.CSS(li+` details:not(.danger) summary`)), chromedp.WaitVisible(chromedp.CSS(li+` form[action$="/update"] button`)))
		}
		width, err := chromedp.Run(p.ctx, chromedp.Evaluate[int](`document.documentElement.scrollWidth`))
		if err != nil {
			t.Fatal(err)
		}
		if width > 360 {
			t.Errorf("the %s page is %d px wide on a 360 px screen", path, width)
		}
		p.check("operator-" + path + "-360px")
	}
}
