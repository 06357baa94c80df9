package explorer

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"fris.dev/pkg/identity"
	authv1 "fris.dev/proto/auth/v1"
)

func (f *fakeUsers) SendPasswordReset(ctx context.Context, r *authv1.SendPasswordResetRequest, _ ...grpc.CallOption) (*authv1.SendPasswordResetResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.saw(ctx, "SendPasswordReset "+r.GetEmail()+" "+r.GetLang())
	if f.find(r.GetEmail()) == nil {
		return nil, status.Error(codes.NotFound, "no user has this email address")
	}
	return &authv1.SendPasswordResetResponse{}, nil
}

func (f *fakeUsers) ListUserSignIns(ctx context.Context, r *authv1.ListUserSignInsRequest, _ ...grpc.CallOption) (*authv1.ListUserSignInsResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.saw(ctx, "ListUserSignIns "+r.GetEmail())
	u := f.find(r.GetEmail())
	if u == nil {
		return nil, status.Error(codes.NotFound, "no user")
	}
	if u.GetLastSignIn() == 0 {
		return &authv1.ListUserSignInsResponse{}, nil
	}
	return &authv1.ListUserSignInsResponse{SignIns: []*authv1.SignInRecord{
		{At: u.GetLastSignIn(), Method: "password", ClientId: "explorer", Addr: u.GetLastSignInAddr()},
		{At: u.GetLastSignIn() - 60, Method: "key", ClientId: "samply", Addr: "2001:db8::9"},
		{At: u.GetLastSignIn() - 120, Method: "<script>", Addr: ""},
	}}, nil
}

// consolePaths are the console's routes (the operator views and the users
// view) with the access each asks, as registered: a new page is walked
// without being listed anywhere.
func consolePaths(a *App) map[string]string {
	out := map[string]string{}
	for _, rt := range a.routes() {
		if rt.access == operator || rt.access == userAdmin {
			out[rt.pattern] = rt.access.String()
		}
	}
	return out
}

// TestConsoleRefusedWithReason walks every console path as registered (so
// a new page is covered without being listed) as a signed-in researcher:
// each answers 403 with the reason, and no service is called.
func TestConsoleRefusedWithReason(t *testing.T) {
	e, fu := newUsersEnv(t, 1, "openid", identity.ScopeResearcher)
	b := e.browser()
	b.signIn()
	sess, _ := e.store.Get(context.Background(), b.cookies[SessionCookie].Value)
	paths := consolePaths(e.app)
	if len(paths) < 10 {
		t.Fatalf("console paths: %v", paths)
	}
	for pattern, needs := range paths {
		method, path, _ := strings.Cut(pattern, " ")
		path = strings.TrimSuffix(path, "{$}")
		var form url.Values
		if method == http.MethodPost {
			form = url.Values{CSRFField: {sess.CSRF}, "email": {"ada@lab.example"}, "confirm": {"yes"}}
		}
		rec := b.do(method, path, form)
		if rec.Code != http.StatusForbidden || !strings.Contains(rec.Body.String(), "(scope "+needs+")") {
			t.Errorf("%s: %d, want 403 naming %s\n%s", pattern, rec.Code, needs, rec.Body)
		}
	}
	if c := fu.seen(); len(c) != 0 {
		t.Errorf("services called: %v", c)
	}
}

// TestUserAdminViews: a user administrator reaches the users view and its
// actions, and no other console page; the nav and the tabs show only the
// users view; a privileged user is shown without forms, and the role
// checkboxes offer no privileged role.
func TestUserAdminViews(t *testing.T) {
	e, fu := newUsersEnv(t, 1, "openid", identity.ScopeUserAdmin)
	fu.users = append(fu.users, &authv1.UserRecord{Id: 901, Email: "op@lab.example", Scopes: []string{identity.ScopeOperator}})
	b := e.browser()
	b.signIn()
	for pattern, needs := range consolePaths(e.app) {
		method, path, _ := strings.Cut(pattern, " ")
		if method != http.MethodGet || needs != identity.ScopeOperator {
			continue
		}
		if rec := b.do("GET", path, nil); rec.Code != http.StatusForbidden || !strings.Contains(rec.Body.String(), "lacks the operator role (scope fris:operator)") {
			t.Errorf("user admin %s: %d", path, rec.Code)
		}
	}
	if rec := b.do("GET", OperatorPath, nil); rec.Code != http.StatusFound || rec.Header().Get("Location") != UsersPath {
		t.Errorf("operator home: %d to %q", rec.Code, rec.Header().Get("Location"))
	}
	rec := b.do("GET", UsersPath, nil)
	body := rec.Body.String()
	if rec.Code != 200 {
		t.Fatalf("users: %d\n%s", rec.Code, body)
	}
	for _, w := range []string{`href="/explorer/operator/users" aria-current="page">Operations`, "only an operator sees their details and changes them",
		`<th scope="row">op@lab.example</th>`, `<code>fris:operator</code>`, `href="/explorer/operator/users/user?email=ada%40lab.example"`,
		`href="/explorer/operator/users/user?email=u000%40example.org"`} {
		if !strings.Contains(body, w) {
			t.Errorf("users view lacks %q", w)
		}
	}
	for _, w := range []string{BanksPath, SitesPath, MonitoringPath, RegistryPath, ClientsPath, KeysPath, `value="fris:operator"`, `value="fris:user-admin"`,
		`users/user?email=op%40lab.example`} {
		if strings.Contains(body, w) {
			t.Errorf("users view for a user admin has %q", w)
		}
	}
	// The operator's row has no facts: the address, the role, the note.
	if n := strings.Count(body, "<td"); n != 2*6+3 {
		t.Errorf("%d cells, want 6 for each ordinary user and 3 for the operator", n)
	}
	// An ordinary user's page has the forms, without the privileged roles;
	// the operator's page has none, and no facts.
	ada := b.do("GET", UserPath+"?email=ada%40lab.example", nil).Body.String()
	for _, w := range []string{`action="/explorer/operator/users/send-reset"`, `action="/explorer/operator/users/scopes"`, `action="/explorer/operator/users/disable"`} {
		if !strings.Contains(ada, w) {
			t.Errorf("ada's page for a user admin lacks %q", w)
		}
	}
	if strings.Contains(ada, `value="fris:operator"`) || strings.Contains(ada, `value="fris:user-admin"`) {
		t.Error("ada's page offers a user admin a privileged role")
	}
	rec = b.do("GET", UserPath+"?email=op%40lab.example", nil)
	op := rec.Body.String()
	if rec.Code != 200 || !strings.Contains(op, "only an operator sees their details") || !strings.Contains(op, "<code>fris:operator</code>") {
		t.Errorf("the operator's page for a user admin: %d\n%s", rec.Code, op)
	}
	for _, w := range []string{`action="/explorer/operator/users/`, "credentials?email=", "sign-ins?email=", `class="facts"`} {
		if strings.Contains(op, w) {
			t.Errorf("the operator's page for a user admin has %q", w)
		}
	}
	sess, _ := e.store.Get(context.Background(), b.cookies[SessionCookie].Value)
	rec = b.do("POST", UserDisablePath, url.Values{CSRFField: {sess.CSRF}, "email": {"ada@lab.example"}, "confirm": {"yes"}})
	if rec.Code != http.StatusSeeOther {
		t.Errorf("a user admin's disable: %d\n%s", rec.Code, rec.Body)
	}
	// A crafted form granting the operator role: auth refuses, and the
	// page says why.
	rec = b.do("POST", UserScopesPath, url.Values{CSRFField: {sess.CSRF}, "email": {"ada@lab.example"}, "role": {identity.ScopeOperator}})
	if rec.Code != http.StatusForbidden || !strings.Contains(rec.Body.String(), "only an operator grants the role fris:operator") {
		t.Errorf("a user admin's operator grant: %d\n%s", rec.Code, rec.Body)
	}
}

// TestUsersResetAndSignIns: the reset link is sent in the page's language
// (CSRF-checked, audited by auth), and the sign-ins page lists the recent
// sign-ins with method, client and address, escaping what auth sent.
func TestUsersResetAndSignIns(t *testing.T) {
	e, fu := newUsersEnv(t, 1, "openid", identity.ScopeOperator)
	b := e.browser()
	b.signIn()
	sess, _ := e.store.Get(context.Background(), b.cookies[SessionCookie].Value)
	if rec := b.do("POST", UserResetPath, url.Values{CSRFField: {"wrong"}, "email": {"ada@lab.example"}}); rec.Code != http.StatusForbidden {
		t.Errorf("reset without the CSRF token: %d", rec.Code)
	}
	rec := b.do("POST", UserResetPath+"?lang=de", url.Values{CSRFField: {sess.CSRF}, "email": {"ada@lab.example"}}, "Accept-Language", "de")
	if rec.Code != http.StatusSeeOther || !strings.Contains(rec.Header().Get("Location"), "done=reset") {
		t.Fatalf("reset: %d %q", rec.Code, rec.Header().Get("Location"))
	}
	if page := b.do("GET", rec.Header().Get("Location"), nil).Body.String(); !strings.Contains(page, "Ein Link zum Zurücksetzen des Passworts ist an ada@lab.example gesendet.") {
		t.Errorf("no status line:\n%s", page)
	}
	if calls := strings.Join(fu.seen(), "\n"); !strings.Contains(calls, "SendPasswordReset ada@lab.example de as") {
		t.Errorf("calls %v", calls)
	}
	if rec := b.do("POST", UserResetPath, url.Values{CSRFField: {sess.CSRF}, "email": {"nobody@lab.example"}}); rec.Code != http.StatusNotFound {
		t.Errorf("reset of nobody: %d", rec.Code)
	}

	rec = b.do("GET", UserSignInsPath+"?email=ada%40lab.example&lang=en", nil)
	body := rec.Body.String()
	if rec.Code != 200 {
		t.Fatalf("sign-ins: %d\n%s", rec.Code, body)
	}
	for _, w := range []string{"Recent sign-ins", "ada@lab.example", `data-method="password">password`, `data-method="key">key (signed request)`,
		`data-method="other">other`, "<code>198.51.100.7</code>", "<code>2001:db8::9</code>", "<code>explorer</code>", `datetime="2023-11-14T20:13:20Z"`} {
		if !strings.Contains(body, w) {
			t.Errorf("sign-ins page lacks %q", w)
		}
	}
	if strings.Contains(body, "<script>") {
		t.Error("a method auth sent is rendered unescaped")
	}
	if user := b.do("GET", UserPath+"?email=ada%40lab.example", nil).Body.String(); !strings.Contains(user, `href="/explorer/operator/users/sign-ins?email=ada%40lab.example"`) {
		t.Errorf("the user's page lacks the sign-ins link:\n%s", user)
	}
	if rec := b.do("GET", UserSignInsPath, nil); rec.Code != http.StatusBadRequest {
		t.Errorf("sign-ins without email: %d", rec.Code)
	}
	if rec := b.do("GET", UserSignInsPath+"?email=nobody%40x", nil); rec.Code != http.StatusNotFound {
		t.Errorf("sign-ins of nobody: %d", rec.Code)
	}
}
