package e2e

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// TestAccountEmailVerification: a user an operator created without
// -email-verified gets a link (in auth's log here); its page only asks,
// its form confirms, and userinfo and the id token say so from then on.
func TestAccountEmailVerification(t *testing.T) {
	t.Parallel()
	s := NewStack(t, Options{})
	seedAuth(t, s) // the demo user, address not vouched for
	var link string
	for range 200 {
		if l := loggedLinks(s, "email verification link", demoEmail); len(l) == 1 {
			link = l[0]
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !strings.HasPrefix(link, Issuer+oauth+"/verify?token=") {
		t.Fatalf("verification link %q", link)
	}
	p := from127(t, s, "127.0.0.1", nil)
	verified := func() any {
		t.Helper()
		res, b := p.signIn(t, demoEmail, demoPass)
		loc, err := url.Parse(res.Header.Get("Location"))
		if res.StatusCode != http.StatusFound || err != nil {
			t.Fatalf("sign-in = %d %s", res.StatusCode, b)
		}
		res, b = p.do(t, http.MethodPost, oauth+"/token", codeRequest(loc.Query().Get("code")), "Content-Type", "application/json")
		if res.StatusCode != 200 {
			t.Fatalf("token = %d %s", res.StatusCode, b)
		}
		access := field(t, JSON(t, b), "access_token").(string)
		res, b = p.do(t, http.MethodGet, oauth+"/userinfo", "", "Authorization", "Bearer "+access)
		if res.StatusCode != 200 {
			t.Fatalf("userinfo = %d %s", res.StatusCode, b)
		}
		return JSON(t, b).(map[string]any)["email_verified"]
	}
	if v := verified(); v == true {
		t.Fatalf("email_verified before = %v", v)
	}
	target := strings.TrimPrefix(link, Issuer)
	f, page := p.page(t, target, 200)
	if !strings.Contains(page, demoEmail) {
		t.Fatalf("verify page:\n%s", page)
	}
	if v := verified(); v == true {
		t.Fatal("showing the page confirmed the address")
	}
	f, _ = p.page(t, target, 200) // signing in spent the CSRF cookie
	if res, b := p.postForm(t, oauth+"/verify", f); res.StatusCode != 200 || !strings.Contains(string(b), "Your email address is confirmed") {
		t.Fatalf("confirm = %d %s", res.StatusCode, b)
	}
	if v := verified(); v != true {
		t.Fatalf("email_verified after = %v", v)
	}
	p.page(t, target, 404) // spent
}
