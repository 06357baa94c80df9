package routes

import (
	"encoding/base64"
	"errors"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	authv1 "fris.dev/proto/auth/v1"
)

func TestFormToMessage(t *testing.T) {
	var got authv1.TokenRequest
	if err := formToMessage("code=c%20d&client_id=x&clientSecret=s&unknown=1", &got); err != nil {
		t.Fatal(err)
	}
	if got.GetCode() != "c d" || got.GetClientId() != "x" || got.GetClientSecret() != "s" {
		t.Fatalf("got %v", &got)
	}
	for _, bad := range []string{"code=a&code=b", "code=%zz", "client_id=%ff", "code=a&clientId=%C3"} {
		if err := formToMessage(bad, &authv1.TokenRequest{}); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// FuzzFormToMessage: any form body is either refused or fills the token
// request with exactly the form's values, each valid UTF-8 (a proto
// string the gRPC client can send), and the message reads back from its
// JSON unchanged.
func FuzzFormToMessage(f *testing.F) {
	for _, s := range []string{"", "code=abc&client_id=x&client_secret=y", "refresh_token=a.b.c", "code=%00%ff", "a=1&a=2", "client_id=%", "clientId=%C3%A9"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		var got authv1.TokenRequest
		if err := formToMessage(body, &got); err != nil {
			return
		}
		vals, err := url.ParseQuery(body)
		if err != nil {
			t.Fatalf("form %q accepted, but it does not parse: %v", body, err)
		}
		pick := func(proto, json string) string {
			if v, ok := vals[proto]; ok {
				return v[0]
			}
			if v, ok := vals[json]; ok {
				return v[0]
			}
			return ""
		}
		for _, c := range []struct{ got, want string }{
			{got.GetCode(), pick("code", "code")},
			{got.GetClientId(), pick("client_id", "clientId")},
			{got.GetRefreshToken(), pick("refresh_token", "refreshToken")},
		} {
			if c.got != c.want || !utf8.ValidString(c.got) {
				t.Fatalf("form %q: field %q, want %q", body, c.got, c.want)
			}
		}
		b, err := protojson.Marshal(&got)
		if err != nil {
			t.Fatalf("form %q became a message protojson cannot write: %v", body, err)
		}
		var back authv1.TokenRequest
		if err := protojson.Unmarshal(b, &back); err != nil || !proto.Equal(&back, &got) {
			t.Fatalf("form %q: %v does not read back (%v)", body, &got, err)
		}
	})
}

func TestBasicClient(t *testing.T) {
	enc := func(s string) string { return "Basic " + base64.StdEncoding.EncodeToString([]byte(s)) }
	for _, tc := range []struct {
		name, authz, body string
		id, secret        string
		basic, wantErr    bool
	}{
		{"no header", "", `{"code":"c"}`, "", "", false, false},
		{"bearer ignored", "Bearer x", `{"code":"c"}`, "", "", false, false},
		{"plain", enc("cid:sec"), `{"code":"c"}`, "cid", "sec", true, false},
		{"scheme case", "basic " + base64.StdEncoding.EncodeToString([]byte("cid:sec")), ``, "cid", "sec", true, false},
		// RFC 6749 2.3.1: both parts are form-urlencoded; the secret may hold ':'.
		{"encoded", enc("c+id%3A1:s%2B%2F%3D:x"), ``, "c id:1", "s+/=:x", true, false},
		{"same in body", enc("cid:sec"), `{"client_id":"cid","client_secret":"sec"}`, "cid", "sec", true, false},
		{"other id in body", enc("cid:sec"), `{"client_id":"x"}`, "", "", true, true},
		{"not base64", "Basic !!", ``, "", "", true, true},
		{"no colon", enc("cid"), ``, "", "", true, true},
		{"bad escape", enc("cid:%zz"), ``, "", "", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var msg authv1.TokenRequest
			if tc.body != "" {
				if err := protojson.Unmarshal([]byte(tc.body), &msg); err != nil {
					t.Fatal(err)
				}
			}
			id, secret, basic, err := basicCredentials(tc.authz)
			if basic != tc.basic {
				t.Fatalf("basic = %v", basic)
			}
			if err == nil && basic {
				err = basicClient(id, secret, &msg)
			}
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v", err)
			}
			if err != nil || !basic {
				return
			}
			if msg.GetClientId() != tc.id || msg.GetClientSecret() != tc.secret {
				t.Fatalf("got %v", &msg)
			}
		})
	}
}

// TestBasicClientNotUTF8: credentials that are not UTF-8, raw or
// percent-encoded, cannot become proto strings; they are malformed client
// credentials (401 invalid_client), not a 400 with protojson's words.
func TestBasicClientNotUTF8(t *testing.T) {
	for _, cred := range []string{"c\xff:s", "c:\xfe", "%FF:s", "c:%FE"} {
		_, _, _, err := basicCredentials("Basic " + base64.StdEncoding.EncodeToString([]byte(cred)))
		var ce clientAuthError
		if !errors.As(err, &ce) {
			t.Errorf("%q: err = %v, want a clientAuthError", cred, err)
		}
	}
}

// FuzzBasicClient: any Authorization header is refused, not Basic, or
// yields, with any JSON body that is a token request, a token request
// carrying exactly the header's credentials (valid UTF-8), or a refusal
// because the body names others.
func FuzzBasicClient(f *testing.F) {
	f.Add("Basic Y2lkOnNlYw==", `{"code":"c"}`)
	f.Add("Basic %%%", ``)
	f.Add("basic OnNlYw==", `{"client_id":"a"}`)
	f.Fuzz(func(t *testing.T, authz, body string) {
		id, secret, basic, err := basicCredentials(authz)
		scheme, _, ok := strings.Cut(strings.TrimSpace(authz), " ")
		isBasic := ok && strings.EqualFold(scheme, "Basic")
		if basic != isBasic {
			t.Fatalf("%q: basic = %v", authz, basic)
		}
		if err != nil || !basic {
			return
		}
		var msg authv1.TokenRequest
		if protojson.Unmarshal([]byte(body), &msg) != nil {
			msg.Reset()
		}
		before := proto.Clone(&msg).(*authv1.TokenRequest)
		if err := basicClient(id, secret, &msg); err != nil {
			if (before.GetClientId() == "" || before.GetClientId() == id) && (before.GetClientSecret() == "" || before.GetClientSecret() == secret) {
				t.Fatalf("Basic %q with %v refused: %v", authz, before, err)
			}
			return
		}
		if msg.GetClientId() == "" || msg.GetClientId() != id || msg.GetClientSecret() != secret || !utf8.ValidString(id+secret) {
			t.Fatalf("Basic %q became %v", authz, &msg)
		}
		if _, err := protojson.Marshal(&msg); err != nil {
			t.Fatalf("Basic %q became a message protojson cannot write: %v", authz, err)
		}
	})
}
