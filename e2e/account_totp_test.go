package e2e

import (
	"html"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/pquerna/otp"
	"github.com/pquerna/otp/totp"
)

var (
	totpKeyRE  = regexp.MustCompile(`<code id="totp-secret">([A-Z2-7]+)</code>`)
	recoveryRE = regexp.MustCompile(`<li><code>([A-Z2-7]{4}-[A-Z2-7]{4}-[A-Z2-7]{4}-[A-Z2-7]{4})</code></li>`)
)

// totpCode is the code of secret for the 30 s window after the current
// one: the auth service accepts the neighbouring window, and a code of a
// window after every code used before (the enrolment's is the current
// window's) is not a replay.
func totpCode(t *testing.T, secret string) string {
	t.Helper()
	c, err := totp.GenerateCodeCustom(secret, time.Now().Add(30*time.Second), totp.ValidateOpts{Period: 30, Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// hiddenForm is a page's hidden fields.
func hiddenForm(body string) url.Values {
	f := url.Values{}
	for _, m := range regexp.MustCompile(`<input type="hidden" name="([^"]+)" value="([^"]*)">`).FindAllStringSubmatch(body, -1) {
		f.Set(m[1], html.UnescapeString(m[2]))
	}
	return f
}

// TestAccountTOTP: the demo user adds an authenticator app on the account
// page, signs out and signs in to the Explorer through the OAuth authorize
// flow: the password alone issues no code but asks for the app's code; a
// wrong code is refused, the right one signs in, the same code on the next
// sign-in is refused (replay), a recovery code signs in once.
func TestAccountTOTP(t *testing.T) {
	t.Parallel()
	s := explorerStack(t, Options{AuthArgs: []string{"-require-2fa-for", "fris:operator"}})
	me := signInHTTP(t, s)
	code, page := getPage(t, me, s.URL+"/explorer/account")
	m := csrfRE.FindStringSubmatch(page)
	if code != 200 || m == nil || !strings.Contains(page, `action="/explorer/account/totp/begin"`) {
		t.Fatalf("account page: %d\n%s", code, page)
	}
	csrf := m[1]
	if res, body := postPage(t, me, s.URL+"/explorer/account/totp/begin", s.URL, url.Values{"csrf_token": {csrf}, "password": {"not my password"}}); res.StatusCode != 400 || !strings.Contains(body, "The password is wrong.") {
		t.Fatalf("begin with a wrong password: %d\n%s", res.StatusCode, body)
	}
	res, page := postPage(t, me, s.URL+"/explorer/account/totp/begin", s.URL, url.Values{"csrf_token": {csrf}, "password": {demoPass}})
	k := totpKeyRE.FindStringSubmatch(page)
	if res.StatusCode != 200 || k == nil || !strings.Contains(page, "otpauth://totp/") {
		t.Fatalf("begin: %d\n%s", res.StatusCode, page)
	}
	secret := k[1]
	f := hiddenForm(page)
	f.Set("code", "000000")
	if c, _ := totp.GenerateCode(secret, time.Now()); c == "000000" {
		f.Set("code", "111111")
	}
	if res, body := postPage(t, me, s.URL+"/explorer/account/totp/finish", s.URL, f); res.StatusCode != 400 || !strings.Contains(body, "The code is wrong") {
		t.Fatalf("finish with a wrong code: %d\n%s", res.StatusCode, body)
	}
	first, err := totp.GenerateCode(secret, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	f.Set("code", first)
	res, page = postPage(t, me, s.URL+"/explorer/account/totp/finish", s.URL, f)
	codes := recoveryRE.FindAllStringSubmatch(page, -1)
	if res.StatusCode != 200 || len(codes) != 10 || !strings.Contains(page, "Your authenticator app is now your second factor") {
		t.Fatalf("finish: %d, %d recovery codes\n%s", res.StatusCode, len(codes), page)
	}
	if _, page = getPage(t, me, s.URL+"/explorer/account"); !strings.Contains(page, `data-kind="totp"`) || recoveryRE.MatchString(page) {
		t.Fatalf("account page after enrolment: the factor is not listed, or the recovery codes are shown again\n%s", page)
	}
	if auditCount(s, "auth.totp_enrol") != 1 {
		t.Fatal("the enrolment is not audited")
	}
	if res, body := postPage(t, me, s.URL+"/explorer/logout", s.URL, url.Values{"csrf_token": {csrf}}); res.StatusCode != 200 {
		t.Fatalf("sign out: %d\n%s", res.StatusCode, body)
	}

	// signIn starts the Explorer's sign-in in a browser of its own and
	// posts the password: it answers the browser and the second step's
	// page.
	signIn := func() (*http.Client, string) {
		t.Helper()
		jar, _ := cookiejar.New(nil)
		c := &http.Client{Jar: jar, Timeout: 30 * time.Second}
		res, err := c.Get(s.URL + "/explorer/login?return=" + url.QueryEscape("/explorer/"))
		if err != nil {
			t.Fatal(err)
		}
		body := readAll(t, res)
		f := hiddenForm(body)
		f.Set("email", demoEmail)
		f.Set("password", demoPass)
		res, err = c.PostForm(s.URL+"/oauth2/authorize", f)
		if err != nil {
			t.Fatal(err)
		}
		body = readAll(t, res)
		if res.StatusCode != 200 || res.Request.URL.Path != "/oauth2/authorize" || !strings.Contains(body, `name="second_factor_code"`) {
			t.Fatalf("password step: %d at %s: want the second step, no code\n%s", res.StatusCode, res.Request.URL, body)
		}
		return c, body
	}
	second := func(c *http.Client, page, code string) (*http.Response, string) {
		t.Helper()
		f := hiddenForm(page)
		f.Set("second_factor_code", code)
		res, err := c.PostForm(s.URL+"/oauth2/authorize", f)
		if err != nil {
			t.Fatal(err)
		}
		return res, readAll(t, res)
	}
	signedIn := func(res *http.Response, body string) bool {
		return res.StatusCode == 200 && res.Request.URL.Path == "/explorer/" && strings.Contains(body, "Ada Lovelace")
	}

	c, page := signIn()
	if res, body := second(c, page, "12345"); res.StatusCode != 401 || !strings.Contains(body, "The code is wrong") {
		t.Fatalf("wrong code: %d at %s\n%s", res.StatusCode, res.Request.URL, body)
	}
	now := totpCode(t, secret)
	if res, body := second(c, page, now); !signedIn(res, body) {
		t.Fatalf("password and code: %d at %s\n%s", res.StatusCode, res.Request.URL, body)
	}
	c, page = signIn()
	if res, body := second(c, page, now); res.StatusCode != 401 || signedIn(res, body) {
		t.Fatalf("the same code again (replay): %d at %s", res.StatusCode, res.Request.URL)
	}
	recovery := codes[2][1]
	if res, body := second(c, page, recovery); !signedIn(res, body) {
		t.Fatalf("recovery code: %d at %s\n%s", res.StatusCode, res.Request.URL, body)
	}
	c, page = signIn()
	if res, _ := second(c, page, recovery); res.StatusCode != 401 {
		t.Fatalf("a spent recovery code: %d at %s", res.StatusCode, res.Request.URL)
	}
	if auditCount(s, "auth.recovery_code_use") != 1 {
		t.Fatal("the recovery code's use is not audited")
	}
	// An operator removes the factor of a holder who lost it: the
	// password alone signs in again.
	if list := s.AuthCLI(t, 0, "credentials", demoEmail); !strings.Contains(list, "\ntotp") {
		t.Fatalf("bin/auth credentials does not list the factor:\n%s", list)
	}
	s.AuthCLI(t, 0, "remove-totp", demoEmail)
	signInHTTP(t, s)

	// An operator without a second factor, under -require-2fa-for
	// fris:operator: the password leads to enrolment before any code.
	s.AuthCLI(t, 0, "create-user", "-email", "olga@fris.test", "-password", "olga operator pass", "-name", "Olga Operator", "-email-verified", "-scopes", "fris:operator")
	jar, _ := cookiejar.New(nil)
	c = &http.Client{Jar: jar, Timeout: 30 * time.Second}
	res, err = c.Get(s.URL + "/explorer/login?return=" + url.QueryEscape("/explorer/"))
	if err != nil {
		t.Fatal(err)
	}
	f = hiddenForm(readAll(t, res))
	f.Set("email", "olga@fris.test")
	f.Set("password", "olga operator pass")
	if res, err = c.PostForm(s.URL+"/oauth2/authorize", f); err != nil {
		t.Fatal(err)
	}
	page = readAll(t, res)
	k = totpKeyRE.FindStringSubmatch(page)
	if res.StatusCode != 200 || res.Request.URL.Path != "/oauth2/authorize" || k == nil || !strings.Contains(page, "Your account requires a second factor") {
		t.Fatalf("operator's password step: %d at %s: want the enrolment\n%s", res.StatusCode, res.Request.URL, page)
	}
	res, page = second(c, page, totpCode(t, k[1]))
	cont := regexp.MustCompile(`<a href="([^"]+)" id="continue">`).FindStringSubmatch(page)
	if res.StatusCode != 200 || len(recoveryRE.FindAllString(page, -1)) != 10 || cont == nil {
		t.Fatalf("operator's enrolment: %d at %s\n%s", res.StatusCode, res.Request.URL, page)
	}
	if res, body := getPage(t, c, html.UnescapeString(cont[1])); res != 200 || !strings.Contains(body, "Olga Operator") {
		t.Fatalf("operator after enrolment: %d\n%s", res, body)
	}
}
