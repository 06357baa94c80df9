package routes

import (
	"encoding/base64"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"

	authv1 "fris.dev/proto/auth/v1"
)

// TestFormBodiesOfRevokeAndIntrospect: RFC 7009 and RFC 7662 requests
// come as forms with the client in HTTP Basic, as the token endpoint's;
// the token survives the move of the credentials into the body.
func TestFormBodiesOfRevokeAndIntrospect(t *testing.T) {
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte("cid:sec"))
	for _, kind := range []bodyKind{revokeBody, introspectBody} {
		msg := kind.message()
		if err := formToMessage("token=t.o.k&token_type_hint=refresh_token", msg); err != nil {
			t.Fatal(err)
		}
		id, secret, _, err := basicCredentials(basic)
		if err != nil {
			t.Fatal(err)
		}
		if err := basicClient(id, secret, msg); err != nil {
			t.Fatal(err)
		}
		b, err := protojson.Marshal(msg)
		if err != nil {
			t.Fatal(err)
		}
		var got authv1.RevokeRequest // the same fields as IntrospectRequest
		if err := protojson.Unmarshal(b, &got); err != nil {
			t.Fatal(err)
		}
		if got.GetToken() != "t.o.k" || got.GetTokenTypeHint() != "refresh_token" || got.GetClientId() != "cid" || got.GetClientSecret() != "sec" {
			t.Fatalf("kind %d: %v", kind, &got)
		}
	}
}
