package service

import (
	"context"
	"crypto/x509"
	"encoding/base64"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"

	authv1 "fris.dev/proto/auth/v1"
	"fris.dev/services/auth/internal/keys"
)

func TestAdminValidation(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	for _, req := range []*authv1.CreateClientRequest{
		{Name: "", RedirectUrl: "https://a/cb"},
		{Name: "x", RedirectUrl: "ftp://a/cb"},
		{Name: "x", RedirectUrl: "https://a/cb#frag"},
		{Name: "x", Type: "OTHER"},
		{Name: "x", Secret: "short"},
		{Name: "x", ClientId: "with space"},
		{Name: "x", ClientId: strings.Repeat("c", 129)},
		{Name: "x", ClientId: strings.Repeat("c", 2000)},
	} {
		_, err := e.adm.CreateClient(ctx, req)
		wantCode(t, err, codes.InvalidArgument)
	}
	res, err := e.adm.CreateClient(ctx, &authv1.CreateClientRequest{Name: "x", RedirectUrl: "http://localhost:3000/cb"})
	if err != nil || len(res.GetSecret()) < 32 || res.GetClient().GetClient().GetType() != "UNDEFINED" {
		t.Fatalf("generated client = %v %v", res, err)
	}
	stored, _ := e.store.GetClient(ctx, res.GetClient().GetClient().GetClientId())
	if strings.Contains(stored.SecretHash, res.GetSecret()) || !strings.HasPrefix(stored.SecretHash, "$argon2id$") {
		t.Fatal("client secret not stored hashed")
	}
	_, err = e.adm.CreateUser(ctx, &authv1.CreateUserRequest{Email: "a@example.org", Password: "short"})
	wantCode(t, err, codes.InvalidArgument)
	_, err = e.adm.SetPassword(ctx, &authv1.SetPasswordRequest{Email: "nobody@example.org", Password: "long enough password"})
	wantCode(t, err, codes.NotFound)
}

func TestKeyRotationKeepsOldTokensValid(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	clientID, secret := e.seed(t)
	before, err := e.pub.Token(ctx, &authv1.TokenRequest{Code: e.login(t, clientID, nil), ClientId: clientID, ClientSecret: secret})
	if err != nil {
		t.Fatal(err)
	}
	rot, err := e.adm.RotateKeys(ctx, &authv1.RotateKeysRequest{})
	if err != nil {
		t.Fatal(err)
	}
	after, err := e.pub.Token(ctx, &authv1.TokenRequest{RefreshToken: before.GetRefreshToken()})
	if err != nil {
		t.Fatalf("refresh token signed by the retired key: %v", err)
	}
	if kidOf(t, after.GetAccessToken()) != rot.GetKey().GetKid() || kidOf(t, before.GetAccessToken()) == rot.GetKey().GetKid() {
		t.Fatal("new tokens are not signed by the new key")
	}
	if _, err := e.pub.GetTokenInfo(bearer(before.GetAccessToken()), &authv1.GetTokenInfoRequest{}); err != nil {
		t.Fatalf("access token of the retired key: %v", err)
	}
	certs, _ := e.pub.ListCerts(ctx, &authv1.ListCertsRequest{})
	jwks, _ := e.pub.GetJWKS(ctx, &authv1.GetJWKSRequest{})
	// /certs lists the RSA keys only; the JWKS every published key: two
	// of each algorithm, the retired one overlapping its successor.
	if len(certs.GetKeys()) != 2 || len(jwks.GetKeys()) != 2*(1+len(keys.CurveAlgs)) {
		t.Fatalf("published keys: certs %d jwks %d", len(certs.GetKeys()), len(jwks.GetKeys()))
	}
	perAlg := map[string]int{}
	for _, k := range jwks.GetKeys() {
		perAlg[k.GetAlg()]++
	}
	if perAlg["RS256"] != 2 || perAlg["ES256"] != 2 || perAlg["EdDSA"] != 2 {
		t.Fatalf("JWKS per alg: %v", perAlg)
	}
	for _, c := range certs.GetKeys() {
		der, err := base64.RawURLEncoding.DecodeString(c.GetDerFormat())
		if err != nil {
			t.Fatal(err)
		}
		std, _ := base64.StdEncoding.DecodeString(c.GetBase64DerFormat())
		if string(der) != string(std) || c.GetKeyType() != "RSA" || c.GetUse() != "sig" {
			t.Fatalf("cert %v", c)
		}
		if _, err := x509.ParsePKIXPublicKey(der); err != nil {
			t.Fatal(err)
		}
	}
	ks, _ := e.adm.ListKeys(ctx, &authv1.ListKeysRequest{})
	if len(ks.GetKeys()) != 6 {
		t.Fatalf("keys = %v", ks)
	}
	for i := 0; i < 6; i += 2 {
		old, cur := ks.GetKeys()[i], ks.GetKeys()[i+1]
		if old.GetActive() || !cur.GetActive() || old.GetPublishUntil() == 0 || old.GetAlg() != cur.GetAlg() {
			t.Fatalf("keys = %v", ks)
		}
	}
}
