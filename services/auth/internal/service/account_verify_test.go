package service

import (
	"context"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	authv1 "fris.dev/proto/auth/v1"
	"fris.dev/services/auth/internal/storage"
)

// A user an operator created without vouching for the address gets a
// verification link; following it sets email_verified in userinfo and in
// the id tokens issued from then on.
func TestEmailVerification(t *testing.T) {
	e, box := newAccountEnv(t)
	clientID, secret := e.seed(t) // ada: not verified
	ctx := context.Background()
	if _, err := e.adm.CreateUser(ctx, &authv1.CreateUserRequest{Email: "vouched@example.org", Password: "a password of mine", EmailVerified: true}); err != nil {
		t.Fatal(err)
	}
	mails := box.all()
	if len(mails) != 1 || mails[0].to != "ada@example.org" {
		t.Fatalf("mails = %+v, want one to ada (the vouched address gets none)", mails)
	}
	token := tokenOf(t, mails[0], "/oauth2/verify")
	verified := func() (bool, any) {
		tok, err := e.pub.Token(ctx, &authv1.TokenRequest{Code: e.login(t, clientID, nil), ClientId: clientID, ClientSecret: secret})
		if err != nil {
			t.Fatal(err)
		}
		info, err := e.pub.GetUserInfo(bearer(tok.GetAccessToken()), &authv1.GetUserInfoRequest{})
		if err != nil {
			t.Fatal(err)
		}
		v, _ := claims(t, tok.GetIdToken()).Get("email_verified")
		return info.GetEmailVerified(), v
	}
	if info, id := verified(); info || id != false {
		t.Fatalf("before: userinfo %v, id token %v", info, id)
	}
	// A reset link is no verification link, nor the other way round.
	reset := authv1.AccountTokenPurpose_ACCOUNT_TOKEN_PURPOSE_PASSWORD_RESET
	_, err := e.pub.CheckAccountToken(ctx, &authv1.CheckAccountTokenRequest{Token: token, Purpose: reset})
	wantCode(t, err, codes.NotFound)
	_, err = e.pub.ResetPassword(ctx, &authv1.ResetPasswordRequest{Token: token, Password: "a new horse battery"})
	wantCode(t, err, codes.NotFound)
	if res, err := e.pub.CheckAccountToken(ctx, &authv1.CheckAccountTokenRequest{Token: token, Purpose: authv1.AccountTokenPurpose_ACCOUNT_TOKEN_PURPOSE_EMAIL_VERIFICATION}); err != nil || res.GetEmail() != "ada@example.org" {
		t.Fatalf("check = %v %v", res, err)
	}

	if res, err := e.pub.VerifyEmail(ctx, &authv1.VerifyEmailRequest{Token: token}); err != nil || res.GetEmail() != "ada@example.org" {
		t.Fatalf("verify = %v %v", res, err)
	}
	_, err = e.pub.VerifyEmail(ctx, &authv1.VerifyEmailRequest{Token: token})
	wantCode(t, err, codes.NotFound) // single use
	if info, id := verified(); !info || id != true {
		t.Fatalf("after: userinfo %v, id token %v", info, id)
	}
	u, _ := e.store.GetUserByEmail(ctx, "ada@example.org")
	rec, err := e.store.PeekAccountToken(ctx, token)
	if err == nil {
		t.Fatalf("the spent token is still stored: %+v", rec)
	}
	if !u.EmailVerified {
		t.Fatal("not verified in the store")
	}
}

// A verification link proves the address it was sent to, not whatever the
// account's address is later.
func TestVerificationFollowsTheAddress(t *testing.T) {
	tok := storage.AccountToken{Purpose: storage.TokenEmailVerification, Email: "Ada@Example.org"}
	for _, tc := range []struct {
		email string
		want  bool
	}{{"ada@example.org", true}, {"ADA@EXAMPLE.ORG", true}, {"ada@elsewhere.example", false}} {
		if got := stillGood(tok, storage.User{Email: tc.email}); got != tc.want {
			t.Errorf("token for %s, user %s: %v, want %v", tok.Email, tc.email, got, tc.want)
		}
	}
	if stillGood(storage.AccountToken{Purpose: "other"}, storage.User{}) {
		t.Error("a token of no known purpose is good")
	}
}

func TestTTLText(t *testing.T) {
	for d, want := range map[time.Duration]string{30 * time.Minute: "30m", 72 * time.Hour: "72h", 90 * time.Minute: "1h30m", 45 * time.Second: "45s"} {
		if got := ttlText(d); got != want {
			t.Errorf("ttlText(%v) = %q, want %q", d, got, want)
		}
	}
}
