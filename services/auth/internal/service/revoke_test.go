package service

import (
	"context"
	"testing"

	"google.golang.org/grpc/codes"
	grpcstatus "google.golang.org/grpc/status"

	authv1 "fris.dev/proto/auth/v1"
)

// signIn runs the client secret flow and returns its tokens.
func (e *env) signIn(t *testing.T, clientID, secret string) *authv1.TokenResponse {
	t.Helper()
	res, err := e.pub.Token(context.Background(), &authv1.TokenRequest{Code: e.login(t, clientID, nil), ClientId: clientID, ClientSecret: secret})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func (e *env) active(t *testing.T, clientID, secret, tok string) bool {
	t.Helper()
	res, err := e.pub.Introspect(context.Background(), &authv1.IntrospectRequest{Token: tok, ClientId: clientID, ClientSecret: secret})
	if err != nil {
		t.Fatal(err)
	}
	return res.GetActive()
}

// TestRevocationCauses: each cause ends the access token at the service's
// bearer endpoints and introspection, refuses the refresh token with 403,
// and is published in the revocation list; where the cause leaves the user
// able to sign in, a new sign-in works at once (even within the same
// second).
func TestRevocationCauses(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		// revoke applies the cause to the token set; kinds are the log
		// entries it must add.
		revoke func(t *testing.T, e *env, clientID, secret string, set *authv1.TokenResponse)
		kinds  []string
		// keepsRefresh: the cause leaves the refresh token's chain alone.
		keepsRefresh bool
		// undo makes signing in possible again (nil: it always was).
		undo func(t *testing.T, e *env, clientID string)
	}{
		{name: "disable user", kinds: []string{"user"},
			revoke: func(t *testing.T, e *env, _, _ string, _ *authv1.TokenResponse) {
				must{t}.ok(e.adm.SetUserDisabled(ctx, &authv1.SetUserDisabledRequest{Email: "ada@example.org", Disabled: true}))
			},
			undo: func(t *testing.T, e *env, _ string) {
				must{t}.ok(e.adm.SetUserDisabled(ctx, &authv1.SetUserDisabledRequest{Email: "ada@example.org", Disabled: false}))
			}},
		{name: "new password", kinds: []string{"user"},
			revoke: func(t *testing.T, e *env, _, _ string, _ *authv1.TokenResponse) {
				must{t}.ok(e.adm.SetPassword(ctx, &authv1.SetPasswordRequest{Email: "ada@example.org", Password: "correct horse"}))
			}},
		{name: "revoke user", kinds: []string{"user"},
			revoke: func(t *testing.T, e *env, _, _ string, _ *authv1.TokenResponse) {
				must{t}.ok(e.adm.RevokeUser(ctx, &authv1.RevokeUserRequest{Email: "ada@example.org"}))
			}},
		{name: "disable client", kinds: []string{"client"},
			revoke: func(t *testing.T, e *env, clientID, _ string, _ *authv1.TokenResponse) {
				must{t}.ok(e.adm.SetClientDisabled(ctx, &authv1.SetClientDisabledRequest{ClientId: clientID, Disabled: true}))
			},
			undo: func(t *testing.T, e *env, clientID string) {
				must{t}.ok(e.adm.SetClientDisabled(ctx, &authv1.SetClientDisabledRequest{ClientId: clientID, Disabled: false}))
			}},
		{name: "revoke client", kinds: []string{"client"},
			revoke: func(t *testing.T, e *env, clientID, _ string, _ *authv1.TokenResponse) {
				must{t}.ok(e.adm.RevokeClient(ctx, &authv1.RevokeClientRequest{ClientId: clientID}))
			}},
		{name: "RFC 7009 refresh token", kinds: []string{"chain"},
			revoke: func(t *testing.T, e *env, clientID, secret string, set *authv1.TokenResponse) {
				must{t}.ok(e.pub.Revoke(ctx, &authv1.RevokeRequest{Token: set.GetRefreshToken(), TokenTypeHint: "refresh_token", ClientId: clientID, ClientSecret: secret}))
			}},
		{name: "RFC 7009 access token", kinds: []string{"token"}, keepsRefresh: true,
			revoke: func(t *testing.T, e *env, clientID, secret string, set *authv1.TokenResponse) {
				must{t}.ok(e.pub.Revoke(ctx, &authv1.RevokeRequest{Token: set.GetAccessToken(), ClientId: clientID, ClientSecret: secret}))
			}},
		{name: "refresh reuse", kinds: []string{"chain"},
			revoke: func(t *testing.T, e *env, _, _ string, set *authv1.TokenResponse) {
				must{t}.ok(e.pub.Token(ctx, &authv1.TokenRequest{RefreshToken: set.GetRefreshToken()}))
				_, err := e.pub.Token(ctx, &authv1.TokenRequest{RefreshToken: set.GetRefreshToken()})
				wantCode(t, err, codes.PermissionDenied)
				// The refresh below presents the spent token: refused either way.
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			clientID, secret := e.seed(t)
			set := e.signIn(t, clientID, secret)
			if _, err := e.pub.GetTokenInfo(bearer(set.GetAccessToken()), &authv1.GetTokenInfoRequest{}); err != nil {
				t.Fatalf("tokeninfo before: %v", err)
			}
			before, err := e.svc.RevocationList(ctx, 0)
			if err != nil {
				t.Fatal(err)
			}
			tc.revoke(t, e, clientID, secret, set)

			for name, call := range map[string]func(context.Context) error{
				"tokeninfo": func(ctx context.Context) error {
					_, err := e.pub.GetTokenInfo(ctx, &authv1.GetTokenInfoRequest{})
					return err
				},
				"userinfo": func(ctx context.Context) error {
					_, err := e.pub.GetUserInfo(ctx, &authv1.GetUserInfoRequest{})
					return err
				},
				"search": func(ctx context.Context) error {
					_, err := e.pub.SearchUsers(ctx, &authv1.SearchUsersRequest{Query: "ada"})
					return err
				},
			} {
				if err := call(bearer(set.GetAccessToken())); grpcstatus.Code(err) != codes.PermissionDenied {
					t.Errorf("%s after: %v, want PermissionDenied", name, err)
				}
			}
			if tc.undo != nil {
				tc.undo(t, e, clientID)
			}
			// Introspection needs an enabled client: the one undone, or another.
			if e.active(t, clientID, secret, set.GetAccessToken()) {
				t.Error("the access token is still active")
			}
			_, err = e.pub.Token(ctx, &authv1.TokenRequest{RefreshToken: set.GetRefreshToken()})
			if tc.keepsRefresh {
				if err != nil {
					t.Errorf("refresh after: %v", err)
				}
			} else {
				wantCode(t, err, codes.PermissionDenied)
			}
			after, err := e.svc.RevocationList(ctx, before.GetVersion())
			// From version 0 the list is the full one, else the changes.
			if err != nil || after.GetFull() != (before.GetVersion() == 0) {
				t.Fatalf("RevocationList(%d) = %v, %v", before.GetVersion(), after, err)
			}
			var kinds []string
			for _, r := range after.GetRevocations() {
				kinds = append(kinds, r.GetKind())
				if r.GetUntil() == 0 || (r.GetKind() == "user" || r.GetKind() == "client") == (r.GetNotBefore() == 0) {
					t.Errorf("entry %v", r)
				}
			}
			if len(kinds) != len(tc.kinds) || (len(kinds) > 0 && kinds[0] != tc.kinds[0]) {
				t.Errorf("logged %v, want %v", kinds, tc.kinds)
			}
			// Signing in again works at once: the new tokens are not born
			// revoked, even in the second of the revocation.
			fresh := e.signIn(t, clientID, secret)
			if _, err := e.pub.GetTokenInfo(bearer(fresh.GetAccessToken()), &authv1.GetTokenInfoRequest{}); err != nil {
				t.Errorf("a token issued after the revocation: %v", err)
			}
			if _, err := e.pub.Token(ctx, &authv1.TokenRequest{RefreshToken: fresh.GetRefreshToken()}); err != nil {
				t.Errorf("refreshing a token issued after the revocation: %v", err)
			}
		})
	}
}

// must{t}.ok(call()) fails the test when the call does.
type must struct{ t *testing.T }

func (m must) ok(_ any, err error) {
	m.t.Helper()
	if err != nil {
		m.t.Fatal(err)
	}
}

// TestClientTokenRevokedWithItsClient: a client_credentials token dies
// with its client.
func TestClientTokenRevokedWithItsClient(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	clientID, secret := e.seed(t)
	res, err := e.pub.Token(ctx, &authv1.TokenRequest{GrantType: grantClient, ClientId: clientID, ClientSecret: secret})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.pub.GetTokenInfo(bearer(res.GetAccessToken()), &authv1.GetTokenInfoRequest{}); err != nil {
		t.Fatal(err)
	}
	must{t}.ok(e.adm.SetClientDisabled(ctx, &authv1.SetClientDisabledRequest{ClientId: clientID, Disabled: true}))
	_, err = e.pub.GetTokenInfo(bearer(res.GetAccessToken()), &authv1.GetTokenInfoRequest{})
	wantCode(t, err, codes.PermissionDenied)
	must{t}.ok(e.adm.SetClientDisabled(ctx, &authv1.SetClientDisabledRequest{ClientId: clientID, Disabled: false}))
	_, err = e.pub.GetTokenInfo(bearer(res.GetAccessToken()), &authv1.GetTokenInfoRequest{})
	wantCode(t, err, codes.PermissionDenied) // enabling again brings no token back
}

// TestRevokeEndpoint: RFC 7009's answers.
func TestRevokeEndpoint(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	clientID, secret := e.seed(t)
	other, err := e.adm.CreateClient(ctx, &authv1.CreateClientRequest{Name: "Other", RedirectUrl: "https://o.example/cb", ClientId: "other"})
	if err != nil {
		t.Fatal(err)
	}
	set := e.signIn(t, clientID, secret)
	for _, tc := range []struct {
		name string
		req  *authv1.RevokeRequest
		want codes.Code
	}{
		{"no token", &authv1.RevokeRequest{ClientId: clientID, ClientSecret: secret}, codes.InvalidArgument},
		{"unknown token", &authv1.RevokeRequest{Token: "not.a.token", ClientId: clientID, ClientSecret: secret}, codes.OK},
		{"unknown token, no client", &authv1.RevokeRequest{Token: "garbage"}, codes.OK},
		{"wrong secret", &authv1.RevokeRequest{Token: set.GetAccessToken(), ClientId: clientID, ClientSecret: "wrong secret, long enough"}, codes.Unauthenticated},
		{"unknown client", &authv1.RevokeRequest{Token: set.GetAccessToken(), ClientId: "nobody", ClientSecret: secret}, codes.Unauthenticated},
		{"a client's token without client authentication", &authv1.RevokeRequest{Token: set.GetAccessToken()}, codes.Unauthenticated},
		{"another client", &authv1.RevokeRequest{Token: set.GetAccessToken(), ClientId: "other", ClientSecret: other.GetSecret()}, codes.PermissionDenied},
		{"its client", &authv1.RevokeRequest{Token: set.GetAccessToken(), ClientId: clientID, ClientSecret: secret}, codes.OK},
		{"again", &authv1.RevokeRequest{Token: set.GetAccessToken(), ClientId: clientID, ClientSecret: secret}, codes.OK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.pub.Revoke(ctx, tc.req)
			if got := grpcstatus.Code(err); got != tc.want {
				t.Fatalf("Revoke = %v, want %v", err, tc.want)
			}
		})
	}
	// A token issued to no client (signature flow without client_id) is
	// revoked by whoever holds it.
	k := userKey()
	reg := register(t, e, "key@example.org", k)
	sr, err := e.pub.SignRequest(ctx, &authv1.SignRequestRequest{KeyId: reg.GetKeyId()})
	if err != nil {
		t.Fatal(err)
	}
	free, err := e.pub.Token(ctx, &authv1.TokenRequest{Code: sr.GetCode(), Signature: sign(t, k, sr.GetCode())})
	if err != nil {
		t.Fatal(err)
	}
	must{t}.ok(e.pub.Revoke(ctx, &authv1.RevokeRequest{Token: free.GetRefreshToken()}))
	_, err = e.pub.Token(ctx, &authv1.TokenRequest{RefreshToken: free.GetRefreshToken()})
	wantCode(t, err, codes.PermissionDenied)
	_, err = e.pub.GetTokenInfo(bearer(free.GetAccessToken()), &authv1.GetTokenInfoRequest{})
	wantCode(t, err, codes.PermissionDenied) // the chain's access token went with it
}

// TestIntrospection: RFC 7662's answers.
func TestIntrospection(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	clientID, secret := e.seed(t)
	set := e.signIn(t, clientID, secret)
	for _, req := range []*authv1.IntrospectRequest{
		{Token: set.GetAccessToken()},
		{Token: set.GetAccessToken(), ClientId: clientID},
		{Token: set.GetAccessToken(), ClientId: clientID, ClientSecret: "wrong secret, long enough"},
	} {
		_, err := e.pub.Introspect(ctx, req)
		wantCode(t, err, codes.Unauthenticated)
	}
	_, err := e.pub.Introspect(ctx, &authv1.IntrospectRequest{ClientId: clientID, ClientSecret: secret})
	wantCode(t, err, codes.InvalidArgument)

	res, err := e.pub.Introspect(ctx, &authv1.IntrospectRequest{Token: set.GetAccessToken(), ClientId: clientID, ClientSecret: secret})
	if err != nil {
		t.Fatal(err)
	}
	c := claims(t, set.GetAccessToken())
	if !res.GetActive() || res.GetSub() != c.Subject() || res.GetClientId() != clientID || res.GetAud() != clientID ||
		res.GetTokenType() != "Bearer" || res.GetScope() != "openid mdr:secret users:search" || res.GetIss() != issuer ||
		res.GetJti() != c.JwtID() || int64(res.GetExp()) != c.Expiration().Unix() || int64(res.GetIat()) != c.IssuedAt().Unix() ||
		int64(res.GetNbf()) != c.NotBefore().Unix() {
		t.Fatalf("introspection = %v", res)
	}
	res, err = e.pub.Introspect(ctx, &authv1.IntrospectRequest{Token: set.GetRefreshToken(), ClientId: clientID, ClientSecret: secret})
	if err != nil || !res.GetActive() || res.GetTokenType() != "refresh_token" || res.Scope != nil {
		t.Fatalf("refresh token introspection = %v, %v", res, err)
	}
	// Spent on rotation: no longer active.
	must{t}.ok(e.pub.Token(ctx, &authv1.TokenRequest{RefreshToken: set.GetRefreshToken()}))
	for name, tok := range map[string]string{
		"spent refresh token": set.GetRefreshToken(),
		"id token":            set.GetIdToken(),
		"garbage":             "x.y.z",
		"empty claims":        "e30.e30.e30",
	} {
		res, err := e.pub.Introspect(ctx, &authv1.IntrospectRequest{Token: tok, ClientId: clientID, ClientSecret: secret})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		// Nothing but active=false.
		if res.Active == nil || res.GetActive() || res.Sub != nil || res.Scope != nil || res.Exp != nil {
			t.Fatalf("%s: %v", name, res)
		}
	}
}

// TestRevocationListVersions: the list resource servers poll answers the
// changes since a version, or everything when asked from 0 or from beyond
// the log.
func TestRevocationListVersions(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	clientID, _ := e.seed(t)
	l0, err := e.svc.RevocationList(ctx, 0)
	if err != nil || !l0.GetFull() || len(l0.GetRevocations()) != 0 || l0.GetVersion() != 0 {
		t.Fatalf("empty = %v, %v", l0, err)
	}
	must{t}.ok(e.adm.RevokeUser(ctx, &authv1.RevokeUserRequest{Email: "ada@example.org"}))
	l1, _ := e.svc.RevocationList(ctx, 0)
	must{t}.ok(e.adm.RevokeClient(ctx, &authv1.RevokeClientRequest{ClientId: clientID}))
	l2, _ := e.svc.RevocationList(ctx, l1.GetVersion())
	if l2.GetFull() || len(l2.GetRevocations()) != 1 || l2.GetRevocations()[0].GetKind() != "client" || l2.GetRevocations()[0].GetId() != clientID ||
		l2.GetVersion() <= l1.GetVersion() {
		t.Fatalf("since %d = %v", l1.GetVersion(), l2)
	}
	if l3, _ := e.svc.RevocationList(ctx, l2.GetVersion()); l3.GetFull() || len(l3.GetRevocations()) != 0 || l3.GetVersion() != l2.GetVersion() {
		t.Fatalf("nothing new = %v", l3)
	}
	if l4, _ := e.svc.RevocationList(ctx, l2.GetVersion()+7); !l4.GetFull() || len(l4.GetRevocations()) != 2 || l4.GetVersion() != l2.GetVersion() {
		t.Fatalf("from beyond the log = %v", l4)
	}
	// Unknown users and clients are 404, and log nothing.
	_, err = e.adm.RevokeUser(ctx, &authv1.RevokeUserRequest{Email: "nobody@example.org"})
	wantCode(t, err, codes.NotFound)
	_, err = e.adm.RevokeClient(ctx, &authv1.RevokeClientRequest{ClientId: "nobody"})
	wantCode(t, err, codes.NotFound)
}

// TestRevocationsInOneSecond: a token issued between two revocations of
// the same second (it carries the first one's revoked-before as its iat)
// is ended by the second.
func TestRevocationsInOneSecond(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	clientID, secret := e.seed(t)
	for range 3 {
		must{t}.ok(e.adm.RevokeUser(ctx, &authv1.RevokeUserRequest{Email: "ada@example.org"}))
		set := e.signIn(t, clientID, secret)
		if _, err := e.pub.GetTokenInfo(bearer(set.GetAccessToken()), &authv1.GetTokenInfoRequest{}); err != nil {
			t.Fatalf("a token issued after the revocation: %v", err)
		}
		must{t}.ok(e.adm.RevokeUser(ctx, &authv1.RevokeUserRequest{Email: "ada@example.org"}))
		_, err := e.pub.GetTokenInfo(bearer(set.GetAccessToken()), &authv1.GetTokenInfoRequest{})
		wantCode(t, err, codes.PermissionDenied)
	}
}
