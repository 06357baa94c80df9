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
