package service

import (
	"context"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"

	authv1 "fris.dev/proto/auth/v1"
)

// TestClientAlgorithm: an operator sets a client's algorithm at creation
// and changes it; the record shows it; anything but the three is refused;
// the client's client_credentials tokens are signed with its key; the
// discovery document lists the three.
func TestClientAlgorithm(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	for _, alg := range []string{"HS256", "none", "RS384", "ES384", "x"} {
		_, err := e.adm.CreateClient(ctx, &authv1.CreateClientRequest{Name: "x", Alg: alg})
		wantCode(t, err, codes.InvalidArgument)
	}
	res, err := e.adm.CreateClient(ctx, &authv1.CreateClientRequest{Name: "Fast", ClientId: "fast", Alg: "ES256"})
	if err != nil || res.GetClient().GetAlg() != "ES256" {
		t.Fatalf("create: %v %v", res, err)
	}
	cc := func() string {
		t.Helper()
		tok, err := e.pub.Token(ctx, &authv1.TokenRequest{GrantType: "client_credentials", ClientId: "fast", ClientSecret: res.GetSecret()})
		if err != nil {
			t.Fatal(err)
		}
		return kidOf(t, tok.GetAccessToken())
	}
	if got := cc(); got != e.svc.keys.SignerFor("ES256").KID {
		t.Fatalf("an ES256 client's token has kid %s", got)
	}
	_, err = e.adm.UpdateClient(ctx, &authv1.UpdateClientRequest{ClientId: "fast", Alg: proto.String("HS256")})
	wantCode(t, err, codes.InvalidArgument)
	up, err := e.adm.UpdateClient(ctx, &authv1.UpdateClientRequest{ClientId: "fast", Alg: proto.String("eddsa")})
	if err != nil || up.GetClient().GetAlg() != "EdDSA" {
		t.Fatalf("update: %v %v", up, err)
	}
	if got := cc(); got != e.svc.keys.SignerFor("EdDSA").KID {
		t.Fatalf("an EdDSA client's token has kid %s", got)
	}
	// A change of something else keeps the algorithm; RS256 is the default.
	up, err = e.adm.UpdateClient(ctx, &authv1.UpdateClientRequest{ClientId: "fast", Name: proto.String("Faster")})
	if err != nil || up.GetClient().GetAlg() != "EdDSA" {
		t.Fatalf("update of the name: %v %v", up, err)
	}
	up, err = e.adm.UpdateClient(ctx, &authv1.UpdateClientRequest{ClientId: "fast", Alg: proto.String("RS256")})
	if err != nil || up.GetClient().GetAlg() != "RS256" || cc() != e.svc.keys.Signer().KID {
		t.Fatalf("back to RS256: %v %v", up, err)
	}
	d, err := e.pub.GetDiscovery(ctx, &authv1.GetDiscoveryRequest{})
	if err != nil || len(d.GetIdTokenSigningAlgValuesSupported()) != 3 {
		t.Fatalf("discovery algs: %v %v", d.GetIdTokenSigningAlgValuesSupported(), err)
	}
}
