package login

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// TestRequiredChangePassword: a password step that answers a required
// change shows the new-password form (no redirect, the pending sign-in in
// the cookie, never in the page); mismatched, refused and same-as-old
// passwords show it again with the reason; the accepted one redirects
// with the code and ends the cookie.
func TestRequiredChangePassword(t *testing.T) {
	f := &fakeAuth{}
	h := newHandler(f)
	base := url.Values{"client_id": {"c1"}, "redirect_uri": {registered}, "state": {"s1"}, "response_type": {"code"}, CSRFField: {goodCSRF}}
	post := func(pending string, kv ...string) *httptest.ResponseRecorder {
		v := url.Values{}
		for k, x := range base {
			v[k] = x
		}
		for i := 0; i+1 < len(kv); i += 2 {
			v.Set(kv[i], kv[i+1])
		}
		req := httptest.NewRequest("POST", "/oauth2/authorize", strings.NewReader(v.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.AddCookie(&http.Cookie{Name: CSRFCookie, Value: goodCSRF})
		if pending != "" {
			req.AddCookie(&http.Cookie{Name: PendingCookie, Value: pending})
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	rec := post("", "email", "change@example.org", "password", "right")
	body := rec.Body.String()
	if rec.Code != 200 || rec.Header().Get("Location") != "" || !strings.Contains(body, `name="`+NewPasswordField+`"`) || !strings.Contains(body, ChangeRequired) || !strings.Contains(body, "At least 12 characters.") || !strings.Contains(body, `minlength="12"`) {
		t.Fatalf("password step: %d %q\n%s", rec.Code, rec.Header().Get("Location"), body)
	}
	checkSecurityHeaders(t, rec.Header())
	var cookie *http.Cookie
	for _, c := range rec.Result().Cookies() {
		if c.Name == PendingCookie {
			cookie = c
		}
	}
	if cookie == nil || cookie.Value != changeToken || !cookie.HttpOnly || cookie.SameSite != http.SameSiteStrictMode {
		t.Fatalf("pending cookie %+v", cookie)
	}
	if strings.Contains(body, changeToken) {
		t.Fatal("the pending token is in the page")
	}
	if hf := hiddenFields(body); hf["client_id"] != "c1" || hf["state"] != "s1" {
		t.Fatalf("hidden fields %v", hf)
	}
	for _, tc := range []struct{ pw, again, want string }{
		{"a new one", "another", PasswordsDiffer},
		{"short", "short", "The password is too short."},
		{"right", "right", SameAsOldRefused},
	} {
		rec = post(changeToken, NewPasswordField, tc.pw, NewPasswordAgain, tc.again)
		if rec.Code != 400 || !strings.Contains(rec.Body.String(), tc.want) || rec.Header().Get("Location") != "" {
			t.Fatalf("%q/%q: %d\n%s", tc.pw, tc.again, rec.Code, rec.Body.String())
		}
	}
	rec = post("", NewPasswordField, "a new one", NewPasswordAgain, "a new one")
	if rec.Code != 401 || !strings.Contains(rec.Body.String(), PendingExpired) {
		t.Fatalf("no cookie: %d\n%s", rec.Code, rec.Body.String())
	}
	rec = post(changeToken, NewPasswordField, "a new one", NewPasswordAgain, "a new one")
	if rec.Code != 302 || rec.Header().Get("Location") != registered+"?code=the-code&state=s1" {
		t.Fatalf("accepted: %d %q\n%s", rec.Code, rec.Header().Get("Location"), rec.Body.String())
	}
	gone := false
	for _, c := range rec.Result().Cookies() {
		gone = gone || (c.Name == PendingCookie && c.MaxAge < 0)
	}
	if !gone {
		t.Fatal("the pending cookie outlives the sign-in")
	}
	if n := len(f.changes); n != 3 || f.changes[2].GetNewPassword() != "a new one" || f.changes[2].GetRequest().GetClientId() != "c1" {
		t.Fatalf("LoginChangePassword calls %v", f.changes)
	}
}

// TestRequiredVerifyEmail: a sign-in held for the address stops with a
// page that says a link was mailed; no redirect, no code.
func TestRequiredVerifyEmail(t *testing.T) {
	h := newHandler(&fakeAuth{})
	v := url.Values{"client_id": {"c1"}, "redirect_uri": {registered}, "state": {"s1"}, CSRFField: {goodCSRF}, "email": {"verify@example.org"}, "password": {"right"}}
	req := httptest.NewRequest("POST", "/oauth2/authorize", strings.NewReader(v.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.AddCookie(&http.Cookie{Name: CSRFCookie, Value: goodCSRF})
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != 200 || rec.Header().Get("Location") != "" || !strings.Contains(rec.Body.String(), VerifyRequired) {
		t.Fatalf("%d %q\n%s", rec.Code, rec.Header().Get("Location"), rec.Body.String())
	}
}
