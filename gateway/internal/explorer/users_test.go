package explorer

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"fris.dev/pkg/identity"
	authv1 "fris.dev/proto/auth/v1"
)

// fakeUsers stands in for auth's admin API: a user table, and each call
// with the identity the Explorer sent.
type fakeUsers struct {
	authv1.AuthAdminClient
	mu    sync.Mutex
	calls []string
	users []*authv1.UserRecord
}

func (f *fakeUsers) saw(ctx context.Context, call string) {
	md, _ := metadata.FromOutgoingContext(ctx)
	f.calls = append(f.calls, call+" as "+strings.Join(md.Get(identity.KeySubject), ","))
}

func (f *fakeUsers) seen() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...)
}

func (f *fakeUsers) find(email string) *authv1.UserRecord {
	for _, u := range f.users {
		if u.GetEmail() == email {
			return u
		}
	}
	return nil
}

func (f *fakeUsers) ListUsers(ctx context.Context, _ *authv1.ListUsersRequest, _ ...grpc.CallOption) (*authv1.ListUsersResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.saw(ctx, "ListUsers")
	return &authv1.ListUsersResponse{Users: f.users}, nil
}

func (f *fakeUsers) CreateUser(ctx context.Context, r *authv1.CreateUserRequest, _ ...grpc.CallOption) (*authv1.CreateUserResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.saw(ctx, "CreateUser "+r.GetEmail()+" "+r.GetRealName()+" ["+strings.Join(r.GetScopes(), " ")+"] pw="+r.GetPassword())
	if f.find(r.GetEmail()) != nil {
		return nil, status.Error(codes.AlreadyExists, "user exists")
	}
	u := &authv1.UserRecord{Id: int32(len(f.users) + 1), Email: r.GetEmail(), RealName: r.GetRealName(), Scopes: r.GetScopes()}
	f.users = append(f.users, u)
	return &authv1.CreateUserResponse{User: u}, nil
}

func (f *fakeUsers) SetUserDisabled(ctx context.Context, r *authv1.SetUserDisabledRequest, _ ...grpc.CallOption) (*authv1.SetUserDisabledResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.saw(ctx, fmt.Sprintf("SetUserDisabled %s %v", r.GetEmail(), r.GetDisabled()))
	u := f.find(r.GetEmail())
	if u == nil {
		return nil, status.Error(codes.NotFound, "no user "+r.GetEmail())
	}
	u.Disabled = r.GetDisabled()
	return &authv1.SetUserDisabledResponse{}, nil
}

func (f *fakeUsers) SetUserScopes(ctx context.Context, r *authv1.SetUserScopesRequest, _ ...grpc.CallOption) (*authv1.SetUserScopesResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.saw(ctx, "SetUserScopes "+r.GetEmail()+" ["+strings.Join(r.GetScopes(), " ")+"]")
	// As auth: a user administrator grants no privileged role.
	md, _ := metadata.FromOutgoingContext(ctx)
	if !slices.Contains(md.Get(identity.KeyScope), identity.ScopeOperator) && slices.ContainsFunc(r.GetScopes(), identity.Privileged) {
		return nil, status.Error(codes.PermissionDenied, "only an operator grants the role fris:operator")
	}
	if u := f.find(r.GetEmail()); u != nil {
		// As auth: a new role for an account with unproven credentials
		// needs confirm.
		if u.GetUnprovenCredentials() && !r.GetConfirm() && slices.ContainsFunc(r.GetScopes(), func(s string) bool { return !slices.Contains(u.GetScopes(), s) }) {
			return nil, status.Error(codes.FailedPrecondition, u.GetEmail()+": it has credentials nobody has proven; confirm to grant the role anyway")
		}
		u.Scopes = r.GetScopes()
	}
	return &authv1.SetUserScopesResponse{}, nil
}

func (f *fakeUsers) RevokeUser(ctx context.Context, r *authv1.RevokeUserRequest, _ ...grpc.CallOption) (*authv1.RevokeUserResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.saw(ctx, "RevokeUser "+r.GetEmail())
	return &authv1.RevokeUserResponse{}, nil
}

// newUsersEnv is newOperatorEnv with auth's admin API and n users.
func newUsersEnv(t *testing.T, n int, scopes ...string) (*env, *fakeUsers) {
	t.Helper()
	e := &env{t: t, idp: newIdP(), mdr: &fakeMDR{}, clock: &clock{t0}}
	v := &scopedVerifier{fakeVerifier: fakeVerifier{refused: map[string]bool{}}, scopes: scopes}
	fu := &fakeUsers{}
	for i := range n {
		fu.users = append(fu.users, &authv1.UserRecord{Id: int32(i + 1), Email: fmt.Sprintf("u%03d@example.org", i), RealName: fmt.Sprintf("Person %03d", i),
			HasPassword: true, Created: uint32(t0.Unix()) - 3600})
	}
	fu.users = append(fu.users, &authv1.UserRecord{Id: 900, Email: "ada@lab.example", RealName: "Ada Lovelace",
		Scopes: []string{identity.ScopeResearcher, "mdr:secret"}, Created: uint32(t0.Unix()) - 86400,
		LastSignIn: uint32(t0.Unix()) - 7200, LastSignInAddr: "198.51.100.7"})
	e.store = NewMemory(100, e.clock.now)
	a, err := New(Config{MDR: e.mdr, Verifier: v, Loopback: e.idp, Store: e.store, Now: e.clock.now,
		ClientID: "explorer", ClientSecret: "s3cret-s3cret-s3cret", Users: fu})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	a.Register(mux)
	e.app, e.h = a, mux
	return e, fu
}

var userForms = []string{UserCreatePath, UserDisablePath, UserEnablePath, UserScopesPath, UserSessionsPath, UserResetPath}

// TestUsersRefused: without the operator scope the users view and its
// forms answer 403 with the reason and call nothing.
func TestUsersRefused(t *testing.T) {
	e, fu := newUsersEnv(t, 1, "openid", identity.ScopeResearcher)
	b := e.browser()
	b.signIn()
	if rec := b.do("GET", UsersPath, nil); rec.Code != http.StatusForbidden || !strings.Contains(rec.Body.String(), "lacks the role (scope fris:operator or fris:user-admin)") {
		t.Errorf("researcher: %d\n%s", rec.Code, rec.Body)
	}
	sess, _ := e.store.Get(context.Background(), b.cookies[SessionCookie].Value)
	for _, p := range userForms {
		form := url.Values{CSRFField: {sess.CSRF}, "email": {"ada@lab.example"}, "confirm": {"yes"}}
		if rec := b.do("POST", p, form); rec.Code != http.StatusForbidden {
			t.Errorf("researcher POST %s: %d", p, rec.Code)
		}
	}
	if c := fu.seen(); len(c) != 0 {
		t.Errorf("auth called: %v", c)
	}
}

// TestUsersList: search by email or name, pages of usersPerPage, German.
func TestUsersList(t *testing.T) {
	e, fu := newUsersEnv(t, 30, "openid", identity.ScopeOperator)
	b := e.browser()
	b.signIn()
	for _, tc := range []struct {
		target       string
		want, absent []string
	}{
		{UsersPath, []string{"1–25 of 31", "ada@lab.example", "u023@example.org", `href="/explorer/operator/users?page=2" rel="next"`, "Page 1 of 2",
			`aria-current="page">Users`, `<td class="roles"><code>broker:researcher</code> <code>mdr:secret</code> </td>`,
			`<th scope="col" data-col="email" aria-sort="ascending"><a href="/explorer/operator/users?dir=desc&amp;sort=email">`,
			`<a href="/explorer/operator/users?dir=asc&amp;sort=lastsignin">Last sign-in</a>`,
			`<a class="user" href="/explorer/operator/users/user?email=ada%40lab.example">ada@lab.example</a>`,
			`<td><time datetime="2023-11-14T20:13:20Z">2023-11-14 20:13 UTC</time> <span class="muted">(2 h ago)</span></td>`,
			`<td><span class="muted">none recorded</span></td>`, `<td data-state="active">active`, `<td data-factor="none">`},
			[]string{"u024@example.org", `rel="prev"`, `action="/explorer/operator/users/disable"`, "<details>"}},
		{UsersPath + "?page=2", []string{"26–31 of 31", "u029@example.org", `rel="prev"`}, []string{"ada@lab.example", `rel="next"`}},
		{UsersPath + "?page=99", []string{"26–31 of 31"}, nil},
		{UsersPath + "?q=LOVELACE", []string{"1–1 of 1", "ada@lab.example"}, []string{"u000@example.org", "Page 1"}},
		{UsersPath + "?q=u01", []string{"1–10 of 10", "u019@example.org"}, []string{"u020@example.org"}},
		{UsersPath + "?q=nobody", []string{"No user matches."}, nil},
		// A status line the list does not bear out is a forged link's.
		{UsersPath + "?done=disabled&user=ada%40lab.example", nil, []string{`class="done"`}},
	} {
		rec := b.do("GET", tc.target, nil)
		if rec.Code != 200 {
			t.Fatalf("%s: %d\n%s", tc.target, rec.Code, rec.Body)
		}
		body := rec.Body.String()
		for _, w := range tc.want {
			if !strings.Contains(body, w) {
				t.Errorf("%s lacks %q", tc.target, w)
			}
		}
		for _, w := range tc.absent {
			if strings.Contains(body, w) {
				t.Errorf("%s has %q", tc.target, w)
			}
		}
	}
	de := b.do("GET", UsersPath, nil, "Accept-Language", "de").Body.String()
	for _, w := range []string{"Benutzer anlegen", "Zweiter Faktor", "Letzte Anmeldung", "Zustand", "Seite 1 von 2"} {
		if !strings.Contains(de, w) {
			t.Errorf("German page lacks %q", w)
		}
	}
	for _, c := range fu.seen() {
		if c != "ListUsers as 42" {
			t.Errorf("call %q", c)
		}
	}
}

// TestUsersActions: each form needs this origin and the CSRF token, the
// destructive ones the confirmation; each reaches auth with the operator's
// identity, and the list then says what was done.
func TestUsersActions(t *testing.T) {
	e, fu := newUsersEnv(t, 0, "openid", identity.ScopeOperator)
	b := e.browser()
	b.signIn()
	sess, _ := e.store.Get(context.Background(), b.cookies[SessionCookie].Value)
	tok := sess.CSRF
	for _, tc := range []struct {
		name, path string
		form       url.Values
		hdr        []string
		want       int
	}{
		{"no token", UserCreatePath, url.Values{"email": {"new@lab.example"}}, nil, 403},
		{"wrong token", UserCreatePath, url.Values{CSRFField: {"x"}, "email": {"new@lab.example"}}, nil, 403},
		{"another origin", UserCreatePath, url.Values{CSRFField: {tok}, "email": {"new@lab.example"}}, []string{"Origin", "https://evil.example"}, 403},
		{"cross-site", UserSessionsPath, url.Values{CSRFField: {tok}, "email": {"ada@lab.example"}, "confirm": {"yes"}}, []string{"Sec-Fetch-Site", "cross-site"}, 403},
		{"no email", UserCreatePath, url.Values{CSRFField: {tok}}, nil, 400},
		{"unknown role", UserScopesPath, url.Values{CSRFField: {tok}, "email": {"ada@lab.example"}, "role": {"root"}}, nil, 400},
		{"scope with a quote", UserScopesPath, url.Values{CSRFField: {tok}, "email": {"ada@lab.example"}, "other": {`mdr:"x`}}, nil, 400},
		{"disable unconfirmed", UserDisablePath, url.Values{CSRFField: {tok}, "email": {"ada@lab.example"}}, nil, 400},
		{"disable oneself", UserDisablePath, url.Values{CSRFField: {tok}, "email": {sess.User.Email}, "confirm": {"yes"}}, nil, 400},
		{"end sessions unconfirmed", UserSessionsPath, url.Values{CSRFField: {tok}, "email": {"ada@lab.example"}, "confirm": {"on"}}, nil, 400},
	} {
		if rec := b.do("POST", tc.path, tc.form, tc.hdr...); rec.Code != tc.want {
			t.Errorf("%s: %d, want %d\n%s", tc.name, rec.Code, tc.want, rec.Body)
		}
	}
	if rec := b.do("POST", UserDisablePath, url.Values{CSRFField: {tok}, "email": {"ADA@example.org"}, "confirm": {"yes"}}); !strings.Contains(rec.Body.String(), "You cannot disable your own account") {
		t.Errorf("disabling oneself: %d\n%s", rec.Code, rec.Body)
	}
	if c := fu.seen(); len(c) != 0 {
		t.Fatalf("a refused form reached auth: %v", c)
	}
	steps := []struct {
		path string
		form url.Values
		done string
	}{
		{UserCreatePath, url.Values{"email": {"new@lab.example"}, "name": {"Grace Hopper"}, "role": {identity.ScopeResearcher, identity.ScopeResearcher}, "other": {"mdr:a  mdr:b"}}, "new@lab.example is created."},
		{UserScopesPath, url.Values{"email": {"new@lab.example"}, "role": {identity.ScopeOperator}}, "The roles and scopes of new@lab.example are saved"},
		{UserDisablePath, url.Values{"email": {"new@lab.example"}, "confirm": {"yes"}}, "new@lab.example is disabled."},
		{UserEnablePath, url.Values{"email": {"new@lab.example"}}, "new@lab.example is enabled."},
		{UserSessionsPath, url.Values{"email": {"new@lab.example"}, "confirm": {"yes"}}, "Every session of new@lab.example is ended."},
	}
	for _, s := range steps {
		s.form.Set(CSRFField, tok)
		rec := b.do("POST", s.path, s.form, "Origin", "http://gw.test", "Sec-Fetch-Site", "same-origin")
		if rec.Code != http.StatusSeeOther || !strings.HasPrefix(rec.Header().Get("Location"), UsersPath+"?") {
			t.Fatalf("%s: %d %q\n%s", s.path, rec.Code, rec.Header().Get("Location"), rec.Body)
		}
		if body := b.do("GET", rec.Header().Get("Location"), nil).Body.String(); !strings.Contains(body, s.done) {
			t.Errorf("after %s the page lacks %q", s.path, s.done)
		}
	}
	if rec := b.do("POST", UserCreatePath, url.Values{CSRFField: {tok}, "email": {"new@lab.example"}}); rec.Code != http.StatusConflict ||
		!strings.Contains(rec.Body.String(), "The service refused: user exists") {
		t.Errorf("a second create: %d\n%s", rec.Code, rec.Body)
	}
	var changes []string
	for _, c := range fu.seen() {
		if !strings.HasPrefix(c, "ListUsers") {
			changes = append(changes, c)
		}
	}
	want := []string{
		"CreateUser new@lab.example Grace Hopper [broker:researcher mdr:a mdr:b] pw= as 42",
		"SetUserScopes new@lab.example [fris:operator] as 42",
		"SetUserDisabled new@lab.example true as 42",
		"SetUserDisabled new@lab.example false as 42",
		"RevokeUser new@lab.example as 42",
		"CreateUser new@lab.example  [] pw= as 42",
	}
	if strings.Join(changes, "\n") != strings.Join(want, "\n") {
		t.Errorf("calls:\n%s\nwant:\n%s", strings.Join(changes, "\n"), strings.Join(want, "\n"))
	}
}
