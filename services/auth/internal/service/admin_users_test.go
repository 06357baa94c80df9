package service

import (
	"context"
	"slices"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"

	"fris.dev/pkg/identity"
	authv1 "fris.dev/proto/auth/v1"
)

// as is ctx carrying the identity the gateway would forward.
func as(scopes ...string) context.Context {
	return metadata.AppendToOutgoingContext(context.Background(), identity.Identity{Subject: "42", Scopes: scopes}.Pairs()...)
}

// TestSendPasswordReset: an operator mails a user the forgot-password
// page's link, which sets a new password once; unknown and disabled users
// are refused, not silently skipped (the operator should know).
func TestSendPasswordReset(t *testing.T) {
	e, box := newAccountEnv(t)
	e.seed(t)
	ctx := as(identity.ScopeOperator)
	if _, err := e.adm.SendPasswordReset(ctx, &authv1.SendPasswordResetRequest{Email: "Ada@example.org", Lang: "de"}); err != nil {
		t.Fatal(err)
	}
	mails := box.resets()
	if len(mails) != 0 {
		t.Fatalf("a German mail in English: %+v", mails)
	}
	all := box.all()
	m := all[len(all)-1]
	if m.to != "ada@example.org" || !strings.Contains(m.subject, "Passwort zurücksetzen") {
		t.Fatalf("mail %+v", m)
	}
	token := tokenOf(t, m, "/oauth2/reset")
	if _, err := e.pub.ResetPassword(context.Background(), &authv1.ResetPasswordRequest{Token: token, Password: "a new horse battery"}); err != nil {
		t.Fatal(err)
	}
	_, err := e.pub.ResetPassword(context.Background(), &authv1.ResetPasswordRequest{Token: token, Password: "a third horse"})
	wantCode(t, err, codes.NotFound)

	_, err = e.adm.SendPasswordReset(ctx, &authv1.SendPasswordResetRequest{Email: "nobody@example.org"})
	wantCode(t, err, codes.NotFound)
	if _, err := e.adm.SetUserDisabled(ctx, &authv1.SetUserDisabledRequest{Email: "ada@example.org", Disabled: true}); err != nil {
		t.Fatal(err)
	}
	_, err = e.adm.SendPasswordReset(ctx, &authv1.SendPasswordResetRequest{Email: "ada@example.org"})
	wantCode(t, err, codes.InvalidArgument)
}

// TestUserAdminCannotEscalate: a user administrator manages ordinary users
// but neither grants a privileged role nor touches a user who holds one,
// themselves included; an operator and the admin certificate (no identity)
// may.
func TestUserAdminCannotEscalate(t *testing.T) {
	e, _ := newAccountEnv(t)
	e.seed(t)
	bg := context.Background()
	if _, err := e.adm.CreateUser(bg, &authv1.CreateUserRequest{Email: "op@example.org", Scopes: []string{identity.ScopeOperator}}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.adm.CreateUser(bg, &authv1.CreateUserRequest{Email: "ua@example.org", Scopes: []string{identity.ScopeUserAdmin}}); err != nil {
		t.Fatal(err)
	}
	ua := as(identity.ScopeUserAdmin)
	// Ordinary users: every user method.
	if _, err := e.adm.CreateUser(ua, &authv1.CreateUserRequest{Email: "new@example.org", Scopes: []string{identity.ScopeResearcher}}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.adm.SetUserScopes(ua, &authv1.SetUserScopesRequest{Email: "ada@example.org", Scopes: []string{identity.ScopeResearcher, "mdr:x"}, Confirm: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.adm.SetUserDisabled(ua, &authv1.SetUserDisabledRequest{Email: "ada@example.org", Disabled: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.adm.SetUserDisabled(ua, &authv1.SetUserDisabledRequest{Email: "ada@example.org"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.adm.RevokeUser(ua, &authv1.RevokeUserRequest{Email: "ada@example.org"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.adm.SendPasswordReset(ua, &authv1.SendPasswordResetRequest{Email: "ada@example.org"}); err != nil {
		t.Fatal(err)
	}
	// Granting a privileged role, or acting on a privileged user: refused.
	for name, err := range map[string]error{
		"create an operator":   first(e.adm.CreateUser(ua, &authv1.CreateUserRequest{Email: "x@example.org", Scopes: []string{identity.ScopeOperator}})),
		"create a user admin":  first(e.adm.CreateUser(ua, &authv1.CreateUserRequest{Email: "y@example.org", Scopes: []string{identity.ScopeUserAdmin}})),
		"grant operator":       first(e.adm.SetUserScopes(ua, &authv1.SetUserScopesRequest{Email: "ada@example.org", Scopes: []string{identity.ScopeOperator}})),
		"grant user admin":     first(e.adm.SetUserScopes(ua, &authv1.SetUserScopesRequest{Email: "ada@example.org", Scopes: []string{identity.ScopeUserAdmin}})),
		"demote an operator":   first(e.adm.SetUserScopes(ua, &authv1.SetUserScopesRequest{Email: "op@example.org"})),
		"disable an operator":  first(e.adm.SetUserDisabled(ua, &authv1.SetUserDisabledRequest{Email: "op@example.org", Disabled: true})),
		"end an operator's":    first(e.adm.RevokeUser(ua, &authv1.RevokeUserRequest{Email: "op@example.org"})),
		"reset an operator's":  first(e.adm.SendPasswordReset(ua, &authv1.SendPasswordResetRequest{Email: "op@example.org"})),
		"change a user admin":  first(e.adm.SetUserScopes(ua, &authv1.SetUserScopesRequest{Email: "ua@example.org", Scopes: []string{identity.ScopeResearcher}})),
		"disable a user admin": first(e.adm.SetUserDisabled(ua, &authv1.SetUserDisabledRequest{Email: "ua@example.org", Disabled: true})),
	} {
		t.Run(name, func(t *testing.T) { wantCode(t, err, codes.PermissionDenied) })
	}
	if _, err := e.store.GetUserByEmail(bg, "x@example.org"); err == nil {
		t.Fatal("a refused create made the user")
	}
	if u, _ := e.store.GetUserByEmail(bg, "op@example.org"); u.Disabled || len(u.Scopes) != 1 {
		t.Fatalf("the operator changed: %+v", u)
	}
	// An operator, and bin/auth, may.
	if _, err := e.adm.SetUserScopes(as(identity.ScopeOperator), &authv1.SetUserScopesRequest{Email: "ada@example.org", Scopes: []string{identity.ScopeUserAdmin}, Confirm: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.adm.SetUserDisabled(bg, &authv1.SetUserDisabledRequest{Email: "op@example.org", Disabled: true}); err != nil {
		t.Fatal(err)
	}
}

func first[T any](_ T, err error) error { return err }

// TestUserSignIns: the recent sign-ins, newest first, with their method,
// client and address; key sign-ins too.
func TestUserSignIns(t *testing.T) {
	e := newEnv(t)
	clientID, _ := e.seed(t)
	ctx := metadata.AppendToOutgoingContext(context.Background(), identity.KeyClientAddr, "198.51.100.7")
	for range 2 {
		if _, err := e.pub.Login(ctx, &authv1.LoginRequest{Request: &authv1.AuthorizeRequest{ClientId: clientID}, Email: "ada@example.org", Password: "correct horse"}); err != nil {
			t.Fatal(err)
		}
	}
	res, err := e.adm.ListUserSignIns(as(identity.ScopeUserAdmin), &authv1.ListUserSignInsRequest{Email: "ADA@example.org"})
	if err != nil || len(res.GetSignIns()) != 2 {
		t.Fatalf("ListUserSignIns = %v %v", res, err)
	}
	s := res.GetSignIns()[0]
	if s.GetMethod() != "password" || s.GetClientId() != clientID || s.GetAddr() != "198.51.100.7" || s.GetAt() == 0 || s.GetAt() < res.GetSignIns()[1].GetAt() {
		t.Fatalf("sign-in %v", s)
	}
	_, err = e.adm.ListUserSignIns(context.Background(), &authv1.ListUserSignInsRequest{Email: "nobody@example.org"})
	wantCode(t, err, codes.NotFound)
}

// TestUserAdminSeesNothingOfPrivileged: a user administrator learns that
// an operator's account exists and why it is out of reach, nothing more:
// its sign-ins are refused (PermissionDenied), and the listing carries
// its id, address and privileged role only (no name, state, sign-in or
// its address). An ordinary user's record is whole; an operator and the
// admin certificate see everything.
func TestUserAdminSeesNothingOfPrivileged(t *testing.T) {
	e := newEnv(t)
	clientID, _ := e.seed(t)
	bg := context.Background()
	if _, err := e.adm.CreateUser(bg, &authv1.CreateUserRequest{Email: "op@example.org", RealName: "Olga Operator", Password: "operator horse",
		EmailVerified: true, Scopes: []string{identity.ScopeOperator, "mdr:secret"}}); err != nil {
		t.Fatal(err)
	}
	ctx := metadata.AppendToOutgoingContext(bg, identity.KeyClientAddr, "198.51.100.7")
	for _, email := range []string{"op@example.org", "ada@example.org"} {
		pw := map[string]string{"op@example.org": "operator horse", "ada@example.org": "correct horse"}[email]
		if _, err := e.pub.Login(ctx, &authv1.LoginRequest{Request: &authv1.AuthorizeRequest{ClientId: clientID}, Email: email, Password: pw}); err != nil {
			t.Fatal(err)
		}
	}
	ua := as(identity.ScopeUserAdmin)
	_, err := e.adm.ListUserSignIns(ua, &authv1.ListUserSignInsRequest{Email: "op@example.org"})
	wantCode(t, err, codes.PermissionDenied)
	if res, err := e.adm.ListUserSignIns(ua, &authv1.ListUserSignInsRequest{Email: "ada@example.org"}); err != nil || len(res.GetSignIns()) != 1 {
		t.Fatalf("an ordinary user's sign-ins: %v %v", res, err)
	}
	for _, c := range []context.Context{as(identity.ScopeOperator), bg} {
		if res, err := e.adm.ListUserSignIns(c, &authv1.ListUserSignInsRequest{Email: "op@example.org"}); err != nil || len(res.GetSignIns()) != 1 {
			t.Fatalf("an operator's view of an operator's sign-ins: %v %v", res, err)
		}
	}

	byEmail := func(c context.Context) map[string]*authv1.UserRecord {
		t.Helper()
		res, err := e.adm.ListUsers(c, &authv1.ListUsersRequest{})
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]*authv1.UserRecord{}
		for _, u := range res.GetUsers() {
			m[u.GetEmail()] = u
		}
		return m
	}
	got := byEmail(ua)
	op := got["op@example.org"]
	if op == nil || op.GetId() == 0 || !slices.Equal(op.GetScopes(), []string{identity.ScopeOperator}) || op.GetRealName() != "" ||
		op.GetLastSignIn() != 0 || op.GetLastSignInAddr() != "" || op.GetCreated() != 0 || op.GetEmailVerified() || op.GetHasPassword() {
		t.Errorf("a user admin's listing of an operator: %v", op)
	}
	if ada := got["ada@example.org"]; ada.GetRealName() != "Ada Lovelace" || ada.GetLastSignInAddr() != "198.51.100.7" {
		t.Errorf("a user admin's listing of an ordinary user: %v", ada)
	}
	if op := byEmail(as(identity.ScopeOperator))["op@example.org"]; op.GetRealName() != "Olga Operator" || op.GetLastSignInAddr() != "198.51.100.7" || len(op.GetScopes()) != 2 {
		t.Errorf("an operator's listing of an operator: %v", op)
	}
}
