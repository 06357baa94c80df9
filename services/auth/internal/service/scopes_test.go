package service

import (
	"context"
	"slices"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"fris.dev/pkg/identity"
	authv1 "fris.dev/proto/auth/v1"
	"fris.dev/services/auth/internal/storage"
)

// TestScopesAreTokens: a granted scope is an RFC 6749 scope-token;
// SetUserScopes and CreateUser refuse anything else with InvalidArgument
// and a message that names the scope and the rule. Case is not folded:
// FRIS:OPERATOR is a scope-token (that opens nothing).
func TestScopesAreTokens(t *testing.T) {
	e := newEnv(t)
	e.seed(t)
	ctx := as(identity.ScopeOperator)
	for _, bad := range []string{"x\u200by", "\x01", "a b", `a"b`, `a\b`, "é", "", "tab\there", "\x7f"} {
		_, err := e.adm.SetUserScopes(ctx, &authv1.SetUserScopesRequest{Email: "ada@example.org", Scopes: []string{identity.ScopeResearcher, bad}})
		wantCode(t, err, codes.InvalidArgument)
		if msg := status.Convert(err).Message(); !strings.Contains(msg, "scope-token") {
			t.Errorf("SetUserScopes %q: the message does not give the rule: %s", bad, msg)
		}
		_, err = e.adm.CreateUser(ctx, &authv1.CreateUserRequest{Email: "new@example.org", Scopes: []string{bad}})
		wantCode(t, err, codes.InvalidArgument)
	}
	u, err := e.store.GetUserByEmail(context.Background(), "ada@example.org")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(u.Scopes, []string{"mdr:secret", identity.ScopeUserSearch}) {
		t.Errorf("a refused grant changed the scopes: %q", u.Scopes)
	}
	for _, good := range []string{"FRIS:OPERATOR", "mdr:x", "a!#$%&'()*+,-./:;<=>?@[]^_`{|}~", identity.ScopeOperator} {
		if _, err := e.adm.SetUserScopes(ctx, &authv1.SetUserScopesRequest{Email: "ada@example.org", Scopes: []string{good}, Confirm: true}); err != nil {
			t.Errorf("SetUserScopes %q: %v", good, err)
		}
	}
}

// TestStoredMalformedScope: a scope stored before scopes were checked
// (written to the store directly here) is left out of the tokens issued,
// and an identity still carrying one (a token issued before) makes no call
// fail: gRPC metadata holds printable ASCII only, and identity.Pairs,
// which the gateway forwards, drops it.
func TestStoredMalformedScope(t *testing.T) {
	e := newEnv(t)
	clientID, secret := e.seed(t)
	bg := context.Background()
	u, err := e.store.GetUserByEmail(bg, "ada@example.org")
	if err != nil {
		t.Fatal(err)
	}
	if err := e.store.UpdateUser(bg, u.ID, func(u *storage.User) error {
		u.Scopes = []string{"x\u200by", "\x01", identity.ScopeUserSearch}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	code := e.login(t, clientID, nil)
	res, err := e.pub.Token(bg, &authv1.TokenRequest{Code: code, ClientId: clientID, ClientSecret: secret})
	if err != nil {
		t.Fatal(err)
	}
	if got := scopesOf(t, res.GetAccessToken()); !slices.Equal(got, []string{"openid", identity.ScopeUserSearch}) {
		t.Fatalf("token scopes %q", got)
	}
	if _, err := e.pub.GetUserInfo(bearer(res.GetAccessToken()), &authv1.GetUserInfoRequest{}); err != nil {
		t.Fatalf("userinfo: %v", err)
	}
	// The listing shows the stored scopes as they are: the operator sees
	// what to set again.
	list, err := e.adm.ListUsers(as(identity.ScopeOperator), &authv1.ListUsersRequest{})
	if err != nil {
		t.Fatalf("ListUsers: %v", err)
	}
	for _, r := range list.GetUsers() {
		if r.GetEmail() == "ada@example.org" && !slices.Contains(r.GetScopes(), "x\u200by") {
			t.Errorf("listed scopes %q", r.GetScopes())
		}
	}
	// An identity from a token issued before: the call goes through.
	ctx := metadata.AppendToOutgoingContext(bearer(res.GetAccessToken()), identity.Identity{Subject: "1", Scopes: []string{"x\u200by", identity.ScopeUserSearch}}.Pairs()...)
	if _, err := e.pub.SearchUsers(ctx, &authv1.SearchUsersRequest{Query: "ada"}); err != nil {
		t.Fatalf("a call with a malformed scope in the identity: %v", err)
	}
}
