package routes

import (
	"net/url"
	"testing"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protojson"

	authv1 "fris.dev/proto/auth/v1"
)

func TestFormToJSON(t *testing.T) {
	b, err := formToJSON("code=c%20d&client_id=x&clientSecret=s&unknown=1", &authv1.TokenRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var got authv1.TokenRequest
	if err := protojson.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if got.GetCode() != "c d" || got.GetClientId() != "x" || got.GetClientSecret() != "s" {
		t.Fatalf("got %v", &got)
	}
	for _, bad := range []string{"code=a&code=b", "code=%zz"} {
		if _, err := formToJSON(bad, &authv1.TokenRequest{}); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// FuzzFormToJSON: any form body either is refused or becomes JSON that the
// token request message reads back with the same field values.
func FuzzFormToJSON(f *testing.F) {
	for _, s := range []string{"", "code=abc&client_id=x&client_secret=y", "refresh_token=a.b.c", "code=%00%ff", "a=1&a=2", "client_id=%"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		b, err := formToJSON(body, &authv1.TokenRequest{})
		if err != nil {
			return
		}
		var got authv1.TokenRequest
		if err := protojson.Unmarshal(b, &got); err != nil {
			vals, _ := url.ParseQuery(body)
			for _, vs := range vals {
				for _, v := range vs {
					if !utf8.ValidString(v) {
						return // protojson refuses invalid UTF-8; the gateway answers 400
					}
				}
			}
			t.Fatalf("form %q became JSON %s that does not read back: %v", body, b, err)
		}
	})
}
