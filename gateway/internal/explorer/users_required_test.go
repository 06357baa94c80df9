package explorer

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"fris.dev/pkg/identity"
	authv1 "fris.dev/proto/auth/v1"
)

// refusePrivileged is auth's rule for a user administrator's call on a
// privileged user.
func (f *fakeUsers) refusePrivileged(ctx context.Context, email string) error {
	md, _ := metadata.FromOutgoingContext(ctx)
	u := f.find(email)
	if u == nil {
		return status.Error(codes.NotFound, "no user "+email)
	}
	if !slices.Contains(md.Get(identity.KeyScope), identity.ScopeOperator) && slices.ContainsFunc(u.GetScopes(), identity.Privileged) {
		return status.Error(codes.PermissionDenied, "only an operator changes a user who holds fris:operator")
	}
	return nil
}

func (f *fakeUsers) SetRequiredActions(ctx context.Context, r *authv1.SetRequiredActionsRequest, _ ...grpc.CallOption) (*authv1.SetRequiredActionsResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.saw(ctx, "SetRequiredActions "+r.GetEmail()+" ["+strings.Join(r.GetActions(), " ")+"]")
	if err := f.refusePrivileged(ctx, r.GetEmail()); err != nil {
		return nil, err
	}
	f.find(r.GetEmail()).RequiredActions = r.GetActions()
	return &authv1.SetRequiredActionsResponse{}, nil
}

const fakeTempPassword = "Tmp-0123456789abcdefghij"

func (f *fakeUsers) SetTemporaryPassword(ctx context.Context, r *authv1.SetTemporaryPasswordRequest, _ ...grpc.CallOption) (*authv1.SetTemporaryPasswordResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.saw(ctx, fmt.Sprintf("SetTemporaryPassword %s optional=%v", r.GetEmail(), r.GetKeepOptional()))
	if err := f.refusePrivileged(ctx, r.GetEmail()); err != nil {
		return nil, err
	}
	return &authv1.SetTemporaryPasswordResponse{Password: fakeTempPassword}, nil
}

// TestUsersRequiredActions: the user's page shows the required actions as
// checkboxes as auth has them; the form (same origin, CSRF) replaces them,
// an unknown one is refused, and a user administrator's try on a
// privileged user answers auth's reason.
func TestUsersRequiredActions(t *testing.T) {
	e, fu := newUsersEnv(t, 1, "openid", identity.ScopeOperator)
	fu.find("ada@lab.example").RequiredActions = []string{"verify_email"}
	b := e.browser()
	b.signIn()
	sess, _ := e.store.Get(context.Background(), b.cookies[SessionCookie].Value)
	page := b.do("GET", UserPath+"?email=ada%40lab.example", nil).Body.String()
	for _, w := range []string{`action="/explorer/operator/users/required-actions"`, `name="action" value="verify_email" checked>`,
		`name="action" value="change_password">`, `name="action" value="add_second_factor">`, `action="/explorer/operator/users/temporary-password"`} {
		if !strings.Contains(page, w) {
			t.Errorf("user page lacks %q", w)
		}
	}
	form := url.Values{CSRFField: {sess.CSRF}, "email": {"ada@lab.example"}, "action": {"change_password", "add_second_factor"}}
	if rec := b.do("POST", UserActionsPath, url.Values{CSRFField: {"wrong"}, "email": {"ada@lab.example"}}); rec.Code != http.StatusForbidden {
		t.Errorf("without the CSRF token: %d", rec.Code)
	}
	if rec := b.do("POST", UserActionsPath, form, "Origin", "https://evil.example"); rec.Code != http.StatusForbidden {
		t.Errorf("cross-site: %d", rec.Code)
	}
	rec := b.do("POST", UserActionsPath, form)
	if rec.Code != http.StatusSeeOther || !strings.Contains(rec.Header().Get("Location"), "done=actions") {
		t.Fatalf("set: %d %q\n%s", rec.Code, rec.Header().Get("Location"), rec.Body)
	}
	if calls := strings.Join(fu.seen(), "\n"); !strings.Contains(calls, "SetRequiredActions ada@lab.example [change_password add_second_factor] as") {
		t.Errorf("calls %v", calls)
	}
	bad := url.Values{CSRFField: {sess.CSRF}, "email": {"ada@lab.example"}, "action": {"dance"}}
	if rec := b.do("POST", UserActionsPath, bad); rec.Code != http.StatusBadRequest {
		t.Errorf("unknown action: %d", rec.Code)
	}
	clear := url.Values{CSRFField: {sess.CSRF}, "email": {"ada@lab.example"}}
	if rec := b.do("POST", UserActionsPath, clear); rec.Code != http.StatusSeeOther || len(fu.find("ada@lab.example").GetRequiredActions()) != 0 {
		t.Errorf("clear: %d %v", rec.Code, fu.find("ada@lab.example").GetRequiredActions())
	}

	ua, fua := newUsersEnv(t, 1, "openid", identity.ScopeUserAdmin)
	fua.users = append(fua.users, &authv1.UserRecord{Id: 901, Email: "op@lab.example", Scopes: []string{identity.ScopeOperator}})
	bu := ua.browser()
	bu.signIn()
	usess, _ := ua.store.Get(context.Background(), bu.cookies[SessionCookie].Value)
	rec = bu.do("POST", UserActionsPath, url.Values{CSRFField: {usess.CSRF}, "email": {"op@lab.example"}, "action": {"change_password"}})
	if rec.Code != http.StatusForbidden || !strings.Contains(rec.Body.String(), "only an operator changes") {
		t.Errorf("a user admin on an operator: %d\n%s", rec.Code, rec.Body)
	}
	rec = bu.do("POST", UserTempPasswordPath, url.Values{CSRFField: {usess.CSRF}, "email": {"op@lab.example"}, "confirm": {"yes"}})
	if rec.Code != http.StatusForbidden || strings.Contains(rec.Body.String(), fakeTempPassword) {
		t.Errorf("a user admin's temporary password for an operator: %d\n%s", rec.Code, rec.Body)
	}
	if calls := strings.Join(fua.seen(), "\n"); !strings.Contains(calls, "SetRequiredActions op@lab.example") {
		t.Errorf("calls %v", calls)
	}
}

// TestUsersTemporaryPassword: behind a confirmation, the temporary
// password is shown once on the POST's answer (no-store, never in a URL),
// with the change required unless the operator unchecked it.
func TestUsersTemporaryPassword(t *testing.T) {
	e, fu := newUsersEnv(t, 1, "openid", identity.ScopeOperator)
	b := e.browser()
	b.signIn()
	sess, _ := e.store.Get(context.Background(), b.cookies[SessionCookie].Value)
	if rec := b.do("POST", UserTempPasswordPath, url.Values{CSRFField: {sess.CSRF}, "email": {"ada@lab.example"}}); rec.Code != http.StatusBadRequest {
		t.Errorf("without confirm: %d", rec.Code)
	}
	if rec := b.do("POST", UserTempPasswordPath, url.Values{CSRFField: {"x"}, "email": {"ada@lab.example"}, "confirm": {"yes"}}); rec.Code != http.StatusForbidden {
		t.Errorf("without the CSRF token: %d", rec.Code)
	}
	if rec := b.do("POST", UserTempPasswordPath, url.Values{CSRFField: {sess.CSRF}, "email": {"ada@lab.example"}, "confirm": {"yes"}}, "Origin", "https://evil.example"); rec.Code != http.StatusForbidden {
		t.Errorf("cross-site: %d", rec.Code)
	}
	if n := strings.Count(strings.Join(fu.seen(), "\n"), "SetTemporaryPassword"); n != 0 {
		t.Fatalf("refused forms called auth %d times", n)
	}
	rec := b.do("POST", UserTempPasswordPath, url.Values{CSRFField: {sess.CSRF}, "email": {"ada@lab.example"}, "confirm": {"yes"}})
	body := rec.Body.String()
	if rec.Code != 200 || rec.Header().Get("Location") != "" || rec.Header().Get("Cache-Control") != "no-store" ||
		!strings.Contains(body, `<code id="temp-password" class="secret">`+fakeTempPassword+`</code>`) || !strings.Contains(body, "must choose a new password at the next sign-in") {
		t.Fatalf("set: %d %v\n%s", rec.Code, rec.Header(), body)
	}
	rec = b.do("POST", UserTempPasswordPath, url.Values{CSRFField: {sess.CSRF}, "email": {"ada@lab.example"}, "confirm": {"yes"}, "keep_optional": {"yes"}})
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), "no change is required") {
		t.Errorf("optional: %d\n%s", rec.Code, rec.Body)
	}
	calls := strings.Join(fu.seen(), "\n")
	if !strings.Contains(calls, "SetTemporaryPassword ada@lab.example optional=false as") || !strings.Contains(calls, "SetTemporaryPassword ada@lab.example optional=true as") {
		t.Errorf("calls %v", calls)
	}
	if rec := b.do("POST", UserTempPasswordPath, url.Values{CSRFField: {sess.CSRF}, "email": {"nobody@lab.example"}, "confirm": {"yes"}}); rec.Code != http.StatusNotFound {
		t.Errorf("nobody: %d", rec.Code)
	}
}
