package e2e

import (
	"fmt"
	"html"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/pquerna/otp/totp"
)

// enrolTOTP adds an authenticator app to the demo user's account on the
// account page of the signed-in client me, and answers its key.
func enrolTOTP(t *testing.T, s *Stack, me *http.Client) string {
	t.Helper()
	_, page := getPage(t, me, s.URL+"/explorer/account")
	m := csrfRE.FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("account page without a CSRF token\n%s", page)
	}
	res, page := postPage(t, me, s.URL+"/explorer/account/totp/begin", s.URL, url.Values{"csrf_token": {m[1]}, "password": {demoPass}})
	k := totpKeyRE.FindStringSubmatch(page)
	if res.StatusCode != 200 || k == nil {
		t.Fatalf("begin: %d\n%s", res.StatusCode, page)
	}
	f := hiddenForm(page)
	now, err := totp.GenerateCode(k[1], time.Now())
	if err != nil {
		t.Fatal(err)
	}
	f.Set("code", now)
	if res, page := postPage(t, me, s.URL+"/explorer/account/totp/finish", s.URL, f); res.StatusCode != 200 || !recoveryRE.MatchString(page) {
		t.Fatalf("finish: %d\n%s", res.StatusCode, page)
	}
	return k[1]
}

// secondStep posts the password from p and answers the second step's
// form fields (status 200 and the code field, or the test fails).
func (p peer) secondStep(t *testing.T) url.Values {
	t.Helper()
	res, b := p.signIn(t, demoEmail, demoPass)
	if res.StatusCode != 200 || !strings.Contains(string(b), `name="second_factor_code"`) {
		t.Fatalf("password step = %d, want the second step\n%s", res.StatusCode, b)
	}
	f := url.Values{}
	for _, m := range hiddenRE.FindAllStringSubmatch(string(b), -1) {
		f.Set(m[1], html.UnescapeString(m[2]))
	}
	return f
}

func (p peer) code(t *testing.T, f url.Values, code string) *http.Response {
	t.Helper()
	f.Set("second_factor_code", code)
	res, _ := p.do(t, http.MethodPost, oauth+"/authorize", f.Encode(), "Content-Type", "application/x-www-form-urlencoded", "Sec-Fetch-Site", "same-origin")
	return res
}

// TestAttackTOTPGuessing: an attacker who has the password (phished)
// guesses the second factor's code from an address of its own: after the
// guard's few failures per account and address it gets 429, never a code;
// the holder, from the usual address, signs in with password and code
// all the while.
func TestAttackTOTPGuessing(t *testing.T) {
	t.Parallel()
	s := explorerStack(t, Options{AuthArgs: []string{"-limit-login", "3/1h:1s..1m", "-limit-addr", "1000/1h", "-limit-account-ceiling", "10/1h"}})
	s.AuthCLI(t, 0, "create-client", "-client-id", demoClient, "-secret", demoSecret, "-name", "E2E Client", "-redirect-url", callback)
	secret := enrolTOTP(t, s, signInHTTP(t, s))

	attacker := from127(t, s, "127.0.1.41", nil)
	f := attacker.secondStep(t)
	throttled := 0
	for i := range 8 {
		switch res := attacker.code(t, f, fmt.Sprintf("%06d", 100000+i)); res.StatusCode {
		case http.StatusUnauthorized:
		case http.StatusTooManyRequests:
			throttled++
		default:
			t.Fatalf("guess %d = %d (Location %q)", i, res.StatusCode, res.Header.Get("Location"))
		}
	}
	if throttled == 0 {
		t.Fatal("8 guessed codes from one address were all checked")
	}
	holder := from127(t, s, "127.0.2.41", nil)
	hf := holder.secondStep(t)
	res := holder.code(t, hf, totpCode(t, secret))
	if loc, _ := url.Parse(res.Header.Get("Location")); res.StatusCode != http.StatusFound || loc == nil || loc.Query().Get("code") == "" {
		t.Fatalf("the holder during the attack = %d %q", res.StatusCode, res.Header.Get("Location"))
	}
}
