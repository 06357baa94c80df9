package service

import (
	"context"
	"slices"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"

	"fris.dev/pkg/identity"
	authv1 "fris.dev/proto/auth/v1"
)

// signIn registers a key user and signs in with the signature flow; it
// returns the access token's scopes and the token set.
func signInByKey(t *testing.T, e *env, email string) (*authv1.TokenResponse, []string) {
	t.Helper()
	k := userKey()
	reg := register(t, e, email, k)
	sr, err := e.pub.SignRequest(context.Background(), &authv1.SignRequestRequest{KeyId: reg.GetKeyId()})
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.pub.Token(context.Background(), &authv1.TokenRequest{Code: sr.GetCode(), Signature: sign(t, k, sr.GetCode())})
	if err != nil {
		t.Fatal(err)
	}
	return res, scopesOf(t, res.GetAccessToken())
}

func scopesOf(t *testing.T, tok string) []string {
	t.Helper()
	sc, _ := claims(t, tok).Get("scope")
	s, _ := sc.(string)
	return strings.Fields(s)
}

func TestRegisteredUsersScopes(t *testing.T) {
	for _, tc := range []struct {
		name     string
		register []string
		want     []string
		search   codes.Code
	}{
		{"none by default", nil, []string{"openid"}, codes.PermissionDenied},
		{"configured", []string{identity.ScopeResearcher, identity.ScopeUserSearch}, []string{"openid", identity.ScopeResearcher, identity.ScopeUserSearch}, codes.OK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, func(c *Config) { c.RegisterScopes = tc.register })
			res, got := signInByKey(t, e, "self@example.org")
			if !slices.Equal(got, tc.want) {
				t.Fatalf("scopes %v, want %v", got, tc.want)
			}
			_, err := e.pub.SearchUsers(bearer(res.GetAccessToken()), &authv1.SearchUsersRequest{Query: "@"})
			wantCode(t, err, tc.search)
		})
	}
}

// An operator's grant reaches the user's next token: a refresh carries the
// scopes the user has then, not those of the token refreshed.
func TestGrantTakesEffectOnRefresh(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	res, _ := signInByKey(t, e, "self@example.org")
	if _, err := e.adm.SetUserScopes(ctx, &authv1.SetUserScopesRequest{Email: "self@example.org", Scopes: []string{identity.ScopeUserSearch}, Confirm: true}); err != nil {
		t.Fatal(err)
	}
	// The token issued before the grant still lacks it.
	_, err := e.pub.SearchUsers(bearer(res.GetAccessToken()), &authv1.SearchUsersRequest{Query: "@"})
	wantCode(t, err, codes.PermissionDenied)
	res, err = e.pub.Token(ctx, &authv1.TokenRequest{RefreshToken: res.GetRefreshToken()})
	if err != nil {
		t.Fatal(err)
	}
	if got := scopesOf(t, res.GetAccessToken()); !slices.Contains(got, identity.ScopeUserSearch) {
		t.Fatalf("refreshed scopes %v", got)
	}
	found, err := e.pub.SearchUsers(bearer(res.GetAccessToken()), &authv1.SearchUsersRequest{Query: "self"})
	if err != nil || len(found.GetUsers()) != 1 {
		t.Fatalf("search = %v, %v", found, err)
	}
}

// A client's own token never carries a role scope, even when the
// deployment's default scopes name one.
func TestClientTokensHoldNoRoleScopes(t *testing.T) {
	e := newEnv(t, func(c *Config) {
		c.DefaultScopes = []string{"mdr:public", identity.ScopeResearcher, identity.ScopeUserSearch}
	})
	clientID, secret := e.seed(t)
	res, err := e.pub.Token(context.Background(), &authv1.TokenRequest{GrantType: "client_credentials", ClientId: clientID, ClientSecret: secret})
	if err != nil {
		t.Fatal(err)
	}
	if got := scopesOf(t, res.GetAccessToken()); !slices.Equal(got, []string{"mdr:public"}) {
		t.Fatalf("client token scopes %v", got)
	}
	_, err = e.pub.SearchUsers(bearer(res.GetAccessToken()), &authv1.SearchUsersRequest{Query: "@"})
	wantCode(t, err, codes.PermissionDenied)
}
