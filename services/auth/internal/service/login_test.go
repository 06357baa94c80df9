package service

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"fris.dev/pkg/identity"
	authv1 "fris.dev/proto/auth/v1"
)

func TestPKCE(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	clientID, secret := e.seed(t)
	verifier := "a-verifier-of-at-least-43-characters-long-xyz"
	sum := sha256.Sum256([]byte(verifier))
	ar := &authv1.AuthorizeRequest{CodeChallenge: base64.RawURLEncoding.EncodeToString(sum[:]), CodeChallengeMethod: "S256", RedirectUri: "https://app.example/cb2"}
	code := e.login(t, clientID, ar)
	_, err := e.pub.Token(ctx, &authv1.TokenRequest{Code: code, ClientId: clientID, ClientSecret: secret, CodeVerifier: "wrong"})
	wantCode(t, err, codes.InvalidArgument)
	code = e.login(t, clientID, ar)
	_, err = e.pub.Token(ctx, &authv1.TokenRequest{Code: code, ClientId: clientID, ClientSecret: secret, CodeVerifier: verifier, RedirectUri: "https://app.example/cb2"})
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []*authv1.AuthorizeRequest{
		{CodeChallengeMethod: "plain", CodeChallenge: "x"},
		{CodeChallengeMethod: "S256"},
		{CodeChallenge: "not-base64-of-32-bytes"},
		{RedirectUri: "https://evil.example/cb"},
	} {
		bad.ClientId = clientID
		_, err := e.pub.Authorize(ctx, bad)
		wantCode(t, err, codes.InvalidArgument)
	}
	_, err = e.pub.Authorize(ctx, &authv1.AuthorizeRequest{ClientId: "nope"})
	wantCode(t, err, codes.NotFound)
	res, err := e.pub.Authorize(ctx, &authv1.AuthorizeRequest{ClientId: clientID})
	if err != nil || res.GetRedirectUri() != "https://app.example/cb" || res.GetClientName() != "Demo" {
		t.Fatalf("Authorize = %v %v", res, err)
	}
}

func TestLoginGivesNoHint(t *testing.T) {
	e := newEnv(t)
	clientID, _ := e.seed(t)
	ctx := context.Background()
	for _, tc := range []struct{ email, pw string }{{"ada@example.org", "wrong password"}, {"nobody@example.org", "correct horse"}, {"", ""}} {
		_, err := e.pub.Login(ctx, &authv1.LoginRequest{Request: &authv1.AuthorizeRequest{ClientId: clientID}, Email: tc.email, Password: tc.pw})
		wantCode(t, err, codes.Unauthenticated)
		if st := status.Convert(err); st.Message() != "email or password is wrong" {
			t.Fatalf("%s: message %q gives a hint", tc.email, st.Message())
		}
	}
}

// TestLoginRecordsSignIn: a sign-in at the form is recorded with its time
// and the address the gateway forwarded, for the operators' users view; a
// refused one is not.
func TestLoginRecordsSignIn(t *testing.T) {
	e := newEnv(t)
	clientID, _ := e.seed(t)
	ctx := metadata.AppendToOutgoingContext(context.Background(), identity.KeyClientAddr, "198.51.100.7")
	last := func() *authv1.UserRecord {
		t.Helper()
		res, err := e.adm.ListUsers(context.Background(), &authv1.ListUsersRequest{})
		if err != nil || len(res.GetUsers()) != 1 {
			t.Fatalf("ListUsers = %v %v", res, err)
		}
		return res.GetUsers()[0]
	}
	if _, err := e.pub.Login(ctx, &authv1.LoginRequest{Request: &authv1.AuthorizeRequest{ClientId: clientID}, Email: "ada@example.org", Password: "wrong horse"}); err == nil {
		t.Fatal("a wrong password signed in")
	}
	if u := last(); u.GetLastSignIn() != 0 || u.GetLastSignInAddr() != "" {
		t.Fatalf("a refused sign-in was recorded: %v", u)
	}
	before := uint32(time.Now().Unix())
	if _, err := e.pub.Login(ctx, &authv1.LoginRequest{Request: &authv1.AuthorizeRequest{ClientId: clientID}, Email: "ada@example.org", Password: "correct horse"}); err != nil {
		t.Fatal(err)
	}
	if u := last(); u.GetLastSignIn() < before || u.GetLastSignInAddr() != "198.51.100.7" {
		t.Fatalf("sign-in recorded as %d from %q, want ≥ %d from 198.51.100.7", u.GetLastSignIn(), u.GetLastSignInAddr(), before)
	}
}
