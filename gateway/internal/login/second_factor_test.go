package login

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// The password of an account with a second factor does not redirect: the
// page asks for the code and keeps the pending sign-in in a cookie of this
// browser; a wrong code shows the page again, the right one redirects with
// the code; without the cookie the password is asked again.
func TestSecondFactorStep(t *testing.T) {
	f := &fakeAuth{}
	h := newHandler(f)
	base := url.Values{"client_id": {"c1"}, "redirect_uri": {registered}, "state": {"s1"}, "response_type": {"code"}, CSRFField: {goodCSRF}}
	post := func(form url.Values, pending string) *httptest.ResponseRecorder {
		req := httptest.NewRequest("POST", "/oauth2/authorize", strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.AddCookie(&http.Cookie{Name: CSRFCookie, Value: goodCSRF})
		if pending != "" {
			req.AddCookie(&http.Cookie{Name: PendingCookie, Value: pending})
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	with := func(kv ...string) url.Values {
		v := url.Values{}
		for k, x := range base {
			v[k] = x
		}
		for i := 0; i+1 < len(kv); i += 2 {
			v.Set(kv[i], kv[i+1])
		}
		return v
	}
	rec := post(with("email", "two@example.org", "password", "right"), "")
	body := rec.Body.String()
	if rec.Code != 200 || rec.Header().Get("Location") != "" || !strings.Contains(body, `name="second_factor_code"`) {
		t.Fatalf("password step: %d %q\n%s", rec.Code, rec.Header().Get("Location"), body)
	}
	checkSecurityHeaders(t, rec.Header())
	var cookie *http.Cookie
	for _, c := range rec.Result().Cookies() {
		if c.Name == PendingCookie {
			cookie = c
		}
	}
	if cookie == nil || cookie.Value != pendingToken || !cookie.HttpOnly || cookie.SameSite != http.SameSiteStrictMode || cookie.Path != "/oauth2" || cookie.MaxAge <= 0 {
		t.Fatalf("pending cookie %+v", cookie)
	}
	if strings.Contains(body, pendingToken) {
		t.Fatal("the pending token is in the page")
	}
	if hf := hiddenFields(body); hf["client_id"] != "c1" || hf["state"] != "s1" {
		t.Fatalf("hidden fields %v", hf)
	}
	rec = post(with(SecondFactorField, "654321"), pendingToken)
	if rec.Code != 401 || !strings.Contains(rec.Body.String(), "The code is wrong") || rec.Header().Get("Location") != "" {
		t.Fatalf("wrong code: %d\n%s", rec.Code, rec.Body.String())
	}
	rec = post(with(SecondFactorField, "123456"), "")
	if rec.Code != 401 || !strings.Contains(rec.Body.String(), PendingExpired) || !strings.Contains(rec.Body.String(), `name="password"`) {
		t.Fatalf("no pending cookie: %d\n%s", rec.Code, rec.Body.String())
	}
	rec = post(with(SecondFactorField, " 123456 "), pendingToken)
	if rec.Code != 302 || rec.Header().Get("Location") != registered+"?code=the-code&state=s1" {
		t.Fatalf("right code: %d %q\n%s", rec.Code, rec.Header().Get("Location"), rec.Body.String())
	}
	gone := false
	for _, c := range rec.Result().Cookies() {
		gone = gone || (c.Name == PendingCookie && c.MaxAge < 0)
	}
	if !gone {
		t.Fatal("the pending cookie outlives the sign-in")
	}
	if n := len(f.seconds); n != 2 || f.seconds[1].GetRequest().GetClientId() != "c1" || f.seconds[1].GetCode() != "123456" {
		t.Fatalf("LoginSecondFactor calls %v", f.seconds)
	}
}
