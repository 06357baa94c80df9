package protobody

import (
	"bytes"
	"io"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	authv1 "fris.dev/proto/auth/v1"
)

func TestDecodeCopiesTheMessage(t *testing.T) {
	in := &authv1.TokenRequest{GrantType: "refresh_token", RefreshToken: "a.b.c", ClientId: "cid", ClientSecret: "s"}
	b := New(in)
	if Decoder(b) != b || Decoder(bytes.NewReader(nil)) != nil {
		t.Fatal("Decoder does not tell a Body from other readers")
	}
	out := &authv1.TokenRequest{Code: "left over"}
	if err := b.Decode(out); err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(in, out) {
		t.Fatalf("decoded %v, want %v", out, in)
	}
	out.ClientId = "changed"
	if in.GetClientId() != "cid" {
		t.Fatal("the decoded message shares fields with the body's")
	}
	// grpc-gateway drains the body after decoding: nothing is left.
	if rest, err := io.ReadAll(b); err != nil || len(rest) != 0 {
		t.Fatalf("after Decode the body reads %q, %v", rest, err)
	}
}

func TestReadGivesJSON(t *testing.T) {
	in := &authv1.RevokeRequest{Token: "t.o.k", TokenTypeHint: "refresh_token", ClientId: "cid"}
	raw, err := io.ReadAll(New(in))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(raw, []byte(`"token_type_hint"`)) {
		t.Fatalf("not proto field names: %s", raw)
	}
	var back authv1.RevokeRequest
	if err := protojson.Unmarshal(raw, &back); err != nil || !proto.Equal(&back, in) {
		t.Fatalf("JSON %s reads back as %v (%v)", raw, &back, err)
	}
}

// A route whose message is another type reads the fields they share by
// name, as it would from the JSON body.
func TestDecodeOtherMessage(t *testing.T) {
	in := &authv1.RevokeRequest{Token: "t.o.k", ClientId: "cid", ClientSecret: "s"}
	var out authv1.IntrospectRequest
	if err := New(in).Decode(&out); err != nil {
		t.Fatal(err)
	}
	if out.GetToken() != "t.o.k" || out.GetClientId() != "cid" || out.GetClientSecret() != "s" {
		t.Fatalf("decoded %v", &out)
	}
	var notProto struct{ Token string }
	if err := New(in).Decode(&notProto); err == nil {
		t.Fatal("decoded into a struct that is no message")
	}
}
