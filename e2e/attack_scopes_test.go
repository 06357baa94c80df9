package e2e

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"fris.dev/pkg/identity"
)

// TestAttackMalformedScope: a scope that is no RFC 6749 scope-token (a
// zero-width space inside, a control character) is refused by bin/auth
// set-scopes and by the console, each saying why; before, it was stored,
// and its holder's /oauth2/userinfo and /oauth2/tokeninfo answered 500
// (gRPC metadata carries printable ASCII only). FRIS:OPERATOR is a
// scope-token and is kept: it opens nothing, matching is exact. The
// holder's userinfo and tokeninfo answer 200 throughout.
func TestAttackMalformedScope(t *testing.T) {
	t.Parallel()
	s := explorerStack(t, Options{})
	s.AuthCLI(t, 0, "create-client", "-client-id", demoClient, "-secret", demoSecret, "-name", "E2E Client", "-redirect-url", callback)
	s.AuthCLI(t, 0, "create-user", "-email", graceEmail, "-password", gracePass)

	for _, bad := range []string{"x\u200by", "\x01", `a\b`} {
		out := s.AuthCLI(t, 1, "set-scopes", "-scopes", identity.ScopeResearcher+","+bad, graceEmail)
		if !strings.Contains(out, "scope-token") {
			t.Errorf("set-scopes %q: the CLI does not say why:\n%s", bad, out)
		}
	}
	s.AuthCLI(t, 0, "set-scopes", "-confirm", "-scopes", identity.ScopeOperator, demoEmail)
	c := signInHTTP(t, s)
	_, body := getPage(t, c, s.URL+"/explorer/operator/users")
	m := csrfRE.FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no CSRF token on the users page:\n%s", body)
	}
	for _, bad := range []string{"x\u200by", "\x01"} {
		code, body := usersForm(t, s, c, m[1], "scopes", url.Values{"email": {graceEmail}, "role": {identity.ScopeResearcher}, "other": {bad}})
		if code != http.StatusBadRequest || !strings.Contains(body, "scope-token") {
			t.Errorf("console scopes %q: %d, want 400 saying why\n%.800s", bad, code, body)
		}
	}
	if code, body := usersForm(t, s, c, m[1], "scopes", url.Values{"email": {graceEmail}, "other": {"FRIS:OPERATOR"}, "confirm": {"yes"}}); code != http.StatusOK {
		t.Errorf("console scopes FRIS:OPERATOR: %d\n%.800s", code, body)
	}
	users := s.AuthCLI(t, 0, "users")
	if strings.Contains(users, "\u200b") || strings.Contains(users, "\x01") {
		t.Errorf("a refused scope was stored:\n%q", users)
	}

	st, access, _ := passwordSignIn(t, s, graceEmail, gracePass)
	if st != http.StatusFound {
		t.Fatalf("Grace's sign-in: %d", st)
	}
	if sc := scopeOf(t, access); !strings.Contains(sc, "FRIS:OPERATOR") {
		t.Errorf("token scope %q", sc)
	}
	for _, p := range []string{"/userinfo", "/tokeninfo"} {
		if res, b := s.Do(t, http.MethodGet, oauth+p, nil, "Authorization", "Bearer "+access); res.StatusCode != http.StatusOK {
			t.Errorf("%s for the holder: %d %s", p, res.StatusCode, b)
		}
	}
	// FRIS:OPERATOR opens nothing: the console is an operator's.
	if res, b := s.Do(t, http.MethodGet, oauth+"/users/search?q=ada", nil, "Authorization", "Bearer "+access); res.StatusCode != http.StatusForbidden {
		t.Errorf("users/search with FRIS:OPERATOR: %d %s", res.StatusCode, b)
	}
}

// TestAttackUserAdminReadsOperator: a user administrator may not act on
// an operator, and now sees no more of one than that it exists: the
// operator's sign-in history is refused (403 page, no address), and the
// users view shows the operator's address and role only, not their name,
// last sign-in or its address. Before, the sign-ins page answered 200
// with where the operator signs in from.
func TestAttackUserAdminReadsOperator(t *testing.T) {
	t.Parallel()
	s := explorerStack(t, Options{})
	s.AuthCLI(t, 0, "create-client", "-client-id", demoClient, "-secret", demoSecret, "-name", "E2E Client", "-redirect-url", callback)
	const opEmail, opPass = "olga@lab.example", "operator horse battery"
	s.AuthCLI(t, 0, "create-user", "-email", opEmail, "-password", opPass, "-name", "Olga Operator", "-scopes", identity.ScopeOperator)
	// The operator signs in from an address of their own.
	op := from127(t, s, "127.0.0.23", nil)
	f, _ := op.page(t, oauth+"/authorize?client_id="+demoClient, 200)
	f.Set("email", opEmail)
	f.Set("password", opPass)
	if res, b := op.postForm(t, oauth+"/authorize", f); res.StatusCode != http.StatusFound {
		t.Fatalf("the operator's sign-in: %d %s", res.StatusCode, b)
	}

	s.AuthCLI(t, 0, "set-scopes", "-confirm", "-scopes", identity.ScopeUserAdmin, demoEmail)
	ua := signInHTTP(t, s)
	code, body := getPage(t, ua, s.URL+"/explorer/operator/users/sign-ins?email="+url.QueryEscape(opEmail))
	if code != http.StatusForbidden || strings.Contains(body, "127.0.0.23") || !strings.Contains(body, "only an operator sees their sign-ins") {
		t.Errorf("a user admin's view of an operator's sign-ins: %d\n%.1500s", code, body)
	}
	code, body = getPage(t, ua, s.URL+"/explorer/operator/users?q="+url.QueryEscape(opEmail))
	if code != http.StatusOK || !strings.Contains(body, opEmail) || !strings.Contains(body, "only an operator sees their details") {
		t.Fatalf("a user admin's users view: %d\n%s", code, body)
	}
	for _, leak := range []string{"127.0.0.23", "Olga Operator", "/explorer/operator/users/sign-ins?", "/explorer/operator/users/user?"} {
		if strings.Contains(body, leak) {
			t.Errorf("a user admin's users view shows the operator's %q", leak)
		}
	}
	// The user's page, asked for directly: the address and the role only.
	code, body = getPage(t, ua, s.URL+"/explorer/operator/users/user?email="+url.QueryEscape(opEmail))
	if code != http.StatusOK || !strings.Contains(body, opEmail) || !strings.Contains(body, "only an operator sees their details") {
		t.Fatalf("a user admin's page of an operator: %d\n%s", code, body)
	}
	for _, leak := range []string{"127.0.0.23", "Olga Operator", "/explorer/operator/users/sign-ins?", "/explorer/operator/users/credentials?", `action="/explorer/operator/users/`} {
		if strings.Contains(body, leak) {
			t.Errorf("a user admin's page of an operator shows %q", leak)
		}
	}
	// An operator sees it all.
	s.AuthCLI(t, 0, "set-scopes", "-confirm", "-scopes", identity.ScopeOperator, demoEmail)
	o := signInHTTP(t, s)
	if code, body := getPage(t, o, s.URL+"/explorer/operator/users/sign-ins?email="+url.QueryEscape(opEmail)); code != http.StatusOK || !strings.Contains(body, "127.0.0.23") {
		t.Errorf("an operator's view of an operator's sign-ins: %d\n%.1500s", code, body)
	}
}
