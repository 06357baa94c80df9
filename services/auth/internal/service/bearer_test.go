package service

import (
	"context"
	"slices"
	"strconv"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	"fris.dev/pkg/accesstoken"
	authv1 "fris.dev/proto/auth/v1"
	"fris.dev/services/auth/internal/tokens"
)

func TestBearerEndpoints(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	clientID, secret := e.seed(t)
	res, err := e.pub.Token(ctx, &authv1.TokenRequest{Code: e.login(t, clientID, nil), ClientId: clientID, ClientSecret: secret})
	if err != nil {
		t.Fatal(err)
	}
	info, err := e.pub.GetTokenInfo(bearer(res.GetAccessToken()), &authv1.GetTokenInfoRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if info.GetSubject() != e.uid(t, "ada@example.org") || info.GetIssuer() != issuer || info.GetNonce() == "" || info.GetNotBeofre() == 0 ||
		int64(info.GetExpirationDate()) <= time.Now().Unix() || !contains(info.GetScope(), "openid") {
		t.Fatalf("tokeninfo = %v", info)
	}
	if info.GetJti() == "" || info.GetNotBefore() != info.GetNotBeofre() || info.GetIssuedAt() == 0 || info.GetIssuedAt() < info.GetNotBefore() {
		t.Fatalf("tokeninfo's TokenInfoDto names = %v", info)
	}
	ui, err := e.pub.GetUserInfo(bearer(res.GetAccessToken()), &authv1.GetUserInfoRequest{})
	if err != nil || ui.GetEmail() != "ada@example.org" || ui.GetRealName() != "Ada Lovelace" || ui.GetLocality() == nil {
		t.Fatalf("userinfo = %v %v", ui, err)
	}
	// UserDto.id, a string: the user's id, as sub.
	if ui.GetId() != e.uid(t, "ada@example.org") || ui.GetId() != ui.GetSub() {
		t.Fatalf("userinfo id %q sub %q", ui.GetId(), ui.GetSub())
	}
	register(t, e, "registry@example.org", userKey())
	found, err := e.pub.SearchUsers(bearer(res.GetAccessToken()), &authv1.SearchUsersRequest{Query: "LOVE"})
	if err != nil || len(found.GetUsers()) != 1 || found.GetUsers()[0].GetEmail() != "ada@example.org" {
		t.Fatalf("search = %v %v", found, err)
	}
	found, _ = e.pub.SearchUsers(bearer(res.GetAccessToken()), &authv1.SearchUsersRequest{Query: "example.org"})
	if len(found.GetUsers()) != 2 {
		t.Fatalf("search by email = %v", found)
	}
	_, err = e.pub.SearchUsers(bearer(res.GetAccessToken()), &authv1.SearchUsersRequest{})
	wantCode(t, err, codes.InvalidArgument)

	for _, tok := range []string{"", "garbage", res.GetIdToken(), res.GetRefreshToken()} {
		c := ctx
		if tok != "" {
			c = bearer(tok)
		}
		_, err := e.pub.GetTokenInfo(c, &authv1.GetTokenInfoRequest{})
		wantCode(t, err, codes.PermissionDenied)
		_, err = e.pub.GetUserInfo(c, &authv1.GetUserInfoRequest{})
		wantCode(t, err, codes.PermissionDenied)
		_, err = e.pub.SearchUsers(c, &authv1.SearchUsersRequest{Query: "a"})
		wantCode(t, err, codes.PermissionDenied)
	}
}

// /tokeninfo reports the token's own scope claim and nothing else: one
// whose claims carry no scope reports an empty array, never a default.
func TestTokenInfoScopeIsTheTokens(t *testing.T) {
	e := newEnv(t)
	clientID, _ := e.seed(t)
	uid, _ := strconv.Atoi(e.uid(t, "ada@example.org"))
	for _, scopes := range [][]string{nil, {"mdr:x"}, {"openid", "users:search"}} {
		set, err := e.svc.tokens.Issue(tokens.Subject{UserID: int32(uid), ClientID: clientID, Scopes: scopes})
		if err != nil {
			t.Fatal(err)
		}
		claims, err := e.svc.tokens.Read(context.Background(), set.Access, accesstoken.Type)
		if err != nil {
			t.Fatal(err)
		}
		info, err := e.pub.GetTokenInfo(bearer(set.Access), &authv1.GetTokenInfoRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(info.GetScope(), []string(claims.Scope)) || len(info.GetScope()) != len(scopes) {
			t.Fatalf("scopes %q: tokeninfo %q, claims %q", scopes, info.GetScope(), claims.Scope)
		}
	}
}
