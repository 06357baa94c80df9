package service

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pquerna/otp/totp"
	"google.golang.org/grpc/codes"

	"fris.dev/pkg/identity"
	authv1 "fris.dev/proto/auth/v1"
	"fris.dev/services/auth/internal/storage"
)

// totpCode is secret's TOTP code at at.
func totpCode(t *testing.T, secret string, at time.Time) string {
	t.Helper()
	c, err := totp.GenerateCodeCustom(secret, at, totpOpts)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func (e *env) require(t *testing.T, ctx context.Context, email string, actions ...string) {
	t.Helper()
	if _, err := e.adm.SetRequiredActions(ctx, &authv1.SetRequiredActionsRequest{Email: email, Actions: actions}); err != nil {
		t.Fatal(err)
	}
}

func (e *env) changeAtSignIn(clientID, pending, pw string) (*authv1.LoginResponse, error) {
	return e.pub.LoginChangePassword(context.Background(), &authv1.LoginChangePasswordRequest{Request: &authv1.AuthorizeRequest{ClientId: clientID}, Pending: pending, NewPassword: pw})
}

func (e *env) adaSignIn(t *testing.T, clientID, pw string) *authv1.LoginResponse {
	t.Helper()
	res, err := e.pub.Login(context.Background(), &authv1.LoginRequest{Request: &authv1.AuthorizeRequest{ClientId: clientID}, Email: "ada@example.org", Password: pw})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestRequiredChangePassword: the password step issues no code but a
// pending sign-in for a new password; the policy applies to it, the old
// password is refused, and the new one issues the code and clears the
// action, ending the old sessions.
func TestRequiredChangePassword(t *testing.T) {
	e := newEnv(t, withPolicy(t, 12))
	clientID, secret := e.seed(t)
	ctx := context.Background()
	old := e.login(t, clientID, nil)
	tok, err := e.pub.Token(ctx, &authv1.TokenRequest{Code: old, ClientId: clientID, ClientSecret: secret})
	if err != nil {
		t.Fatal(err)
	}
	e.require(t, ctx, "ada@example.org", "change_password")
	res := e.adaSignIn(t, clientID, "correct horse")
	if res.GetCode() != "" || !res.GetChangePassword() || res.GetPending() == "" {
		t.Fatalf("password step = %v: want a pending change", res)
	}
	// The second-factor step does not take it.
	_, err = e.pub.LoginSecondFactor(ctx, &authv1.LoginSecondFactorRequest{Request: &authv1.AuthorizeRequest{ClientId: clientID}, Pending: res.GetPending(), Code: "123456"})
	wantCode(t, err, codes.Unauthenticated)
	res = e.adaSignIn(t, clientID, "correct horse")
	_, err = e.changeAtSignIn(clientID, res.GetPending(), "short")
	wantCode(t, err, codes.InvalidArgument)
	_, err = e.changeAtSignIn(clientID, res.GetPending(), "password1234")
	wantCode(t, err, codes.InvalidArgument) // a common one
	_, err = e.changeAtSignIn(clientID, res.GetPending(), "correct horse")
	wantCode(t, err, codes.InvalidArgument) // the same
	// Another authorization request's pending sign-in is not this one.
	_, err = e.pub.LoginChangePassword(ctx, &authv1.LoginChangePasswordRequest{Request: &authv1.AuthorizeRequest{ClientId: clientID, Scope: "openid"}, Pending: res.GetPending(), NewPassword: "a brand new passphrase"})
	wantCode(t, err, codes.Unauthenticated)
	res = e.adaSignIn(t, clientID, "correct horse")
	ok, err := e.changeAtSignIn(clientID, res.GetPending(), "a brand new passphrase")
	if err != nil || ok.GetCode() == "" {
		t.Fatalf("change = %v %v", ok, err)
	}
	if _, err := e.pub.Token(ctx, &authv1.TokenRequest{Code: ok.GetCode(), ClientId: clientID, ClientSecret: secret}); err != nil {
		t.Fatalf("the code after the change: %v", err)
	}
	// Spent; the old password is gone, and so are its tokens.
	_, err = e.changeAtSignIn(clientID, res.GetPending(), "another new passphrase")
	wantCode(t, err, codes.Unauthenticated)
	_, err = e.pub.Login(ctx, &authv1.LoginRequest{Request: &authv1.AuthorizeRequest{ClientId: clientID}, Email: "ada@example.org", Password: "correct horse"})
	wantCode(t, err, codes.Unauthenticated)
	if _, err := e.pub.GetUserInfo(bearer(tok.GetAccessToken()), &authv1.GetUserInfoRequest{}); err == nil {
		t.Fatal("a token of the old password still works")
	}
	if r := e.adaSignIn(t, clientID, "a brand new passphrase"); r.GetCode() == "" {
		t.Fatalf("after the change: %v", r)
	}
	u, _ := e.store.GetUserByEmail(ctx, "ada@example.org")
	if len(u.RequiredActions) != 0 {
		t.Fatalf("actions left: %v", u.RequiredActions)
	}
}

// TestRequiredVerifyEmail: the sign-in stops with a mailed link and no
// code until the link is followed; then it goes on.
func TestRequiredVerifyEmail(t *testing.T) {
	e, box := newAccountEnv(t)
	clientID, _ := e.seed(t) // mails a verification link at creation
	ctx := context.Background()
	e.require(t, ctx, "ada@example.org", "verify_email")
	before := len(box.all())
	res := e.adaSignIn(t, clientID, "correct horse")
	if res.GetCode() != "" || res.GetPending() != "" || !res.GetVerifyEmailSent() {
		t.Fatalf("password step = %v: want a stop with a mail", res)
	}
	mails := box.all()
	if len(mails) != before+1 {
		t.Fatalf("%d mails, want %d", len(mails), before+1)
	}
	if r := e.adaSignIn(t, clientID, "correct horse"); r.GetCode() != "" {
		t.Fatal("a code before the link was followed")
	}
	if _, err := e.pub.VerifyEmail(ctx, &authv1.VerifyEmailRequest{Token: tokenOf(t, mails[len(mails)-1], "/oauth2/verify")}); err != nil {
		t.Fatal(err)
	}
	if r := e.adaSignIn(t, clientID, "correct horse"); r.GetCode() == "" {
		t.Fatalf("after verification: %v", r)
	}
}

// TestRequiredActionsInOrder: verify_email first, then change_password,
// then the second factor's enrolment, each before any code.
func TestRequiredActionsInOrder(t *testing.T) {
	e, box := newAccountEnv(t)
	clientID, _ := e.seed(t)
	ctx := context.Background()
	e.require(t, ctx, "ada@example.org", "add_second_factor", "change_password", "verify_email")
	u, _ := e.store.GetUserByEmail(ctx, "ada@example.org")
	if strings.Join(u.RequiredActions, ",") != "verify_email,change_password,add_second_factor" {
		t.Fatalf("stored %v", u.RequiredActions)
	}
	// The second factor's enrolment comes first: it is the sign-in's own
	// step, before the actions.
	res := e.adaSignIn(t, clientID, "correct horse")
	if !res.GetEnrol() || res.GetCode() != "" {
		t.Fatalf("first: %v, want the enrolment", res)
	}
	ok, err := e.pub.LoginSecondFactor(ctx, &authv1.LoginSecondFactorRequest{Request: &authv1.AuthorizeRequest{ClientId: clientID}, Pending: res.GetPending(), Code: totpCode(t, res.GetTotpSecret(), e.svc.now())})
	if err != nil || ok.GetCode() != "" || !ok.GetVerifyEmailSent() || len(ok.GetRecoveryCodes()) == 0 {
		t.Fatalf("after enrolment: %v %v, want a stop for the address (with the recovery codes)", ok, err)
	}
	mails := box.all()
	if _, err := e.pub.VerifyEmail(ctx, &authv1.VerifyEmailRequest{Token: tokenOf(t, mails[len(mails)-1], "/oauth2/verify")}); err != nil {
		t.Fatal(err)
	}
	u, _ = e.store.GetUserByEmail(ctx, "ada@example.org")
	if strings.Join(u.RequiredActions, ",") != "change_password" {
		t.Fatalf("left %v", u.RequiredActions)
	}
	_, err = e.adm.SetRequiredActions(ctx, &authv1.SetRequiredActionsRequest{Email: "ada@example.org", Actions: []string{"dance"}})
	wantCode(t, err, codes.InvalidArgument)
	e.require(t, ctx, "ada@example.org") // cleared
	u, _ = e.store.GetUserByEmail(ctx, "ada@example.org")
	if len(u.RequiredActions) != 0 {
		t.Fatalf("not cleared: %v", u.RequiredActions)
	}
}

// TestRequiredActionsUserAdmin: a user administrator sets actions and
// temporary passwords for ordinary users, never for a privileged one.
func TestRequiredActionsUserAdmin(t *testing.T) {
	e, _ := newAccountEnv(t)
	e.seed(t)
	bg := context.Background()
	if _, err := e.adm.CreateUser(bg, &authv1.CreateUserRequest{Email: "op@example.org", Password: "an operator's pass", Scopes: []string{identity.ScopeOperator}}); err != nil {
		t.Fatal(err)
	}
	before, _ := e.store.GetUserByEmail(bg, "op@example.org")
	ua := as(identity.ScopeUserAdmin)
	e.require(t, ua, "ada@example.org", "change_password")
	_, err := e.adm.SetRequiredActions(ua, &authv1.SetRequiredActionsRequest{Email: "op@example.org", Actions: []string{"change_password"}})
	wantCode(t, err, codes.PermissionDenied)
	_, err = e.adm.SetTemporaryPassword(ua, &authv1.SetTemporaryPasswordRequest{Email: "op@example.org"})
	wantCode(t, err, codes.PermissionDenied)
	op, _ := e.store.GetUserByEmail(bg, "op@example.org")
	if len(op.RequiredActions) != 0 || op.PasswordHash != before.PasswordHash {
		t.Fatalf("the privileged user was changed: %+v", op.RequiredActions)
	}
	if _, err := e.adm.SetTemporaryPassword(as(identity.ScopeOperator), &authv1.SetTemporaryPasswordRequest{Email: "op@example.org"}); err != nil {
		t.Fatalf("an operator: %v", err)
	}
}

// TestTemporaryPassword: auth generates a password that meets the policy,
// ends the user's tokens and requires a change at the next sign-in
// (unless keep_optional).
func TestTemporaryPassword(t *testing.T) {
	e := newEnv(t, withPolicy(t, 12))
	clientID, secret := e.seed(t)
	ctx := context.Background()
	tok, err := e.pub.Token(ctx, &authv1.TokenRequest{Code: e.login(t, clientID, nil), ClientId: clientID, ClientSecret: secret})
	if err != nil {
		t.Fatal(err)
	}
	tp, err := e.adm.SetTemporaryPassword(ctx, &authv1.SetTemporaryPasswordRequest{Email: "ada@example.org"})
	if err != nil {
		t.Fatal(err)
	}
	pw := tp.GetPassword()
	if len(pw) < 20 || e.svc.checkNewPassword(pw, "ada@example.org") != nil {
		t.Fatalf("password %q", pw)
	}
	if _, err := e.pub.GetUserInfo(bearer(tok.GetAccessToken()), &authv1.GetUserInfoRequest{}); err == nil {
		t.Fatal("the user's token survived the temporary password")
	}
	u, _ := e.store.GetUserByEmail(ctx, "ada@example.org")
	if !u.Requires(storage.ActionChangePassword) || u.PasswordBy != storage.AddedOperator {
		t.Fatalf("user %+v", u.RequiredActions)
	}
	res := e.adaSignIn(t, clientID, pw)
	if !res.GetChangePassword() || res.GetCode() != "" {
		t.Fatalf("sign-in with it: %v", res)
	}
	ok, err := e.changeAtSignIn(clientID, res.GetPending(), "my very own passphrase")
	if err != nil || ok.GetCode() == "" {
		t.Fatalf("change: %v %v", ok, err)
	}
	// keep_optional: no change required; a second call, another password.
	tp2, err := e.adm.SetTemporaryPassword(ctx, &authv1.SetTemporaryPasswordRequest{Email: "ada@example.org", KeepOptional: true})
	if err != nil || tp2.GetPassword() == pw {
		t.Fatalf("second: %v %v", tp2, err)
	}
	if r := e.adaSignIn(t, clientID, tp2.GetPassword()); r.GetCode() == "" {
		t.Fatalf("optional change: %v", r)
	}
	_, err = e.adm.SetTemporaryPassword(ctx, &authv1.SetTemporaryPasswordRequest{Email: "nobody@example.org"})
	wantCode(t, err, codes.NotFound)
}

// TestRequiredSecondFactor: add_second_factor leads a password sign-in to
// the TOTP enrolment and is cleared by it; an account that holds a
// passkey already has a second factor: the action is cleared at once and
// the password step issues its code.
func TestRequiredSecondFactor(t *testing.T) {
	e := newEnv(t)
	clientID, _ := e.seed(t)
	ctx := context.Background()
	e.require(t, ctx, "ada@example.org", "add_second_factor")
	res := e.adaSignIn(t, clientID, "correct horse")
	if !res.GetEnrol() || res.GetCode() != "" || res.GetTotpSecret() == "" {
		t.Fatalf("password step: %v, want the enrolment", res)
	}
	ok, err := e.pub.LoginSecondFactor(ctx, &authv1.LoginSecondFactorRequest{Request: &authv1.AuthorizeRequest{ClientId: clientID}, Pending: res.GetPending(), Code: totpCode(t, res.GetTotpSecret(), e.svc.now())})
	if err != nil || ok.GetCode() == "" {
		t.Fatalf("enrolment: %v %v", ok, err)
	}
	if u, _ := e.store.GetUserByEmail(ctx, "ada@example.org"); u.Requires(storage.ActionAddSecondFactor) || u.TOTP == nil {
		t.Fatalf("after the enrolment: actions %v, factor %v", u.RequiredActions, u.TOTP != nil)
	}

	if _, err := e.adm.CreateUser(ctx, &authv1.CreateUserRequest{Email: "pk@example.org", Password: "passkey holder pw"}); err != nil {
		t.Fatal(err)
	}
	u, _ := e.store.GetUserByEmail(ctx, "pk@example.org")
	if err := e.store.AddPasskey(ctx, storage.Passkey{ID: "cred1", UserID: u.ID, Name: "key", Created: 1, Credential: []byte("{}")}, 10); err != nil {
		t.Fatal(err)
	}
	e.require(t, ctx, "pk@example.org", "add_second_factor")
	r, err := e.pub.Login(ctx, &authv1.LoginRequest{Request: &authv1.AuthorizeRequest{ClientId: clientID}, Email: "pk@example.org", Password: "passkey holder pw"})
	if err != nil || r.GetCode() == "" || r.GetEnrol() {
		t.Fatalf("passkey holder: %v %v", r, err)
	}
	if u, _ := e.store.GetUserByEmail(ctx, "pk@example.org"); len(u.RequiredActions) != 0 {
		t.Fatalf("passkey holder's actions %v", u.RequiredActions)
	}
}

// TestRequiredActionsPasskey: a passkey sign-in takes the same actions
// except the second factor, which the passkey is: change_password leads
// to the new password (on the passkey's pending sign-in, bound to its
// request), and then the code.
func TestRequiredActionsPasskey(t *testing.T) {
	e, clientID, access := newPasskeyEnv(t)
	ctx := context.Background()
	a := newAuthenticator(rpOrigin)
	_, c := addPasskey(t, e, a, access, "Laptop")
	e.require(t, ctx, "ada@example.org", "change_password", "add_second_factor")
	res, err := passkeyLogin(ctx, t, e, a, clientID, c)
	if err != nil || res.GetCode() != "" || !res.GetChangePassword() || res.GetEnrol() {
		t.Fatalf("passkey sign-in: %v %v, want the change", res, err)
	}
	ar := &authv1.AuthorizeRequest{ClientId: clientID, Scope: "openid", Nonce: "n-1"}
	ok, err := e.pub.LoginChangePassword(ctx, &authv1.LoginChangePasswordRequest{Request: ar, Pending: res.GetPending(), NewPassword: "a fresh passphrase"})
	if err != nil || ok.GetCode() == "" {
		t.Fatalf("change: %v %v", ok, err)
	}
	g, err := e.store.PeekGrant(ctx, ok.GetCode())
	if err != nil || g.Nonce != "n-1" {
		t.Fatalf("grant %+v %v", g, err)
	}
	if u, _ := e.store.GetUserByEmail(ctx, "ada@example.org"); len(u.RequiredActions) != 0 {
		t.Fatalf("actions left %v", u.RequiredActions)
	}
	si, err := e.store.UserSignIns(ctx, g.UserID)
	if err != nil || !slices.ContainsFunc(si.Recent, func(ev storage.SignInEvent) bool { return ev.Method == storage.MethodPasskey }) {
		t.Fatalf("recorded sign-ins %+v %v", si, err)
	}
}
