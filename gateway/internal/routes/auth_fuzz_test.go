package routes

import (
	"encoding/base64"
	"errors"
	"net/url"
	"strings"
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

func TestBasicClient(t *testing.T) {
	enc := func(s string) string { return "Basic " + base64.StdEncoding.EncodeToString([]byte(s)) }
	for _, tc := range []struct {
		name, authz, body string
		id, secret        string
		wantErr           bool
	}{
		{"no header", "", `{"code":"c"}`, "", "", false},
		{"bearer ignored", "Bearer x", `{"code":"c"}`, "", "", false},
		{"plain", enc("cid:sec"), `{"code":"c"}`, "cid", "sec", false},
		{"scheme case", "basic " + base64.StdEncoding.EncodeToString([]byte("cid:sec")), ``, "cid", "sec", false},
		// RFC 6749 2.3.1: both parts are form-urlencoded; the secret may hold ':'.
		{"encoded", enc("c+id%3A1:s%2B%2F%3D:x"), ``, "c id:1", "s+/=:x", false},
		{"same in body", enc("cid:sec"), `{"client_id":"cid","client_secret":"sec"}`, "cid", "sec", false},
		{"other id in body", enc("cid:sec"), `{"client_id":"x"}`, "", "", true},
		{"not base64", "Basic !!", ``, "", "", true},
		{"no colon", enc("cid"), ``, "", "", true},
		{"bad escape", enc("cid:%zz"), ``, "", "", true},
		{"body not a token request", enc("cid:sec"), `[1]`, "", "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := basicClient(tc.authz, []byte(tc.body), &authv1.TokenRequest{})
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v", err)
			}
			if err != nil {
				return
			}
			var got authv1.TokenRequest
			if len(b) > 0 {
				if err := protojson.Unmarshal(b, &got); err != nil {
					t.Fatal(err)
				}
			}
			if got.GetClientId() != tc.id || got.GetClientSecret() != tc.secret {
				t.Fatalf("got %v", &got)
			}
		})
	}
}

// TestBasicClientNotUTF8: credentials that are not UTF-8, raw or
// percent-encoded, cannot become proto strings; they are malformed client
// credentials (401 invalid_client), not a 400 with protojson's words.
func TestBasicClientNotUTF8(t *testing.T) {
	for _, cred := range []string{"c\xff:s", "c:\xfe", "%FF:s", "c:%FE"} {
		_, err := basicClient("Basic "+base64.StdEncoding.EncodeToString([]byte(cred)), nil, &authv1.TokenRequest{})
		var ce clientAuthError
		if !errors.As(err, &ce) {
			t.Errorf("%q: err = %v, want a clientAuthError", cred, err)
		}
	}
}

// FuzzBasicClient: any Authorization header and body is refused or yields a
// token request carrying exactly the header's credentials.
func FuzzBasicClient(f *testing.F) {
	f.Add("Basic Y2lkOnNlYw==", `{"code":"c"}`)
	f.Add("Basic %%%", ``)
	f.Add("basic OnNlYw==", `{"client_id":"a"}`)
	f.Fuzz(func(t *testing.T, authz, body string) {
		b, err := basicClient(authz, []byte(body), &authv1.TokenRequest{})
		if err != nil {
			return
		}
		scheme, _, ok := strings.Cut(strings.TrimSpace(authz), " ")
		if !ok || !strings.EqualFold(scheme, "Basic") {
			if string(b) != body {
				t.Fatal("a request without Basic credentials was changed")
			}
			return
		}
		var got authv1.TokenRequest
		if err := protojson.Unmarshal(b, &got); err != nil || got.GetClientId() == "" {
			t.Fatalf("Basic %q with %q became %s (%v)", authz, body, b, err)
		}
	})
}
