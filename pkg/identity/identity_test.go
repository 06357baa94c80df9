package identity

import (
	"context"
	"reflect"
	"strings"
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

func TestScopeToken(t *testing.T) {
	for s, want := range map[string]bool{
		"broker:researcher": true, "FRIS:OPERATOR": true, "mdr:x": true, "!#[]^~": true,
		"": false, "a b": false, `a"b`: false, `a\b`: false, "x\u200by": false, "\x01": false, "\x7f": false, "é": false, "a\tb": false,
	} {
		if got := ScopeToken(s); got != want {
			t.Errorf("ScopeToken(%q) = %v, want %v", s, got, want)
		}
	}
}

// TestPairsDropMalformedScopes: a scope that gRPC metadata cannot carry
// (stored before scopes were checked) is left out, not the whole call.
func TestPairsDropMalformedScopes(t *testing.T) {
	got := Identity{Subject: "1", Scopes: []string{"x\u200by", ScopeResearcher, "\x01"}}.Pairs()
	want := []string{KeySubject, "1", KeyScope, ScopeResearcher}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("Pairs = %q, want %q", got, want)
	}
}
