package service

import (
	"context"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	authv1 "fris.dev/proto/auth/v1"
)

// TestUpdateClient: only the fields named change, checked as at creation;
// the secret stays.
func TestUpdateClient(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	clientID, secret := e.seed(t)
	for _, req := range []*authv1.UpdateClientRequest{
		{ClientId: clientID, RedirectUrl: proto.String("ftp://a/cb")},
		{ClientId: clientID, RedirectUrl: proto.String("https://a/cb#frag")},
		{ClientId: clientID, RedirectUrl: proto.String("/relative")},
		{ClientId: clientID, RedirectUrl: proto.String("https://a/" + strings.Repeat("x", 2100))},
		{ClientId: clientID, RedirectUrl: proto.String(strings.Repeat("https://a/cb,", 33))},
		{ClientId: clientID, RedirectUrl: proto.String(strings.Repeat("x", 17<<10))},
		{ClientId: clientID, Description: proto.String(strings.Repeat("d", 4097))},
		{ClientId: clientID, Name: proto.String("  ")},
		{ClientId: strings.Repeat("c", 200), Name: proto.String("x")},
	} {
		_, err := e.adm.UpdateClient(ctx, req)
		wantCode(t, err, codes.InvalidArgument)
	}
	_, err := e.adm.UpdateClient(ctx, &authv1.UpdateClientRequest{ClientId: "nosuch", Description: proto.String("x")})
	wantCode(t, err, codes.NotFound)

	res, err := e.adm.UpdateClient(ctx, &authv1.UpdateClientRequest{ClientId: clientID, Description: proto.String("the lab's registry"), RedirectUrl: proto.String(" https://new.example/cb ,https://new.example/cb2")})
	if err != nil {
		t.Fatal(err)
	}
	c := res.GetClient().GetClient()
	if c.GetName() != "Demo" || c.GetDescription() != "the lab's registry" || c.GetRedirectUrl() != "https://new.example/cb,https://new.example/cb2" || c.GetType() != "MDR" {
		t.Fatalf("updated client = %v", c)
	}
	// The login flow holds the client to its new list.
	if _, err := e.pub.Authorize(ctx, &authv1.AuthorizeRequest{ClientId: clientID, RedirectUri: "https://app.example/cb"}); status.Code(err) != codes.InvalidArgument {
		t.Errorf("a redirect URL taken off the list: %v", err)
	}
	if _, err := e.pub.Authorize(ctx, &authv1.AuthorizeRequest{ClientId: clientID, RedirectUri: "https://new.example/cb2"}); err != nil {
		t.Errorf("a redirect URL put on the list: %v", err)
	}
	res, err = e.adm.UpdateClient(ctx, &authv1.UpdateClientRequest{ClientId: clientID, Name: proto.String("Renamed"), RedirectUrl: proto.String("")})
	if err != nil || res.GetClient().GetClient().GetRedirectUrl() != "" || res.GetClient().GetClient().GetDescription() != "the lab's registry" {
		t.Fatalf("second update = %v, %v", res, err)
	}
	if _, err := e.pub.Token(ctx, &authv1.TokenRequest{GrantType: grantClient, ClientId: clientID, ClientSecret: secret}); err != nil {
		t.Errorf("the secret changed with the update: %v", err)
	}
}

// TestRotateClientSecret: the new secret works, the old is refused at
// once, the stored value is a hash; tokens survive unless revoke_tokens.
func TestRotateClientSecret(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	clientID, secret := e.seed(t)
	before, err := e.pub.Token(ctx, &authv1.TokenRequest{GrantType: grantClient, ClientId: clientID, ClientSecret: secret})
	if err != nil {
		t.Fatal(err)
	}
	for _, req := range []*authv1.RotateClientSecretRequest{
		{ClientId: clientID, Secret: "short"},
		{ClientId: clientID, Secret: strings.Repeat("s", 1025)},
		{ClientId: "with space"},
	} {
		_, err := e.adm.RotateClientSecret(ctx, req)
		if code := status.Code(err); code != codes.InvalidArgument && code != codes.NotFound {
			t.Errorf("%v: %v", req, err)
		}
	}
	_, err = e.adm.RotateClientSecret(ctx, &authv1.RotateClientSecretRequest{ClientId: "nosuch"})
	wantCode(t, err, codes.NotFound)

	rot, err := e.adm.RotateClientSecret(ctx, &authv1.RotateClientSecretRequest{ClientId: clientID})
	if err != nil {
		t.Fatal(err)
	}
	fresh := rot.GetSecret()
	if len(fresh) < 32 || fresh == secret || rot.GetClient().GetClient().GetClientId() != clientID {
		t.Fatalf("rotated = %v", rot)
	}
	stored, _ := e.store.GetClient(ctx, clientID)
	if strings.Contains(stored.SecretHash, fresh) || !strings.HasPrefix(stored.SecretHash, "$argon2id$") {
		t.Fatal("the new secret is not stored hashed")
	}
	_, err = e.pub.Token(ctx, &authv1.TokenRequest{GrantType: grantClient, ClientId: clientID, ClientSecret: secret})
	wantCode(t, err, codes.Unauthenticated)
	if _, err := e.pub.Token(ctx, &authv1.TokenRequest{GrantType: grantClient, ClientId: clientID, ClientSecret: fresh}); err != nil {
		t.Fatalf("the new secret: %v", err)
	}
	if _, err := e.pub.GetTokenInfo(bearer(before.GetAccessToken()), &authv1.GetTokenInfoRequest{}); err != nil {
		t.Errorf("a token of the old secret ended without revoke_tokens: %v", err)
	}

	chosen := "chosen-secret-of-the-operator"
	if _, err := e.adm.RotateClientSecret(ctx, &authv1.RotateClientSecretRequest{ClientId: clientID, Secret: chosen, RevokeTokens: true}); err != nil {
		t.Fatal(err)
	}
	_, err = e.pub.GetTokenInfo(bearer(before.GetAccessToken()), &authv1.GetTokenInfoRequest{})
	wantCode(t, err, codes.PermissionDenied)
	if _, err := e.pub.Token(ctx, &authv1.TokenRequest{GrantType: grantClient, ClientId: clientID, ClientSecret: chosen}); err != nil {
		t.Fatalf("the chosen secret: %v", err)
	}
}
