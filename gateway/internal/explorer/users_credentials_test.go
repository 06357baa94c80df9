package explorer

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"fris.dev/pkg/identity"
	authv1 "fris.dev/proto/auth/v1"
)

// ListUserCredentials: mallory@ has a key nobody proved; a user
// administrator sees nothing of a privileged user's.
func (f *fakeUsers) ListUserCredentials(ctx context.Context, r *authv1.ListUserCredentialsRequest, _ ...grpc.CallOption) (*authv1.ListUserCredentialsResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.saw(ctx, "ListUserCredentials "+r.GetEmail())
	u := f.find(r.GetEmail())
	if u == nil {
		return nil, status.Error(codes.NotFound, "no user has this email address")
	}
	if err := fakeMayTouch(ctx, u); err != nil {
		return nil, err
	}
	out := &authv1.ListUserCredentialsResponse{Credentials: []*authv1.Credential{{Kind: "password", AddedBy: "operator", Proven: true, Created: u.GetCreated()}}}
	if u.GetUnprovenCredentials() {
		out.Credentials = append(out.Credentials, &authv1.Credential{Kind: "key", Id: "31", Description: "<b>laptop</b>", AddedBy: "registration", Created: u.GetCreated()})
	}
	out.Removed = []*authv1.Credential{{Kind: "key", Id: "30", AddedBy: "registration", Removed: u.GetCreated()}}
	return out, nil
}

func (f *fakeUsers) RemoveUserCredential(ctx context.Context, r *authv1.RemoveUserCredentialRequest, _ ...grpc.CallOption) (*authv1.RemoveUserCredentialResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.saw(ctx, "RemoveUserCredential "+r.GetEmail()+" "+r.GetKind()+" "+r.GetId())
	u := f.find(r.GetEmail())
	if u == nil || r.GetKind() != "key" || r.GetId() != "31" || !u.GetUnprovenCredentials() {
		return nil, status.Error(codes.NotFound, "no such key")
	}
	if err := fakeMayTouch(ctx, u); err != nil {
		return nil, err
	}
	u.UnprovenCredentials = false
	return &authv1.RemoveUserCredentialResponse{}, nil
}

func fakeMayTouch(ctx context.Context, u *authv1.UserRecord) error {
	md, _ := metadata.FromOutgoingContext(ctx)
	for _, s := range u.GetScopes() {
		if identity.Privileged(s) && !strings.Contains(strings.Join(md.Get(identity.KeyScope), " "), identity.ScopeOperator) {
			return status.Error(codes.PermissionDenied, "the user holds the role "+s+": only an operator changes them")
		}
	}
	return nil
}

// TestUserCredentials: the users list marks an account with unproven
// credentials or an unverified address; its credentials page lists them
// (escaped) with what was removed, removes a key after the confirmation,
// and a grant to such an account asks to be confirmed first.
func TestUserCredentials(t *testing.T) {
	e, fu := newUsersEnv(t, 0, "openid", identity.ScopeOperator)
	fu.users = append(fu.users, &authv1.UserRecord{Id: 902, Email: "mallory@lab.example", UnprovenCredentials: true, Created: uint32(t0.Unix()) - 60})
	fu.users[0].EmailVerified = true // ada
	b := e.browser()
	b.signIn()
	sess, _ := e.store.Get(context.Background(), b.cookies[SessionCookie].Value)

	list := b.do("GET", UsersPath, nil).Body.String()
	if !strings.Contains(list, `data-mark="unproven">unproven credentials`) {
		t.Errorf("users list lacks the mark:\n%s", list)
	}
	user := b.do("GET", UserPath+"?email=mallory%40lab.example", nil).Body.String()
	for _, w := range []string{`data-mark="unproven">unproven credentials`, `href="/explorer/operator/users/credentials?email=mallory%40lab.example"`, "some nobody has proven"} {
		if !strings.Contains(user, w) {
			t.Errorf("the user's page lacks %q:\n%s", w, user)
		}
	}
	if strings.Count(list, `data-mark=`) != 1 {
		t.Errorf("marks: %d, want only mallory's", strings.Count(list, `data-mark=`))
	}

	rec := b.do("GET", UserCredentialsPath+"?email=mallory%40lab.example", nil)
	page := rec.Body.String()
	for _, w := range []string{"Ways to sign in", `<tr data-kind="key" data-id="31" data-unproven="true">`, "&lt;b&gt;laptop&lt;/b&gt;", "registered without sign-in",
		`action="/explorer/operator/users/credentials/remove"`, `<li data-kind="key" data-id="30">`, "Removed when the owner confirmed the address"} {
		if rec.Code != 200 || !strings.Contains(page, w) {
			t.Fatalf("credentials page = %d, lacks %q:\n%s", rec.Code, w, page)
		}
	}
	if strings.Count(page, `action="/explorer/operator/users/credentials/remove"`) != 1 {
		t.Error("the password has a remove form")
	}
	if de := b.do("GET", UserCredentialsPath+"?email=mallory%40lab.example", nil, "Accept-Language", "de").Body.String(); !strings.Contains(de, "unbestätigt") {
		t.Error("the German page lacks the unproven mark")
	}
	if rec := b.do("GET", UserCredentialsPath+"?email=nobody%40x", nil); rec.Code != http.StatusNotFound {
		t.Errorf("credentials of nobody: %d", rec.Code)
	}

	// A grant asks for confirmation, with auth's reason and the same roles.
	grant := url.Values{CSRFField: {sess.CSRF}, "email": {"mallory@lab.example"}, "role": {identity.ScopeResearcher}}
	rec = b.do("POST", UserScopesPath, grant)
	if rec.Code != http.StatusConflict || !strings.Contains(rec.Body.String(), "confirm to grant the role anyway") ||
		!strings.Contains(rec.Body.String(), `name="role" value="broker:researcher"`) || !strings.Contains(rec.Body.String(), `name="confirm" value="yes"`) {
		t.Fatalf("unconfirmed grant = %d:\n%s", rec.Code, rec.Body)
	}
	if u := fu.find("mallory@lab.example"); len(u.GetScopes()) != 0 {
		t.Fatalf("granted without confirmation: %v", u.GetScopes())
	}
	grant.Set("confirm", "yes")
	if rec := b.do("POST", UserScopesPath, grant); rec.Code != http.StatusSeeOther {
		t.Fatalf("confirmed grant = %d:\n%s", rec.Code, rec.Body)
	}

	// Removing the key: CSRF, this origin and the checkbox first.
	rm := url.Values{CSRFField: {sess.CSRF}, "email": {"mallory@lab.example"}, "kind": {"key"}, "id": {"31"}}
	if rec := b.do("POST", UserCredRemovePath, rm); rec.Code != http.StatusBadRequest {
		t.Errorf("without the confirmation: %d", rec.Code)
	}
	rm.Set("confirm", "yes")
	if rec := b.do("POST", UserCredRemovePath, rm, "Sec-Fetch-Site", "cross-site"); rec.Code != http.StatusForbidden {
		t.Errorf("from another site: %d", rec.Code)
	}
	bad := url.Values{CSRFField: {"nope"}, "email": {"mallory@lab.example"}, "kind": {"key"}, "id": {"31"}, "confirm": {"yes"}}
	if rec := b.do("POST", UserCredRemovePath, bad); rec.Code != http.StatusForbidden {
		t.Errorf("without the CSRF token: %d", rec.Code)
	}
	rec = b.do("POST", UserCredRemovePath, rm)
	if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != UserCredentialsPath+"?done=removed&email=mallory%40lab.example" {
		t.Fatalf("remove = %d %q\n%s", rec.Code, rec.Header().Get("Location"), rec.Body)
	}
	if calls := strings.Join(fu.seen(), "\n"); strings.Count(calls, "RemoveUserCredential mallory@lab.example key 31 as") != 1 {
		t.Errorf("calls:\n%s", calls)
	}
	if page := b.do("GET", rec.Header().Get("Location"), nil).Body.String(); !strings.Contains(page, "every sign-in of the user has ended") {
		t.Errorf("no status line:\n%s", page)
	}
	if rec := b.do("POST", UserCredRemovePath, rm); rec.Code != http.StatusNotFound {
		t.Errorf("removed twice: %d", rec.Code)
	}
}

// A user administrator is refused a privileged user's credentials, with
// auth's reason, and the list offers no link to them.
func TestUserAdminCredentialsOfAnOperator(t *testing.T) {
	e, fu := newUsersEnv(t, 0, "openid", identity.ScopeUserAdmin)
	fu.users = append(fu.users, &authv1.UserRecord{Id: 901, Email: "op@lab.example", Scopes: []string{identity.ScopeOperator}})
	b := e.browser()
	b.signIn()
	if rec := b.do("GET", UserCredentialsPath+"?email=op%40lab.example", nil); rec.Code != http.StatusForbidden || !strings.Contains(rec.Body.String(), "only an operator changes them") {
		t.Errorf("a user admin on an operator's credentials: %d\n%s", rec.Code, rec.Body)
	}
	for _, p := range []string{UsersPath, UserPath + "?email=op%40lab.example"} {
		if page := b.do("GET", p, nil).Body.String(); strings.Contains(page, "credentials?email=op%40lab.example") {
			t.Errorf("%s links an operator's credentials for a user admin", p)
		}
	}
}
