package e2e

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/webauthn"
	"github.com/chromedp/chromedp"

	"fris.dev/pkg/identity"
)

// passkeyStack is an Explorer stack the browser reaches as localhost (a
// passkey needs a domain, never an IP address): the gateway listens on a
// port chosen first, so auth's relying party can name its origin, and the
// Explorer's client is registered with that origin's callback.
func passkeyStack(t *testing.T) (*Stack, string) {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(lis.Addr().(*net.TCPAddr).Port)
	_ = lis.Close()
	origin := "http://localhost:" + port
	secretFile := filepath.Join(t.TempDir(), "explorer-secret")
	if err := os.WriteFile(secretFile, []byte(explorerSecret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := NewStack(t, Options{
		AuthArgs: []string{"-passkey-rp-id", "localhost", "-passkey-origins", origin},
		GatewayArgs: []string{"-addr", "127.0.0.1:" + port,
			"-explorer-client-id", explorerClient, "-explorer-client-secret-file", secretFile},
	})
	s.AuthCLI(t, 0, "create-client", "-client-id", explorerClient, "-secret", explorerSecret, "-name", "FRIS Explorer",
		"-redirect-url", origin+"/explorer/callback")
	return s, origin
}

// TestPasskeyBrowser is the journey of issue 31: an operator creates a
// user and grants a role; the user sets a password with the mailed link
// (from auth's log), signs in, adds a passkey on the account page
// (Chromium's virtual authenticator: CTAP2, internal, resident keys, user
// verified), signs out, and signs in with the passkey alone; the session
// carries the granted role. axe-core checks the account page with the
// passkey section and the login page with its passkey button, light and
// dark.
func TestPasskeyBrowser(t *testing.T) {
	// Not parallel: its gateway listens on a port found free a moment earlier, which a parallel test's listener could take first.
	p := newPage(t)
	s, origin := passkeyStack(t)
	const email, pass = "grace@example.org", "a passkey's password"

	// The operator: a user without a password, and the operator role.
	s.AuthCLI(t, 0, "create-user", "-email", email, "-name", "Grace Hopper", "-email-verified")
	s.AuthCLI(t, 0, "set-scopes", "-confirm", "-scopes", identity.ScopeOperator, email)

	if _, err := chromedp.Call(p.ctx, webauthn.Enable, webauthn.EnableParams{}); err != nil {
		t.Fatalf("WebAuthn domain: %v", err)
	}
	if _, err := chromedp.Call(p.ctx, webauthn.AddVirtualAuthenticator, webauthn.AddVirtualAuthenticatorParams{Options: &webauthn.VirtualAuthenticatorOptions{
		Protocol: webauthn.AuthenticatorProtocolCtap2, Transport: webauthn.AuthenticatorTransportInternal,
		HasResidentKey: true, HasUserVerification: true, IsUserVerified: true, AutomaticPresenceSimulation: true,
	}}); err != nil {
		t.Fatalf("virtual authenticator: %v", err)
	}

	// The user asks for a link and sets the password with it.
	p.do("open the login page", chromedp.Navigate(origin+"/explorer/login?return=%2Fexplorer%2Faccount"), chromedp.WaitVisible(chromedp.ID("email")))
	p.do("follow the forgot link", chromedp.Click(chromedp.CSS(`a[href^="/oauth2/forgot"]`)), chromedp.WaitVisible(chromedp.ID("email")))
	p.do("ask for a link", chromedp.SendKeys(chromedp.ID("email"), email), chromedp.Click(chromedp.CSS("button[type=submit]")),
		chromedp.WaitVisible(chromedp.CSS("[role=status]")))
	link := newResetLink(t, s, email, 1)
	p.do("open the mailed link", chromedp.Navigate(origin+strings.TrimPrefix(link, Issuer)), chromedp.WaitVisible(chromedp.ID("password")))
	p.do("set the password", chromedp.SendKeys(chromedp.ID("password"), pass), chromedp.SendKeys(chromedp.ID("password2"), pass),
		chromedp.Click(chromedp.CSS("button[type=submit]")), chromedp.WaitVisible(chromedp.CSS("[role=status]")))

	// Signs in with it and adds a passkey.
	p.do("sign in with the password", chromedp.Navigate(origin+"/explorer/login?return=%2Fexplorer%2Faccount"), chromedp.WaitVisible(chromedp.ID("email")),
		chromedp.WaitVisible(chromedp.ID("passkey-signin")))
	p.check("login-with-passkey-button")
	p.do("submit the password", chromedp.SendKeys(chromedp.ID("email"), email), chromedp.SendKeys(chromedp.ID("password"), pass),
		chromedp.Click(chromedp.CSS("main form button[type=submit]")), chromedp.WaitVisible(chromedp.ID("pk-name")))
	p.wantText("#passkeys-heading", "Passkeys")
	p.wantText("section[aria-labelledby=passkeys-heading]", "You have no passkey yet.")
	p.check("account-passkeys-empty")
	p.do("add a passkey", chromedp.SendKeys(chromedp.ID("pk-name"), "Virtual key"), chromedp.Click(chromedp.CSS("#pk-add button[type=submit]")),
		chromedp.WaitVisible(chromedp.CSS("table#passkeys")))
	p.wantText("section[aria-labelledby=passkeys-heading]", "The passkey has been added", "Virtual key", "never")
	p.do("open the remove confirmation", chromedp.Click(chromedp.CSS("table#passkeys details.danger summary")),
		chromedp.WaitVisible(chromedp.CSS(`form[action="/explorer/account/passkeys/remove"] button`)))
	p.check("account-passkeys")

	// Signs out, and in again with the passkey alone.
	p.do("sign out", chromedp.Click(chromedp.CSS(`form[action="/explorer/logout"] button`)), chromedp.WaitVisible(chromedp.CSS(`header a.button`)))
	p.do("open the login page again", chromedp.Navigate(origin+"/explorer/login?return=%2Fexplorer%2Faccount"), chromedp.WaitVisible(chromedp.ID("passkey-signin")))
	p.do("sign in with the passkey", chromedp.Click(chromedp.ID("passkey-signin")), chromedp.WaitVisible(chromedp.ID("pk-name")))
	p.wantText("main", "Grace Hopper", email)
	// The last use is recorded, and the session has the operator's role:
	// the Operations section is there and opens.
	if used := p.text(`table#passkeys td[data-label="Last used"]`); used == "never" || used == "" {
		t.Errorf("the passkey's last use: %q", used)
	}
	p.do("open Operations", chromedp.Click(chromedp.CSS(`a[href="/explorer/operator/banks"]`)), chromedp.WaitVisible(chromedp.CSS("h1")))
	if loc := p.location(); !strings.HasSuffix(loc, "/explorer/operator/banks") {
		t.Fatalf("operations at %s", loc)
	}
	if body := p.text("main"); strings.Contains(body, "403") {
		t.Fatalf("the passkey's session lacks the operator role: %s", body)
	}
	if logs := s.Auth.logs(); !strings.Contains(logs, `"action":"auth.passkey_add"`) || !strings.Contains(logs, `"action":"auth.passkey_login"`) {
		t.Error("auth's audit log lacks the passkey events")
	}
}
