package service

import (
	"context"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"fris.dev/pkg/errinfo"
	authv1 "fris.dev/proto/auth/v1"
	"fris.dev/services/auth/internal/pwpolicy"
	"fris.dev/services/auth/internal/storage"
)

// withPolicy runs the service with the given policy, the common list on.
func withPolicy(t *testing.T, min int) func(*Config) {
	t.Helper()
	p, err := pwpolicy.New(min, true)
	if err != nil {
		t.Fatal(err)
	}
	return func(c *Config) { c.Passwords = p }
}

// wantRefused: err is the policy's refusal for the given reason.
func wantRefused(t *testing.T, what string, err error, reason string) {
	t.Helper()
	st := status.Convert(err)
	if st.Code() != codes.InvalidArgument || !errinfo.Has(st, reason) {
		t.Errorf("%s: got %v (reason %q), want InvalidArgument with reason %s", what, err, errinfo.Reason(st), reason)
	}
}

// TestPasswordPolicyEverySetter: a reset, a change, an operator's
// create-user and set-password all refuse what the policy refuses, each
// rule by its reason, and take what it admits.
func TestPasswordPolicyEverySetter(t *testing.T) {
	e, box := newAccountEnv(t, withPolicy(t, 12))
	clientID, secret := e.seed(t) // ada's "correct horse": 13 characters
	ctx := context.Background()
	bad := []struct {
		pw, reason string
	}{
		{"eleven char", errinfo.PasswordTooShort},
		{"1Q2W3E4R5T6Y", errinfo.PasswordCommon},
		{"ADA@example.org", errinfo.PasswordIsEmail},
	}
	const good = "a horse of twelve"

	for _, b := range bad {
		email := "bob@example.org"
		if b.reason == errinfo.PasswordIsEmail {
			email, b.pw = "Bob.Builder@example.org", "bob.builder@EXAMPLE.org" // the new account's own
		}
		_, err := e.adm.CreateUser(ctx, &authv1.CreateUserRequest{Email: email, Password: b.pw})
		wantRefused(t, "CreateUser "+b.pw, err, b.reason)
	}
	if _, err := e.adm.CreateUser(ctx, &authv1.CreateUserRequest{Email: "bob@example.org", Password: good}); err != nil {
		t.Fatalf("CreateUser with a good password: %v", err)
	}
	for _, b := range bad {
		_, err := e.adm.SetPassword(ctx, &authv1.SetPasswordRequest{Email: "ada@example.org", Password: b.pw})
		wantRefused(t, "SetPassword "+b.pw, err, b.reason)
	}
	if _, err := e.adm.SetPassword(ctx, &authv1.SetPasswordRequest{Email: "ada@example.org", Password: good}); err != nil {
		t.Fatalf("SetPassword with a good password: %v", err)
	}

	// ChangePassword, with a token of ada's.
	code, err := e.pub.Login(ctx, &authv1.LoginRequest{Request: &authv1.AuthorizeRequest{ClientId: clientID}, Email: "ada@example.org", Password: good})
	if err != nil {
		t.Fatal(err)
	}
	tok, err := e.pub.Token(ctx, &authv1.TokenRequest{Code: code.GetCode(), ClientId: clientID, ClientSecret: secret})
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bad {
		_, err := e.pub.ChangePassword(bearer(tok.GetAccessToken()), &authv1.ChangePasswordRequest{CurrentPassword: good, NewPassword: b.pw})
		wantRefused(t, "ChangePassword "+b.pw, err, b.reason)
	}
	if _, err := e.pub.ChangePassword(bearer(tok.GetAccessToken()), &authv1.ChangePasswordRequest{CurrentPassword: good, NewPassword: "a changed horse"}); err != nil {
		t.Fatalf("ChangePassword with a good password: %v", err)
	}

	// ResetPassword: a refusal leaves the link live; a good one spends it.
	if err := requestReset(e, ctx, "ada@example.org"); err != nil {
		t.Fatal(err)
	}
	token := tokenOf(t, box.resets()[0], "/oauth2/reset")
	for _, b := range bad {
		_, err := e.pub.ResetPassword(ctx, &authv1.ResetPasswordRequest{Token: token, Password: b.pw})
		wantRefused(t, "ResetPassword "+b.pw, err, b.reason)
	}
	if _, err := e.pub.ResetPassword(ctx, &authv1.ResetPasswordRequest{Token: token, Password: "a reset horse"}); err != nil {
		t.Fatalf("ResetPassword with a good password after refusals: %v", err)
	}
}

// TestPasswordPolicyLocalPart: the part before the @ is refused when it
// is long enough to pass the length rule.
func TestPasswordPolicyLocalPart(t *testing.T) {
	e := newEnv(t, withPolicy(t, 12))
	ctx := context.Background()
	_, err := e.adm.CreateUser(ctx, &authv1.CreateUserRequest{Email: "grace.hopper.cobol@example.org", Password: "Grace.Hopper.COBOL"})
	wantRefused(t, "the local part", err, errinfo.PasswordIsEmail)
	if !strings.Contains(status.Convert(err).Message(), "email address") {
		t.Errorf("the message does not say why: %v", err)
	}
}

// TestPasswordPolicyKeepsOldPasswords: a password set before the policy
// (here: stored directly, common and short) still signs in; the policy is
// checked only when a password is set.
func TestPasswordPolicyKeepsOldPasswords(t *testing.T) {
	e := newEnv(t, withPolicy(t, 12))
	clientID, _ := e.seed(t)
	ctx := context.Background()
	h, err := e.svc.hash.Hash(ctx, "password")
	if err != nil {
		t.Fatal(err)
	}
	u, err := e.store.GetUserByEmail(ctx, "ada@example.org")
	if err != nil {
		t.Fatal(err)
	}
	if err := e.store.UpdateUser(ctx, u.ID, func(cur *storage.User) error { cur.PasswordHash = h; return nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := e.pub.Login(ctx, &authv1.LoginRequest{Request: &authv1.AuthorizeRequest{ClientId: clientID}, Email: "ada@example.org", Password: "password"}); err != nil {
		t.Fatalf("a password set before the policy no longer signs in: %v", err)
	}
}

// TestGetPasswordPolicy: the pages learn the policy in force.
func TestGetPasswordPolicy(t *testing.T) {
	e := newEnv(t, withPolicy(t, 15))
	p, err := e.pub.GetPasswordPolicy(context.Background(), &authv1.GetPasswordPolicyRequest{})
	if err != nil || p.GetMinLength() != 15 || !p.GetRefuseCommon() {
		t.Fatalf("policy %v, %v; want 15 characters, common refused", p, err)
	}
	p, err = newEnv(t).pub.GetPasswordPolicy(context.Background(), &authv1.GetPasswordPolicyRequest{})
	if err != nil || p.GetMinLength() != pwpolicy.DefaultMinLength {
		t.Fatalf("default policy %v, %v", p, err)
	}
}

// TestPasswordTooShortNamesTheLength: the refusal carries the least
// length for the pages.
func TestPasswordTooShortNamesTheLength(t *testing.T) {
	e := newEnv(t, withPolicy(t, 17))
	_, err := e.adm.CreateUser(context.Background(), &authv1.CreateUserRequest{Email: "ada@example.org", Password: "sixteen char pwd"})
	wantRefused(t, "16 of 17", err, errinfo.PasswordTooShort)
	if n := errinfo.PasswordMinLength(status.Convert(err)); n != 17 {
		t.Errorf("the refusal names %d characters, want 17", n)
	}
}
