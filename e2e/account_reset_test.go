package e2e

import (
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"
)

// Forgot password on FRIS's own pages, over HTTP against the real binaries:
// the link comes from auth's log (no SMTP configured), as `make run` shows
// it in .fris/logs/auth.log.

// resetLinks are the password-reset links auth logged for email, oldest
// first.
func resetLinks(s *Stack, email string) []string { return loggedLinks(s, "password reset link", email) }

// loggedLinks are the links of a kind auth logged for email, oldest first.
func loggedLinks(s *Stack, kind, email string) []string {
	var out []string
	for _, line := range strings.Split(s.Auth.logs(), "\n") {
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) != nil {
			continue
		}
		if msg, _ := rec["msg"].(string); strings.HasPrefix(msg, kind) && rec["email"] == email {
			out = append(out, fmt.Sprint(rec["link"]))
		}
	}
	return out
}

// newResetLink waits until auth has logged link number n (1-based) for
// email and returns it. The log line is written before the answer, but
// read from the process's stderr in the background.
func newResetLink(t *testing.T, s *Stack, email string, n int) string {
	t.Helper()
	for range 200 {
		if links := resetLinks(s, email); len(links) >= n {
			if len(links) > n {
				t.Fatalf("%d reset links for %s, want %d", len(links), email, n)
			}
			return links[n-1]
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("no reset link number %d for %s in auth's log", n, email)
	return ""
}

// page GETs path and returns its hidden fields.
func (p peer) page(t *testing.T, path string, want int) (url.Values, string) {
	t.Helper()
	res, b := p.do(t, http.MethodGet, path, "")
	if res.StatusCode != want {
		t.Fatalf("GET %s = %d, want %d: %s", path, res.StatusCode, want, b)
	}
	f := url.Values{}
	for _, m := range hiddenRE.FindAllStringSubmatch(string(b), -1) {
		f.Set(m[1], html.UnescapeString(m[2]))
	}
	return f, string(b)
}

func (p peer) postForm(t *testing.T, path string, f url.Values) (*http.Response, []byte) {
	t.Helper()
	return p.do(t, http.MethodPost, path, f.Encode(), "Content-Type", "application/x-www-form-urlencoded", "Sec-Fetch-Site", "same-origin")
}

// forgot asks for a reset link for email through the login page's link.
func (p peer) forgot(t *testing.T, email string) (*http.Response, []byte) {
	t.Helper()
	_, login := p.page(t, oauth+"/authorize?client_id="+demoClient, 200)
	m := regexp.MustCompile(`href="(` + oauth + `/forgot[^"]*)"`).FindStringSubmatch(login)
	if m == nil {
		t.Fatalf("the login page has no forgot-password link:\n%s", login)
	}
	f, _ := p.page(t, html.UnescapeString(m[1]), 200)
	if f.Get("client_id") != demoClient || f.Get("csrf_token") == "" {
		t.Fatalf("forgot form fields %v", f)
	}
	f.Set("email", email)
	return p.postForm(t, oauth+"/forgot", f)
}

var nonceRE = regexp.MustCompile(`nonce="[^"]*"`)

func TestAccountForgotPassword(t *testing.T) {
	t.Parallel()
	s := NewStack(t, Options{})
	seedAuth(t, s)
	me := from127(t, s, "127.0.0.1", nil)

	res, known := me.forgot(t, demoEmail)
	if res.StatusCode != 200 || !strings.Contains(string(known), "we have sent it a link") {
		t.Fatalf("forgot = %d %s", res.StatusCode, known)
	}
	link := newResetLink(t, s, demoEmail, 1)
	u, err := url.Parse(link)
	if err != nil || !strings.HasPrefix(link, Issuer+oauth+"/reset?token=") || len(u.Query().Get("token")) != 43 {
		t.Fatalf("link %q, want %s%s/reset?token=<256 bits>", link, Issuer, oauth)
	}
	// An address no account has: the same page, and no mail.
	res, unknown := me.forgot(t, "nobody@fris.test")
	if res.StatusCode != 200 || nonceRE.ReplaceAllString(string(known), "") != nonceRE.ReplaceAllString(string(unknown), "") {
		t.Fatalf("unknown address = %d, a page other than the known one's:\n%s\n---\n%s", res.StatusCode, unknown, known)
	}
	if l := resetLinks(s, "nobody@fris.test"); len(l) != 0 {
		t.Fatalf("links for an unknown address: %v", l)
	}

	target := strings.TrimPrefix(link, Issuer)
	f, page := me.page(t, target, 200)
	if !strings.Contains(page, demoEmail) || f.Get("token") != u.Query().Get("token") {
		t.Fatalf("reset page lacks the account or the token: %v\n%s", f, page)
	}
	const newPass = "a brand new horse"
	f.Set("password", newPass)
	f.Set("password2", "something else")
	if res, b := me.postForm(t, oauth+"/reset", f); res.StatusCode != 400 || !strings.Contains(string(b), "differ") {
		t.Fatalf("differing passwords = %d %s", res.StatusCode, b)
	}
	f.Set("password2", newPass)
	if res, b := me.postForm(t, oauth+"/reset", f); res.StatusCode != 200 || !strings.Contains(string(b), "Your password has been changed") {
		t.Fatalf("reset = %d %s", res.StatusCode, b)
	}
	if res, b := me.signIn(t, demoEmail, newPass); res.StatusCode != http.StatusFound {
		t.Fatalf("sign-in with the new password = %d %s", res.StatusCode, b)
	}
	if res, b := me.signIn(t, demoEmail, demoPass); res.StatusCode != http.StatusUnauthorized {
		t.Fatalf("sign-in with the old password = %d %s", res.StatusCode, b)
	}
	// Single use.
	if _, b := me.page(t, target, 404); !strings.Contains(b, "expired or has been used") {
		t.Fatalf("the spent link's page:\n%s", b)
	}
	f, _ = me.page(t, oauth+"/forgot", 200) // a fresh CSRF field
	f.Set("token", u.Query().Get("token"))
	f.Set("password", "yet another horse")
	f.Set("password2", "yet another horse")
	if res, b := me.postForm(t, oauth+"/reset", f); res.StatusCode != 404 {
		t.Fatalf("the spent link posted again = %d %s", res.StatusCode, b)
	}
	if res, b := me.signIn(t, demoEmail, newPass); res.StatusCode != http.StatusFound {
		t.Fatalf("the password after the spent link's post = %d %s", res.StatusCode, b)
	}
}

// Strangers from distinct loopback addresses ask for the holder's links
// until the limits hold them: each address its pair's 2, all together the
// account's ceiling of 4. The holder's browser, which signed in before,
// still gets its link, from its usual address and from a new one; a new
// browser without that evidence meets the ceiling (the documented limit).
func TestAccountResetLimitsSpareTheHolder(t *testing.T) {
	t.Parallel()
	s := NewStack(t, Options{AuthArgs: []string{"-limit-reset", "2/1h", "-limit-reset-addr", "1000/1h", "-limit-reset-ceiling", "4/1h"}})
	seedAuth(t, s)
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	home := from127(t, s, "127.0.2.1", jar)
	if res, b := home.signIn(t, demoEmail, demoPass); res.StatusCode != http.StatusFound {
		t.Fatalf("sign-in before = %d %s", res.StatusCode, b)
	}
	sent, refused := 0, 0
	for _, p := range attackers(t, s, 4) {
		for range 3 {
			res, b := p.forgot(t, demoEmail)
			switch res.StatusCode {
			case 200:
				sent++
			default:
				throttled(t, "a stranger's reset request", res, b)
				refused++
			}
		}
	}
	if sent != 4 || refused != 8 {
		t.Fatalf("strangers: %d requests answered, %d refused; want the ceiling's 4 and 8", sent, refused)
	}
	res, b := from127(t, s, "127.0.3.2", nil).forgot(t, demoEmail)
	throttled(t, "a new browser at a full ceiling", res, b)
	for i, p := range []peer{home, from127(t, s, "127.0.3.1", jar)} {
		if res, b := p.forgot(t, demoEmail); res.StatusCode != 200 {
			t.Fatalf("the holder (usual address, or a new one with its device cookie) = %d %s", res.StatusCode, b)
		}
		newResetLink(t, s, demoEmail, 4+i+1)
	}
}
