package identity

import (
	"context"
	"reflect"
	"testing"

	"google.golang.org/grpc/metadata"
)

func TestRoundTripThroughMetadata(t *testing.T) {
	in := Identity{Subject: "42", Client: "mdr-ui", Scopes: []string{"openid", "mdr:secret"}}
	ctx := metadata.NewIncomingContext(context.Background(), metadata.Pairs(in.Pairs()...))
	got := FromIncoming(ctx)
	if !reflect.DeepEqual(got, in) || !got.HasScope("mdr:secret") || got.HasScope("mdr:other") || got.Anonymous() {
		t.Fatalf("got %+v", got)
	}
	if Anonymous := (Identity{}); Anonymous.Pairs() != nil {
		t.Fatal("anonymous identity has metadata")
	}
	// Scopes without a subject are not an identity.
	ctx = metadata.NewIncomingContext(context.Background(), metadata.Pairs(KeyScope, "mdr:*"))
	if id := FromIncoming(ctx); !id.Anonymous() || id.HasScope("mdr:*") {
		t.Fatalf("scope without subject = %+v", id)
	}
	if !FromIncoming(context.Background()).Anonymous() {
		t.Fatal("no metadata should be anonymous")
	}
}

func TestIsRoleScope(t *testing.T) {
	for _, tc := range []struct {
		scope string
		want  bool
	}{
		{ScopeResearcher, true},
		{ScopeUserSearch, true},
		{ScopeOperator, true},
		{ScopeUserAdmin, true},
		{"openid", false},
		{"mdr:secret", false},
		{"broker:researcher ", false},
		{"", false},
	} {
		if got := IsRoleScope(tc.scope); got != tc.want {
			t.Errorf("IsRoleScope(%q) = %v, want %v", tc.scope, got, tc.want)
		}
	}
}

// TestPrivileged: the roles that administer others, and only they.
func TestPrivileged(t *testing.T) {
	for s, want := range map[string]bool{ScopeOperator: true, ScopeUserAdmin: true, ScopeResearcher: false, ScopeUserSearch: false, "fris:operator ": false, "mdr:x": false} {
		if Privileged(s) != want {
			t.Errorf("Privileged(%q) = %v", s, !want)
		}
	}
}
