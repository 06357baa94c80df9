package e2e

import (
	"net/http"
	"strings"
	"testing"
)

// TestAccountResetPasswordPolicy: the reset page the mailed link opens
// shows auth's password policy (-password-min-length 13 here) before
// anything is sent, and refuses what it refuses with the form again, the
// link unspent, in the page's language: too short, one of the 100,000
// most common passwords in any case, the account's email address. A
// password the policy admits then works; bin/auth is held to it too.
func TestAccountResetPasswordPolicy(t *testing.T) {
	t.Parallel()
	s := NewStack(t, Options{AuthArgs: []string{"-password-min-length", "13"}})
	seedAuth(t, s)
	me := from127(t, s, "127.0.0.1", nil)
	if res, b := me.forgot(t, demoEmail); res.StatusCode != 200 {
		t.Fatalf("forgot = %d %s", res.StatusCode, b)
	}
	target := strings.TrimPrefix(newResetLink(t, s, demoEmail, 1), Issuer)
	f, page := me.page(t, target, 200)
	for _, want := range []string{"At least 13 characters. Not one of the most common passwords, and not your email address.", `minlength="13"`, `aria-describedby="password-rule"`} {
		if !strings.Contains(page, want) {
			t.Fatalf("the reset page lacks %q:\n%s", want, page)
		}
	}
	for _, tc := range []struct {
		name, pw, lang, want string
	}{
		{"too short", "twelve chars", "en", "A password needs at least 13 characters."},
		{"common", "QWERTYUIOPasdfghjkl", "en", "This password is one of the most common ones, which are guessed first. Choose another."},
		{"common in German", "qwertyuiopasdfghjkl", "de", "Dieses Passwort ist eines der häufigsten, die zuerst erraten werden."},
		{"the email", "ADA@fris.TEST", "en", "A password must not be your email address or its part before the @."},
	} {
		f.Set("password", tc.pw)
		f.Set("password2", tc.pw)
		res, b := me.do(t, http.MethodPost, oauth+"/reset", f.Encode(), "Content-Type", "application/x-www-form-urlencoded",
			"Sec-Fetch-Site", "same-origin", "Accept-Language", tc.lang)
		body := string(b)
		if res.StatusCode != http.StatusBadRequest || !strings.Contains(body, tc.want) || !strings.Contains(body, `name="token" value="`+f.Get("token")+`"`) ||
			!strings.Contains(body, `aria-invalid="true"`) {
			t.Fatalf("%s: %d, want 400 with %q and the form again:\n%s", tc.name, res.StatusCode, tc.want, body)
		}
	}
	const good = "a brand new horse"
	f.Set("password", good)
	f.Set("password2", good)
	if res, b := me.postForm(t, oauth+"/reset", f); res.StatusCode != 200 || !strings.Contains(string(b), "Your password has been changed") {
		t.Fatalf("a good password after the refusals = %d %s", res.StatusCode, b)
	}
	if res, b := me.signIn(t, demoEmail, good); res.StatusCode != http.StatusFound {
		t.Fatalf("sign-in with the new password = %d %s", res.StatusCode, b)
	}
	// An operator's bin/auth meets the same policy, in English.
	wantContains(t, s.AuthCLI(t, 1, "set-password", "-password", "twelve chars", demoEmail), "a password needs at least 13 characters")
	wantContains(t, s.AuthCLI(t, 1, "create-user", "-email", "grace@fris.test", "-password", "Grace@FRIS.test"), "must not be the account's email address")
}
