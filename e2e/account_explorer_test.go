package e2e

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestAccountChangePassword: a signed-in user changes the password on the
// Explorer's account page, over HTTP against the real binaries. The session
// that changed it stays signed in; the user's other session ends; the login
// form takes the new password and refuses the old one.
func TestAccountChangePassword(t *testing.T) {
	t.Parallel()
	s := explorerStack(t, Options{})
	me, other := signInHTTP(t, s), signInHTTP(t, s)
	code, page := getPage(t, me, s.URL+"/explorer/account")
	m := regexp.MustCompile(`name="csrf_token" value="([^"]+)"`).FindStringSubmatch(page)
	if code != 200 || m == nil || !strings.Contains(page, demoEmail) {
		t.Fatalf("account page: %d\n%s", code, page)
	}
	const newPass = "a brand new horse"
	post := func(current string) (*http.Response, string) {
		res, err := me.PostForm(s.URL+"/explorer/account/password", url.Values{"csrf_token": {m[1]}, "current": {current}, "new": {newPass}, "new2": {newPass}})
		if err != nil {
			t.Fatal(err)
		}
		return res, readAll(t, res)
	}
	if res, body := post("not my password"); res.StatusCode != 400 || !strings.Contains(body, "The current password is wrong.") {
		t.Fatalf("wrong current password: %d\n%s", res.StatusCode, body)
	}
	res, body := post(demoPass)
	if res.StatusCode != 200 || res.Request.URL.Path != "/explorer/account" || !strings.Contains(body, "Your password has been changed") {
		t.Fatalf("change: %d at %s\n%s", res.StatusCode, res.Request.URL, body)
	}
	// This session goes on; the other ends once the gateway has the
	// revocation (it polls every second).
	ended := false
	for range 100 {
		code, body := getPage(t, other, s.URL+"/explorer/")
		if code == 200 && !strings.Contains(body, "Ada Lovelace") {
			ended = true
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if !ended {
		t.Fatal("the other session is still signed in after the password change")
	}
	if code, body := getPage(t, me, s.URL+"/explorer/account"); code != 200 || !strings.Contains(body, "Ada Lovelace") {
		t.Fatalf("the session that changed the password: %d, signed in %t", code, strings.Contains(body, "Ada Lovelace"))
	}
	if auditCount(s, "auth.password_change") != 1 {
		t.Fatal("the change is not audited")
	}
	p := from127(t, s, "127.0.0.1", nil)
	f, _ := p.page(t, oauth+"/authorize?client_id="+explorerClient, 200)
	if res, b := p.post(t, f, demoEmail, demoPass); res.StatusCode != http.StatusUnauthorized {
		t.Fatalf("the old password = %d %s", res.StatusCode, b)
	}
	f, _ = p.page(t, oauth+"/authorize?client_id="+explorerClient, 200)
	if res, b := p.post(t, f, demoEmail, newPass); res.StatusCode != http.StatusFound {
		t.Fatalf("the new password = %d %s", res.StatusCode, b)
	}
}

// TestAccountSessions: the account page lists where the user is signed in
// (each Explorer sign-in, this browser marked) and "sign out everywhere"
// ends them all, this browser's too.
func TestAccountSessions(t *testing.T) {
	t.Parallel()
	s := explorerStack(t, Options{})
	me, other := signInHTTP(t, s), signInHTTP(t, s)
	code, page := getPage(t, me, s.URL+"/explorer/account")
	if code != 200 || strings.Count(page, "<td data-label=\"Application\">FRIS Explorer") != 2 || strings.Count(page, "(this browser)") != 1 ||
		strings.Count(page, "<code>127.0.0.1</code>") != 2 || !strings.Contains(page, "Ada Lovelace") || !strings.Contains(page, "(confirmed)") {
		t.Fatalf("account page: %d\n%s", code, page)
	}
	m := regexp.MustCompile(`action="/explorer/account/signout-everywhere">\s*<input type="hidden" name="csrf_token" value="([^"]+)"`).FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no sign-out-everywhere form:\n%s", page)
	}
	res, err := me.PostForm(s.URL+"/explorer/account/signout-everywhere", url.Values{"csrf_token": {m[1]}})
	if err != nil {
		t.Fatal(err)
	}
	body := readAll(t, res)
	if res.StatusCode != 200 || res.Request.URL.Path != "/explorer/" || strings.Contains(body, "Ada Lovelace") {
		t.Fatalf("sign out everywhere: %d at %s\n%s", res.StatusCode, res.Request.URL, body)
	}
	ended := false
	for range 100 {
		code, body := getPage(t, other, s.URL+"/explorer/")
		if code == 200 && !strings.Contains(body, "Ada Lovelace") {
			ended = true
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if !ended {
		t.Fatal("the other browser is still signed in")
	}
	if auditCount(s, "auth.sign_out_everywhere") != 1 {
		t.Fatal("not audited")
	}
	// Signed in again: only the new sign-in stands.
	again := signInHTTP(t, s)
	if _, page := getPage(t, again, s.URL+"/explorer/account"); strings.Count(page, "<td data-label=\"Application\">FRIS Explorer") != 1 {
		t.Fatalf("after signing out everywhere and in again:\n%s", page)
	}
}
