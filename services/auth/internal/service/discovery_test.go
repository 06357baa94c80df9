package service

import (
	"context"
	"testing"

	"google.golang.org/grpc/metadata"

	"fris.dev/pkg/identity"
	authv1 "fris.dev/proto/auth/v1"
)

// The discovery document names the paths under the prefix the gateway says
// it serves group A at, and /oauth2 when it says nothing usable.
func TestDiscoveryFollowsTheGatewaysPrefix(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct {
		md   []string
		want string
	}{
		{nil, "/oauth2"},
		{[]string{identity.KeyAuthPrefix, "/auth"}, "/auth"},
		{[]string{identity.KeyAuthPrefix, "/idp/v2"}, "/idp/v2"},
		{[]string{identity.KeyAuthPrefix, "auth"}, "/oauth2"},
		{[]string{identity.KeyAuthPrefix, "/a b"}, "/oauth2"},
		{[]string{identity.KeyAuthPrefix, "/"}, "/oauth2"},
		{[]string{identity.KeyAuthPrefix, "/x", identity.KeyAuthPrefix, "/y"}, "/oauth2"},
	} {
		ctx := metadata.AppendToOutgoingContext(context.Background(), tc.md...)
		d, err := e.pub.GetDiscovery(ctx, &authv1.GetDiscoveryRequest{})
		if err != nil {
			t.Fatal(err)
		}
		at := issuer + tc.want
		if d.GetIssuer() != issuer || d.GetAuthorizationEndpoint() != at+"/authorize" || d.GetTokenEndpoint() != at+"/token" ||
			d.GetJwksUri() != at+"/jwks" || d.GetUserinfoEndpoint() != at+"/userinfo" {
			t.Errorf("metadata %q: discovery = %v, want endpoints under %s", tc.md, d, at)
		}
	}
}
