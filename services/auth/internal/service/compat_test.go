package service

import (
	"context"
	"encoding/base64"
	"slices"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"fris.dev/pkg/errinfo"
	authv1 "fris.dev/proto/auth/v1"
)

// What real clients need beside the spec: the Samply auth client and
// standard OAuth 2.0 / OpenID Connect libraries.

func wantReason(t *testing.T, err error, c codes.Code, reason string) {
	t.Helper()
	wantCode(t, err, c)
	if got := errinfo.Reason(status.Convert(err)); got != reason {
		t.Fatalf("reason = %q, want %q (%v)", got, reason, err)
	}
}

func TestTokenGrantTypes(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.DefaultScopes = []string{"mdr:public"} })
	ctx := context.Background()
	clientID, secret := e.seed(t)
	other, err := e.adm.CreateClient(ctx, &authv1.CreateClientRequest{Name: "Other", ClientId: "7", RedirectUrl: "https://other.example/cb"})
	if err != nil {
		t.Fatal(err)
	}
	signIn := func() *authv1.TokenResponse {
		res, err := e.pub.Token(ctx, &authv1.TokenRequest{Code: e.login(t, clientID, nil), ClientId: clientID, ClientSecret: secret, GrantType: "authorization_code"})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	for _, tc := range []struct {
		name   string
		req    func() *authv1.TokenRequest
		code   codes.Code
		reason string
	}{
		{"unknown grant", func() *authv1.TokenRequest { return &authv1.TokenRequest{GrantType: "password"} }, codes.InvalidArgument, "unsupported_grant_type"},
		{"unknown grant with a code", func() *authv1.TokenRequest {
			return &authv1.TokenRequest{GrantType: "urn:ietf:params:oauth:grant-type:device_code", Code: "x"}
		}, codes.InvalidArgument, "unsupported_grant_type"},
		// The spec's 400 for no payload stays a plain invalid request.
		{"no payload", func() *authv1.TokenRequest { return &authv1.TokenRequest{} }, codes.InvalidArgument, ""},
		{"authorization_code without code", func() *authv1.TokenRequest {
			return &authv1.TokenRequest{GrantType: "authorization_code", RefreshToken: signIn().GetRefreshToken()}
		}, codes.InvalidArgument, ""},
		{"refresh_token without one", func() *authv1.TokenRequest { return &authv1.TokenRequest{GrantType: "refresh_token", Code: "x"} }, codes.InvalidArgument, ""},
		{"client_credentials wrong secret", func() *authv1.TokenRequest {
			return &authv1.TokenRequest{GrantType: "client_credentials", ClientId: clientID, ClientSecret: "wrong-wrong-wrong"}
		}, codes.Unauthenticated, "invalid_client"},
		{"client_credentials unknown client", func() *authv1.TokenRequest {
			return &authv1.TokenRequest{GrantType: "client_credentials", ClientId: "nope", ClientSecret: secret}
		}, codes.Unauthenticated, "invalid_client"},
		{"client_credentials no secret", func() *authv1.TokenRequest {
			return &authv1.TokenRequest{GrantType: "client_credentials", ClientId: clientID}
		}, codes.Unauthenticated, "invalid_client"},
		{"refresh with a wrong secret", func() *authv1.TokenRequest {
			return &authv1.TokenRequest{RefreshToken: signIn().GetRefreshToken(), ClientId: clientID, ClientSecret: "wrong-wrong-wrong", GrantType: "refresh_token"}
		}, codes.Unauthenticated, "invalid_client"},
		{"refresh with another client's secret", func() *authv1.TokenRequest {
			return &authv1.TokenRequest{RefreshToken: signIn().GetRefreshToken(), ClientSecret: other.GetSecret()}
		}, codes.Unauthenticated, "invalid_client"},
		{"refresh by another client", func() *authv1.TokenRequest {
			return &authv1.TokenRequest{RefreshToken: signIn().GetRefreshToken(), ClientId: "7", ClientSecret: other.GetSecret()}
		}, codes.PermissionDenied, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.pub.Token(ctx, tc.req())
			wantReason(t, err, tc.code, tc.reason)
		})
	}

	t.Run("refresh with the right secret", func(t *testing.T) {
		res, err := e.pub.Token(ctx, &authv1.TokenRequest{RefreshToken: signIn().GetRefreshToken(), ClientId: clientID, ClientSecret: secret, GrantType: "refresh_token"})
		// An OAuth 2.0 refresh carries no id token (docs/decisions.md).
		if err != nil || res.GetTokenType() != "Bearer" || res.GetExpiresIn() != 3600 || res.IdToken != nil || res.RefreshToken == nil {
			t.Fatalf("refresh = %v, %v", res, err)
		}
	})

	t.Run("client_credentials", func(t *testing.T) {
		res, err := e.pub.Token(ctx, &authv1.TokenRequest{GrantType: "client_credentials", ClientId: "7", ClientSecret: other.GetSecret()})
		if err != nil {
			t.Fatal(err)
		}
		// No user: no id token, no refresh token, not even empty ones.
		if res.IdToken != nil || res.RefreshToken != nil || res.GetTokenType() != "Bearer" || res.GetExpiresIn() != 3600 {
			t.Fatalf("response = %v", res)
		}
		a := claims(t, res.GetAccessToken())
		if sc, _ := a.Get("scope"); a.Subject() != "client:7" || sc != "mdr:public" {
			t.Fatalf("sub %q scope %v", a.Subject(), sc)
		}
		// The numeric client ID is not user 7's subject anywhere.
		ti, err := e.pub.GetTokenInfo(bearer(res.GetAccessToken()), &authv1.GetTokenInfoRequest{})
		if err != nil || ti.GetSubject() != "client:7" || !slices.Equal(ti.GetScope(), []string{"mdr:public"}) {
			t.Fatalf("tokeninfo = %v, %v", ti, err)
		}
		_, err = e.pub.GetUserInfo(bearer(res.GetAccessToken()), &authv1.GetUserInfoRequest{})
		wantCode(t, err, codes.PermissionDenied)

		if _, err := e.adm.SetClientDisabled(ctx, &authv1.SetClientDisabledRequest{ClientId: "7", Disabled: true}); err != nil {
			t.Fatal(err)
		}
		_, err = e.pub.Token(ctx, &authv1.TokenRequest{GrantType: "client_credentials", ClientId: "7", ClientSecret: other.GetSecret()})
		wantReason(t, err, codes.Unauthenticated, "invalid_client")
	})
}

func TestNonceOnlyWhenSent(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	clientID, secret := e.seed(t)
	for _, nonce := range []string{"", "n-0S6_WzA2Mj"} {
		res, err := e.pub.Token(ctx, &authv1.TokenRequest{Code: e.login(t, clientID, &authv1.AuthorizeRequest{Nonce: nonce}), ClientId: clientID, ClientSecret: secret})
		if err != nil {
			t.Fatal(err)
		}
		got, ok := claims(t, res.GetIdToken()).Get("nonce")
		if nonce == "" && ok {
			t.Fatalf("id token carries nonce %v nobody sent", got)
		}
		if nonce != "" && got != nonce {
			t.Fatalf("id token nonce = %v, want %q", got, nonce)
		}
		// /tokeninfo's nonce (a spec field) is still there.
		ti, err := e.pub.GetTokenInfo(bearer(res.GetAccessToken()), &authv1.GetTokenInfoRequest{})
		if err != nil || ti.GetNonce() == "" || (nonce != "" && ti.GetNonce() != nonce) {
			t.Fatalf("tokeninfo nonce = %q, %v", ti.GetNonce(), err)
		}
		// A refreshed id token has none: there was no authorization request.
		next, err := e.pub.Token(ctx, &authv1.TokenRequest{RefreshToken: res.GetRefreshToken()})
		if err != nil {
			t.Fatal(err)
		}
		if got, ok := claims(t, next.GetIdToken()).Get("nonce"); ok {
			t.Fatalf("refreshed id token nonce = %v", got)
		}
	}
}

// The Samply auth client's private-key flow: a sign request by the key's
// hash, answered with algorithm and exp beside the spec's names, then the
// signed code without client_id.
func TestSamplySignedCodeWithoutClient(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	clientID, secret := e.seed(t)
	k := userKey()
	reg, err := e.pub.Register(ctx, &authv1.RegisterRequest{Email: "grace@example.org", Name: "Grace", Base64EncodedPublicKey: base64.StdEncoding.EncodeToString(spki(t, k))})
	if err != nil {
		t.Fatal(err)
	}
	if reg.GetUserId_() != reg.GetUserId() || reg.GetKeyId_() != reg.GetKeyId() || reg.GetKeyId() == 0 {
		t.Fatalf("register = %v", reg)
	}
	sr, err := e.pub.SignRequest(ctx, &authv1.SignRequestRequest{KeyIdAlias: reg.GetKeyId()})
	if err != nil {
		t.Fatal(err)
	}
	if sr.GetAlgorithm() != "SHA512withRSA" || sr.GetAlgoritm() != sr.GetAlgorithm() || sr.GetExp() != sr.GetExpirationDate() || sr.GetExp() == 0 {
		t.Fatalf("sign request = %v", sr)
	}
	res, err := e.pub.Token(ctx, &authv1.TokenRequest{Code: sr.GetCode(), Signature: sign(t, k, sr.GetCode())})
	if err != nil {
		t.Fatal(err)
	}
	a := claims(t, res.GetAccessToken())
	// No client: the audience is the issuer (every token has one).
	if a.Subject() != e.uid(t, "grace@example.org") || len(a.Audience()) != 1 || a.Audience()[0] != issuer {
		t.Fatalf("sub %q aud %v", a.Subject(), a.Audience())
	}
	// Introspection names that audience, and no client.
	in, err := e.pub.Introspect(ctx, &authv1.IntrospectRequest{Token: res.GetAccessToken(), ClientId: clientID, ClientSecret: secret})
	if err != nil || !in.GetActive() || in.GetAud() != issuer || in.ClientId != nil {
		t.Fatalf("introspection = %v, %v", in, err)
	}
	// Its refresh token works too, still without a client.
	next, err := e.pub.Token(ctx, &authv1.TokenRequest{RefreshToken: res.GetRefreshToken()})
	if err != nil || claims(t, next.GetAccessToken()).Subject() != e.uid(t, "grace@example.org") {
		t.Fatalf("refresh = %v", err)
	}
	// A secret on such a refresh has no client to check against.
	sr, _ = e.pub.SignRequest(ctx, &authv1.SignRequestRequest{KeyId: reg.GetKeyId()})
	res, _ = e.pub.Token(ctx, &authv1.TokenRequest{Code: sr.GetCode(), Signature: sign(t, k, sr.GetCode())})
	_, err = e.pub.Token(ctx, &authv1.TokenRequest{RefreshToken: res.GetRefreshToken(), ClientSecret: "some-secret-some-secret"})
	wantReason(t, err, codes.Unauthenticated, "invalid_client")
}

func TestOpenIDFieldsBesideTheSpecs(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	clientID, secret := e.seed(t)
	res, err := e.pub.Token(ctx, &authv1.TokenRequest{Code: e.login(t, clientID, nil), ClientId: clientID, ClientSecret: secret})
	if err != nil {
		t.Fatal(err)
	}
	ui, err := e.pub.GetUserInfo(bearer(res.GetAccessToken()), &authv1.GetUserInfoRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if ui.GetSub() != claims(t, res.GetAccessToken()).Subject() || ui.GetSub() != claims(t, res.GetIdToken()).Subject() ||
		ui.GetName() != "Ada Lovelace" || ui.GetRealName() != "Ada Lovelace" {
		t.Fatalf("userinfo = %v", ui)
	}
	d, err := e.pub.GetDiscovery(ctx, &authv1.GetDiscoveryRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(d.GetTokenEndpointAuthMethodsSupported(), []string{"client_secret_basic", "client_secret_post"}) ||
		!slices.Equal(d.GetGrantTypesSupported(), []string{"authorization_code", "refresh_token", "client_credentials"}) {
		t.Fatalf("discovery = %v", d)
	}
}
