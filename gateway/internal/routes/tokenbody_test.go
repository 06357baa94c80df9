package routes

import (
	"encoding/base64"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"fris.dev/gateway/internal/protobody"
	authv1 "fris.dev/proto/auth/v1"
)

// TestTokenBodyReachesGRPCGateway: each way a client sends a token request
// (the spec's JSON, an OAuth form, either with client_secret_basic) reaches
// grpc-gateway's decoder, as the gateway's marshaler reads it, as the same
// message; what is refused is refused before.
func TestTokenBodyReachesGRPCGateway(t *testing.T) {
	jsonpb := &runtime.JSONPb{UnmarshalOptions: protojson.UnmarshalOptions{DiscardUnknown: true}}
	var got *authv1.TokenRequest
	var bodyKind string
	h := jsonBody(tokenBody.rewrite(), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// What app's marshaler does (jsonMarshaler.NewDecoder).
		var dec runtime.Decoder = jsonpb.NewDecoder(r.Body)
		bodyKind = "json"
		if b := protobody.Decoder(r.Body); b != nil {
			dec, bodyKind = b, "message"
		}
		got = &authv1.TokenRequest{}
		if err := dec.Decode(got); err != nil && err != io.EOF {
			got = nil // grpc-gateway answers 400
		}
		if ct := r.Header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("Content-Type %q", ct)
		}
	}))
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte("c%3Aid:s+x"))
	form := "application/x-www-form-urlencoded"
	for _, c := range []struct {
		name, ctype, authz, body string
		status                   int
		kind                     string
		want                     *authv1.TokenRequest
	}{
		{"spec JSON", "application/json", "", `{"refresh_token":"a.b.c"}`, 200, "message", &authv1.TokenRequest{RefreshToken: "a.b.c"}},
		{"JSON, no type", "", "", ` {"code":"k","signature":"s","unknown":[1]}` + "\n", 200, "message", &authv1.TokenRequest{Code: "k", Signature: "s"}},
		// grpc-gateway's decoder reads the first JSON value and leaves the
		// rest: such bodies go to it as sent.
		{"JSON and more", "application/json", "", `{"code":"k"} {"code":"x"}`, 200, "json", &authv1.TokenRequest{Code: "k"}},
		{"JSON of another shape", "application/json", "", `{"code":1}`, 200, "json", nil},
		{"empty JSON", "application/json", "", ``, 200, "json", &authv1.TokenRequest{}},
		{"JSON and Basic", "application/json", basic, `{"refresh_token":"a.b.c","grantType":"refresh_token"}`, 200, "message",
			&authv1.TokenRequest{RefreshToken: "a.b.c", GrantType: "refresh_token", ClientId: "c:id", ClientSecret: "s x"}},
		{"form", form, "", "grant_type=refresh_token&refresh_token=a.b.c&client_id=cid&scope=openid", 200, "message",
			&authv1.TokenRequest{GrantType: "refresh_token", RefreshToken: "a.b.c", ClientId: "cid"}},
		{"form and Basic", form + "; charset=UTF-8", basic, "grant_type=refresh_token&refresh_token=a.b.c", 200, "message",
			&authv1.TokenRequest{GrantType: "refresh_token", RefreshToken: "a.b.c", ClientId: "c:id", ClientSecret: "s x"}},
		{"empty form", form, "", "", 200, "json", &authv1.TokenRequest{}},
		{"empty form and Basic", form, basic, "", 200, "message", &authv1.TokenRequest{ClientId: "c:id", ClientSecret: "s x"}},
		{"form, not UTF-8", form, "", "refresh_token=%ff", 400, "", nil},
		{"form, field twice", form, "", "code=a&code=b", 400, "", nil},
		{"bad Basic", form, "Basic !!", "code=a", 401, "", nil},
		{"Basic and other client", form, basic, "code=a&client_id=other", 400, "", nil},
		{"JSON not a request, Basic", "application/json", basic, `[1]`, 400, "", nil},
		{"XML", "application/xml", "", `<a/>`, 415, "", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, bodyKind = nil, ""
			r := httptest.NewRequest(http.MethodPost, "/oauth2/token", strings.NewReader(c.body))
			if c.ctype != "" {
				r.Header.Set("Content-Type", c.ctype)
			}
			if c.authz != "" {
				r.Header.Set("Authorization", c.authz)
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code != c.status {
				t.Fatalf("status %d (%s), want %d", w.Code, w.Body, c.status)
			}
			if c.want == nil {
				if got != nil {
					t.Fatalf("grpc-gateway read %v from a body it must refuse", got)
				}
				return
			}
			if bodyKind != c.kind {
				t.Errorf("body reached grpc-gateway as %s, want %s", bodyKind, c.kind)
			}
			if !proto.Equal(got, c.want) {
				t.Fatalf("grpc-gateway read %v, want %v", got, c.want)
			}
		})
	}
}

// FuzzTokenBodyAsGRPCGateway: a JSON body the routes read themselves
// becomes the message grpc-gateway's own decoder reads from the same
// bytes; a body they leave goes on unchanged.
func FuzzTokenBodyAsGRPCGateway(f *testing.F) {
	for _, s := range []string{`{"refresh_token":"a.b.c"}`, `{"grantType":"refresh_token","refresh_token":"x"} `, `{"code":"k"} {"code":"x"}`, `{"code":1}`, `[]`, ``, `{"code":"\ud800"}`, `{"code":"a","code":"b"}`, "{\"code\":\"\xff\"}"} {
		f.Add(s)
	}
	jsonpb := &runtime.JSONPb{UnmarshalOptions: protojson.UnmarshalOptions{DiscardUnknown: true}}
	f.Fuzz(func(t *testing.T, body string) {
		var seen io.Reader
		h := jsonBody(tokenBody.rewrite(), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { seen = r.Body }))
		r := httptest.NewRequest(http.MethodPost, "/oauth2/token", strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		h.ServeHTTP(httptest.NewRecorder(), r)
		if seen == nil {
			t.Fatalf("JSON body %q refused before grpc-gateway", body)
		}
		b := protobody.Decoder(seen)
		if b == nil {
			rest, _ := io.ReadAll(seen)
			if string(rest) != body {
				t.Fatalf("body %q went on as %q", body, rest)
			}
			return
		}
		var got, want authv1.TokenRequest
		if err := b.Decode(&got); err != nil {
			t.Fatal(err)
		}
		if err := jsonpb.NewDecoder(strings.NewReader(body)).Decode(&want); err != nil && err != io.EOF {
			t.Fatalf("body %q: read as %v here, refused by grpc-gateway: %v", body, &got, err)
		}
		if !proto.Equal(&got, &want) {
			t.Fatalf("body %q: read as %v here, as %v by grpc-gateway", body, &got, &want)
		}
	})
}
