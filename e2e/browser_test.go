package e2e

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// chromium finds the browser; CI installs Debian's chromium and must run
// this test, elsewhere it is skipped when no browser is installed.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("no chromium on PATH; .ci/run installs Debian's chromium package")
	}
	t.Skip("no chromium on PATH")
	return ""
}

// TestBrowserLogin fills the login form in a real headless browser, follows
// the redirect to the client's callback and exchanges the code for tokens.
func TestBrowserLogin(t *testing.T) {
	t.Parallel()
	bin := chromium(t)
	s := NewStack(t, Options{})

	type result struct{ code, state string }
	got := make(chan result, 1)
	cb := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case got <- result{r.URL.Query().Get("code"), r.URL.Query().Get("state")}:
		default:
		}
		fmt.Fprintln(w, "signed in")
	}))
	defer cb.Close()
	s.AuthCLI(t, 0, "create-client", "-client-id", "browser-app", "-secret", demoSecret, "-name", "Browser App", "-redirect-url", cb.URL+"/callback")
	s.AuthCLI(t, 0, "create-user", "-email", demoEmail, "-password", demoPass, "-name", "Ada Lovelace")

	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(bin), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("disable-quic", true), chromedp.Flag("no-first-run", true))
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancel()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancel = context.WithTimeout(ctx, 60*time.Second)
	defer cancel()

	start := s.URL + "/oauth2/authorize?client_id=browser-app&state=" + url.QueryEscape("s t/ä")
	if err := chromedp.Do(ctx, chromedp.Navigate(start), chromedp.WaitVisible(chromedp.ID("email"))); err != nil {
		t.Fatalf("browser: %v", err)
	}
	title, err := chromedp.Run(ctx, chromedp.Title())
	if err != nil {
		t.Fatal(err)
	}
	lang, err := chromedp.Run(ctx, chromedp.AttributeValue(chromedp.CSS("html"), "lang"))
	if err != nil {
		t.Fatal(err)
	}
	if title == "" || lang.Value != "en" {
		t.Fatalf("page title %q, lang %q", title, lang.Value)
	}
	// A wrong password first: the page comes back with the message.
	if err := chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.ID("email"), demoEmail),
		chromedp.SendKeys(chromedp.ID("password"), "not the password"),
		chromedp.Click(chromedp.CSS("button[type=submit]")),
		chromedp.WaitVisible(chromedp.CSS("[role=alert]")),
	); err != nil {
		t.Fatalf("browser: %v", err)
	}
	alert, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("[role=alert]")))
	if err != nil {
		t.Fatal(err)
	}
	email, err := chromedp.Run(ctx, chromedp.Value(chromedp.ID("email")))
	if err != nil {
		t.Fatal(err)
	}
	if alert != "Email or password is wrong." || email != demoEmail {
		t.Fatalf("after a wrong password: alert %q, email kept %q", alert, email)
	}
	if err := chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.ID("password"), demoPass),
		chromedp.Click(chromedp.CSS("button[type=submit]")),
	); err != nil {
		t.Fatalf("browser: %v", err)
	}
	var r result
	select {
	case r = <-got:
	case <-ctx.Done():
		t.Fatal("the browser never reached the client's callback")
	}
	if r.code == "" || r.state != "s t/ä" {
		t.Fatalf("callback got code %q state %q", r.code, r.state)
	}
	res, v := postJSON(t, s, oauth+"/token", fmt.Sprintf(`{"code":%q,"client_id":"browser-app","client_secret":%q}`, r.code, demoSecret))
	wantStatus(t, res, v, 200)
	tokens(t, v)
}
