package service

import (
	"context"
	"errors"
	"testing"

	"google.golang.org/grpc/metadata"

	"fris.dev/pkg/identity"
	"fris.dev/pkg/rpcerr"
)

func TestResearcherNeedsScope(t *testing.T) {
	for _, tc := range []struct {
		name string
		id   identity.Identity
		want error
	}{
		{"anonymous", identity.Identity{}, rpcerr.ErrUnauthenticated},
		{"no scope", identity.Identity{Subject: "7", Scopes: []string{"openid"}}, rpcerr.ErrPermission},
		{"other scope", identity.Identity{Subject: "7", Scopes: []string{identity.ScopeUserSearch}}, rpcerr.ErrPermission},
		{"researcher", identity.Identity{Subject: "7", Scopes: []string{"openid", identity.ScopeResearcher}}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := metadata.NewIncomingContext(context.Background(), metadata.Pairs(tc.id.Pairs()...))
			sub, err := Researcher{}.subject(ctx)
			if !errors.Is(err, tc.want) || (tc.want == nil && sub != "7") {
				t.Fatalf("subject = %q, %v; want %v", sub, err, tc.want)
			}
		})
	}
}
