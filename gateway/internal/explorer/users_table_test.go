package explorer

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"fris.dev/pkg/identity"
)

// rowRE finds the users table's rows, in order, by their email.
var rowRE = regexp.MustCompile(`<tr id="user-\d+"[^>]*>\s*<th scope="row">(?:<a [^>]*>)?([^<]+)<`)

func tableRows(body string) []string {
	var out []string
	for _, m := range rowRE.FindAllStringSubmatch(body, -1) {
		out = append(out, m[1])
	}
	return out
}

// TestUsersSortAndPage: the table sorts by a whitelisted column either
// way (ties by email), pages keep the search and the order, the header
// links keep the search and say the order with aria-sort; an unknown
// column or direction is the default order.
func TestUsersSortAndPage(t *testing.T) {
	e, fu := newUsersEnv(t, 30, "openid", identity.ScopeOperator)
	fu.find("u005@example.org").HasPasskey = true
	fu.find("u007@example.org").Disabled = true
	fu.find("u009@example.org").EmailVerified = true
	b := e.browser()
	b.signIn()
	get := func(target string) string {
		t.Helper()
		rec := b.do("GET", target, nil)
		if rec.Code != 200 {
			t.Fatalf("%s: %d\n%s", target, rec.Code, rec.Body)
		}
		return rec.Body.String()
	}
	for _, tc := range []struct {
		query       string
		first, last string
		n           int
		want        []string
	}{
		{"", "ada@lab.example", "u023@example.org", 25, []string{`data-col="email" aria-sort="ascending"`}},
		{"sort=email&dir=desc", "u029@example.org", "u005@example.org", 25, []string{`data-col="email" aria-sort="descending"><a href="/explorer/operator/users">`}},
		{"sort=name&dir=desc", "u029@example.org", "u005@example.org", 25, []string{`data-col="name" aria-sort="descending"`, `href="/explorer/operator/users?dir=desc&amp;page=2&amp;sort=name" rel="next"`,
			`<input type="hidden" name="sort" value="name"><input type="hidden" name="dir" value="desc">`}},
		{"sort=name&dir=desc&page=2", "u004@example.org", "ada@lab.example", 6, []string{`href="/explorer/operator/users?dir=desc&amp;sort=name" rel="prev"`}},
		{"sort=name", "ada@lab.example", "u023@example.org", 25, []string{`data-col="name" aria-sort="ascending"><a href="/explorer/operator/users?dir=desc&amp;sort=name">`}},
		{"sort=lastsignin&dir=desc", "ada@lab.example", "u023@example.org", 25, nil},
		{"sort=lastsignin", "u000@example.org", "u024@example.org", 25, nil},
		{"sort=factor&dir=desc", "u005@example.org", "u023@example.org", 25, []string{`<td data-factor="passkey">passkey</td>`}},
		{"sort=state&dir=desc", "u007@example.org", "u023@example.org", 25, []string{`<td data-state="disabled"><strong class="badge warn">disabled</strong>`}},
		{"sort=verified&dir=desc", "u009@example.org", "u023@example.org", 25, nil},
		{"sort=roles&dir=desc", "ada@lab.example", "u023@example.org", 25, nil},
		// A forged column or direction: the default order.
		{"sort=password&dir=sideways", "ada@lab.example", "u023@example.org", 25, []string{`data-col="email" aria-sort="ascending"`}},
		// The search is kept by the header links and the pages.
		{"q=u0&sort=name&dir=desc", "u029@example.org", "u005@example.org", 25, []string{"1–25 of 30",
			`href="/explorer/operator/users?dir=desc&amp;page=2&amp;q=u0&amp;sort=name" rel="next"`,
			`<a href="/explorer/operator/users?dir=asc&amp;q=u0&amp;sort=state">`, `<a href="/explorer/operator/users?dir=asc&amp;q=u0&amp;sort=name">`}},
	} {
		body := get(UsersPath + "?" + tc.query)
		rows := tableRows(body)
		if len(rows) != tc.n || rows[0] != tc.first || rows[len(rows)-1] != tc.last {
			t.Errorf("%s: %d rows %v, want %d from %s to %s", tc.query, len(rows), rows, tc.n, tc.first, tc.last)
		}
		for _, w := range tc.want {
			if !strings.Contains(body, w) {
				t.Errorf("%s lacks %q", tc.query, w)
			}
		}
		// The search form keeps any order but the default.
		if hidden := strings.Contains(body, `type="hidden" name="sort"`); hidden == strings.Contains(body, `data-col="email" aria-sort="ascending"`) {
			t.Errorf("%s: the search keeps the order: %v", tc.query, hidden)
		}
		if n := strings.Count(body, "aria-sort="); n != 1 {
			t.Errorf("%s: %d headers with aria-sort", tc.query, n)
		}
	}
}

// TestUserPage: each row links to the user's page, which holds every
// action the list's cards held (roles and scopes, send a reset, disable
// or enable, end the sessions, the sign-ins, the credentials); the forms
// post to the list's routes as before.
func TestUserPage(t *testing.T) {
	e, fu := newUsersEnv(t, 1, "openid", identity.ScopeOperator)
	fu.find("u000@example.org").Disabled = true
	b := e.browser()
	b.signIn()
	list := b.do("GET", UsersPath, nil).Body.String()
	for _, w := range []string{`href="/explorer/operator/users/user?email=ada%40lab.example"`, `href="/explorer/operator/users/user?email=u000%40example.org"`} {
		if !strings.Contains(list, w) {
			t.Errorf("the list lacks %q", w)
		}
	}
	rec := b.do("GET", UserPath+"?email=ADA%40lab.example", nil)
	ada := rec.Body.String()
	if rec.Code != 200 {
		t.Fatalf("ada's page: %d\n%s", rec.Code, ada)
	}
	for _, w := range []string{"<h1>ada@lab.example", `value="broker:researcher" checked`, `value="mdr:secret"`,
		`action="/explorer/operator/users/scopes"`, `action="/explorer/operator/users/send-reset"`, `action="/explorer/operator/users/disable"`,
		`action="/explorer/operator/users/end-sessions"`, `href="/explorer/operator/users/sign-ins?email=ada%40lab.example"`,
		`href="/explorer/operator/users/credentials?email=ada%40lab.example"`, `<span class="muted">from <code>198.51.100.7</code>`,
		`<dt>Second factor</dt><dd>none</dd>`, `href="/explorer/operator/users?q=ada%40lab.example"`, `>Users</a>`} {
		if !strings.Contains(ada, w) {
			t.Errorf("ada's page lacks %q", w)
		}
	}
	if strings.Contains(ada, `action="/explorer/operator/users/enable"`) {
		t.Error("an active user's page offers to enable")
	}
	u := b.do("GET", UserPath+"?email=u000%40example.org&lang=de", nil).Body.String()
	for _, w := range []string{`action="/explorer/operator/users/enable"`, "gesperrt", "Alle Sitzungen beenden"} {
		if !strings.Contains(u, w) {
			t.Errorf("a disabled user's page lacks %q", w)
		}
	}
	for _, w := range []string{`action="/explorer/operator/users/disable"`, `action="/explorer/operator/users/send-reset"`} {
		if strings.Contains(u, w) {
			t.Errorf("a disabled user's page has %q", w)
		}
	}
	// The operator's own page: no way to disable oneself.
	if self := b.do("GET", UserPath+"?email=ada%40example.org", nil); self.Code != http.StatusNotFound {
		t.Errorf("a user auth does not list: %d", self.Code)
	}
	fu.users[0].Email = "ada@example.org" // the signed-in operator
	if self := b.do("GET", UserPath+"?email=ada%40example.org", nil).Body.String(); strings.Contains(self, `action="/explorer/operator/users/disable"`) ||
		!strings.Contains(self, `action="/explorer/operator/users/end-sessions"`) {
		t.Error("the operator's own page offers to disable them, or lacks the forms")
	}
	if rec := b.do("GET", UserPath, nil); rec.Code != http.StatusBadRequest {
		t.Errorf("no email: %d", rec.Code)
	}
	if rec := b.do("GET", UserPath+"?email="+strings.Repeat("a", 255), nil); rec.Code != http.StatusBadRequest {
		t.Errorf("a long email: %d", rec.Code)
	}
	// A form of the page, posted as a browser does: the list's answer.
	sess, _ := e.store.Get(context.Background(), b.cookies[SessionCookie].Value)
	rec = b.do("POST", UserResetPath, url.Values{CSRFField: {sess.CSRF}, "email": {"ada@lab.example"}}, "Origin", "http://gw.test", "Sec-Fetch-Site", "same-origin")
	if rec.Code != http.StatusSeeOther || !strings.HasPrefix(rec.Header().Get("Location"), UsersPath+"?") {
		t.Errorf("reset from the page: %d %q", rec.Code, rec.Header().Get("Location"))
	}
}
