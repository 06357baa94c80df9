package service

import (
	"context"
	"testing"

	"google.golang.org/grpc/codes"

	authv1 "fris.dev/proto/auth/v1"
)

// The account page's sessions: each sign-in while it stands, newest
// first, the asking one marked; signing out one (RFC 7009) drops it; "sign
// out everywhere" ends them all, the asking one's included.
func TestSessionsAndSignOutEverywhere(t *testing.T) {
	e := newEnv(t)
	clientID, secret := e.seed(t)
	ctx := context.Background()
	signIn := func(addr string) *authv1.TokenResponse {
		t.Helper()
		res, err := e.pub.Login(fromAddr(addr), &authv1.LoginRequest{Request: &authv1.AuthorizeRequest{ClientId: clientID}, Email: "ada@example.org", Password: "correct horse"})
		if err != nil {
			t.Fatal(err)
		}
		tok, err := e.pub.Token(ctx, &authv1.TokenRequest{Code: res.GetCode(), ClientId: clientID, ClientSecret: secret})
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	first, second, third := signIn("192.0.2.1"), signIn("192.0.2.2"), signIn("192.0.2.3")
	list := func(tok string) []*authv1.AccountSession {
		t.Helper()
		res, err := e.pub.ListSessions(bearer(tok), &authv1.ListSessionsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		return res.GetSessions()
	}
	ss := list(first.GetAccessToken())
	if len(ss) != 3 {
		t.Fatalf("sessions = %v", ss)
	}
	addrs := map[string]bool{}
	for _, s := range ss {
		addrs[s.GetAddress()] = true
		if s.GetClientName() != "Demo" || s.GetClientId() != clientID || s.GetCreated() == 0 || s.GetCurrent() != (s.GetAddress() == "192.0.2.1") {
			t.Errorf("session %v", s)
		}
	}
	if len(addrs) != 3 {
		t.Fatalf("addresses %v", addrs)
	}
	if _, err := e.pub.Revoke(ctx, &authv1.RevokeRequest{Token: second.GetRefreshToken(), ClientId: clientID, ClientSecret: secret}); err != nil {
		t.Fatal(err)
	}
	if ss := list(first.GetAccessToken()); len(ss) != 2 {
		t.Fatalf("after signing one out: %v", ss)
	}
	_, err := e.pub.ListSessions(ctx, &authv1.ListSessionsRequest{})
	wantCode(t, err, codes.PermissionDenied)

	if _, err := e.pub.SignOutEverywhere(bearer(third.GetAccessToken()), &authv1.SignOutEverywhereRequest{}); err != nil {
		t.Fatal(err)
	}
	for _, tok := range []string{first.GetAccessToken(), third.GetAccessToken()} {
		_, err := e.pub.GetUserInfo(bearer(tok), &authv1.GetUserInfoRequest{})
		wantCode(t, err, codes.PermissionDenied)
	}
	fourth := signIn("192.0.2.4")
	if ss := list(fourth.GetAccessToken()); len(ss) != 1 || !ss[0].GetCurrent() || ss[0].GetAddress() != "192.0.2.4" {
		t.Fatalf("after signing out everywhere and in again: %v", ss)
	}
}
