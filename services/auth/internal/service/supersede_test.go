package service

import (
	"context"
	"testing"

	authv1 "fris.dev/proto/auth/v1"
)

// TestRefreshSupersedesAccess: with the setting, the access token issued
// with a refresh token is inactive to introspection, userinfo and
// tokeninfo once that refresh token is spent (Hydra's behaviour); the new
// access token is active. Without it (the default) both stay active until
// they expire or are revoked.
func TestRefreshSupersedesAccess(t *testing.T) {
	for _, on := range []bool{false, true} {
		t.Run(map[bool]string{false: "off", true: "on"}[on], func(t *testing.T) {
			e := newEnv(t, func(c *Config) { c.RefreshSupersedesAccess = on })
			ctx := context.Background()
			clientID, secret := e.seed(t)
			active := func(tok string) bool {
				t.Helper()
				in, err := e.pub.Introspect(ctx, &authv1.IntrospectRequest{Token: tok, ClientId: clientID, ClientSecret: secret})
				if err != nil {
					t.Fatal(err)
				}
				_, uerr := e.pub.GetUserInfo(bearer(tok), &authv1.GetUserInfoRequest{})
				_, terr := e.pub.GetTokenInfo(bearer(tok), &authv1.GetTokenInfoRequest{})
				if in.GetActive() != (uerr == nil) || in.GetActive() != (terr == nil) {
					t.Fatalf("introspection active %v, userinfo %v, tokeninfo %v", in.GetActive(), uerr, terr)
				}
				return in.GetActive()
			}
			for _, gt := range []string{"authorization_code", ""} { // both shapes
				first, err := e.pub.Token(ctx, &authv1.TokenRequest{GrantType: gt, Code: e.login(t, clientID, nil), ClientId: clientID, ClientSecret: secret})
				if err != nil {
					t.Fatal(err)
				}
				if !active(first.GetAccessToken()) {
					t.Fatal("a fresh access token is inactive")
				}
				rgt := map[string]string{"authorization_code": "refresh_token"}[gt]
				second, err := e.pub.Token(ctx, &authv1.TokenRequest{GrantType: rgt, RefreshToken: first.GetRefreshToken()})
				if err != nil {
					t.Fatal(err)
				}
				if got := active(first.GetAccessToken()); got == on {
					t.Fatalf("grant_type %q, setting %v: the previous access token active = %v", gt, on, got)
				}
				if !active(second.GetAccessToken()) {
					t.Fatal("the new access token is inactive")
				}
				third, err := e.pub.Token(ctx, &authv1.TokenRequest{GrantType: rgt, RefreshToken: second.GetRefreshToken()})
				if err != nil {
					t.Fatal(err)
				}
				if got := active(second.GetAccessToken()); got == on || !active(third.GetAccessToken()) {
					t.Fatalf("second rotation, setting %v: previous active = %v", on, got)
				}
				// The claim is there only with the setting.
				if _, has := claims(t, third.GetAccessToken()).Get("rjti"); has != on {
					t.Fatalf("setting %v: access token has rjti = %v", on, has)
				}
			}
		})
	}
}

// BenchmarkIntrospectSupersede: the cost of -refresh-supersedes-access on
// an introspection of a good access token (the added spent-marker read),
// bbolt store. go test -run '^$' -bench IntrospectSupersede ./services/auth/internal/service/
func BenchmarkIntrospectSupersede(b *testing.B) {
	for _, on := range []bool{false, true} {
		b.Run(map[bool]string{false: "off", true: "on"}[on], func(b *testing.B) {
			e := newEnv(b, func(c *Config) { c.RefreshSupersedesAccess = on })
			ctx := context.Background()
			clientID, secret := e.seed(b)
			lr, err := e.pub.Login(ctx, &authv1.LoginRequest{Request: &authv1.AuthorizeRequest{ClientId: clientID}, Email: "ada@example.org", Password: "correct horse"})
			if err != nil {
				b.Fatal(err)
			}
			code := lr.GetCode()
			res, err := e.pub.Token(ctx, &authv1.TokenRequest{GrantType: "authorization_code", Code: code, ClientId: clientID, ClientSecret: secret})
			if err != nil {
				b.Fatal(err)
			}
			req := &authv1.IntrospectRequest{Token: res.GetAccessToken(), ClientId: clientID, ClientSecret: secret}
			b.ResetTimer()
			for range b.N {
				in, err := e.pub.Introspect(ctx, req)
				if err != nil || !in.GetActive() {
					b.Fatal(in, err)
				}
			}
		})
	}
}
