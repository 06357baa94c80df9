package service

import (
	"context"
	"testing"

	"google.golang.org/grpc/codes"

	authv1 "fris.dev/proto/auth/v1"
)

// A signed-in user changes the password with the current one: the other
// sessions end, the one that asked goes on with the answer's tokens.
func TestChangePassword(t *testing.T) {
	e := newEnv(t)
	clientID, secret := e.seed(t)
	ctx := context.Background()
	signIn := func() *authv1.TokenResponse {
		t.Helper()
		tok, err := e.pub.Token(ctx, &authv1.TokenRequest{Code: e.login(t, clientID, nil), ClientId: clientID, ClientSecret: secret})
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	mine, other := signIn(), signIn()
	change := func(access, current, next string) (*authv1.ChangePasswordResponse, error) {
		return e.pub.ChangePassword(bearer(access), &authv1.ChangePasswordRequest{CurrentPassword: current, NewPassword: next})
	}
	_, err := e.pub.ChangePassword(ctx, &authv1.ChangePasswordRequest{CurrentPassword: "correct horse", NewPassword: "a new horse battery"})
	wantCode(t, err, codes.PermissionDenied)
	_, err = change(mine.GetAccessToken(), "wrong horse", "a new horse battery")
	wantCode(t, err, codes.Unauthenticated)
	_, err = change(mine.GetAccessToken(), "correct horse", "short")
	wantCode(t, err, codes.InvalidArgument)

	res, err := change(mine.GetAccessToken(), "correct horse", "a new horse battery")
	if err != nil {
		t.Fatal(err)
	}
	if res.GetAccessToken() == "" || res.GetRefreshToken() == "" || res.GetExpiresIn() == 0 {
		t.Fatalf("answer %v", res)
	}
	for name, tok := range map[string]string{"the session's old token": mine.GetAccessToken(), "another session": other.GetAccessToken()} {
		_, err := e.pub.GetUserInfo(bearer(tok), &authv1.GetUserInfoRequest{})
		if err == nil {
			t.Fatalf("%s still works", name)
		}
		wantCode(t, err, codes.PermissionDenied)
	}
	_, err = e.pub.Token(ctx, &authv1.TokenRequest{GrantType: grantRefresh, ClientId: clientID, ClientSecret: secret, RefreshToken: other.GetRefreshToken()})
	wantCode(t, err, codes.PermissionDenied)
	if info, err := e.pub.GetUserInfo(bearer(res.GetAccessToken()), &authv1.GetUserInfoRequest{}); err != nil || info.GetEmail() != "ada@example.org" {
		t.Fatalf("the answer's token: %v %v", info, err)
	}
	if _, err := e.pub.Token(ctx, &authv1.TokenRequest{GrantType: grantRefresh, ClientId: clientID, ClientSecret: secret, RefreshToken: res.GetRefreshToken()}); err != nil {
		t.Fatalf("the answer's refresh token: %v", err)
	}
	_, err = e.pub.Login(ctx, &authv1.LoginRequest{Request: &authv1.AuthorizeRequest{ClientId: clientID}, Email: "ada@example.org", Password: "correct horse"})
	wantCode(t, err, codes.Unauthenticated)
	if _, err := e.pub.Login(ctx, &authv1.LoginRequest{Request: &authv1.AuthorizeRequest{ClientId: clientID}, Email: "ada@example.org", Password: "a new horse battery"}); err != nil {
		t.Fatal(err)
	}
}
