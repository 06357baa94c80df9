package authn

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v2/jwa"

	"fris.dev/pkg/identity"
)

func TestBearerToken(t *testing.T) {
	for _, tc := range []struct{ header, want string }{
		{"", ""},
		{"Bearer abc.def.ghi", "abc.def.ghi"},
		{"bearer   abc  ", "abc"},
		{"Bearer null", ""},
		{"Bearer undefined", ""},
		{"Bearer", ""},
		{"Basic Zm9vOmJhcg==", ""},
		{"Samply tok", ""},
	} {
		r := httptest.NewRequest("GET", "/", nil)
		if tc.header != "" {
			r.Header.Set("Authorization", tc.header)
		}
		if got := BearerToken(r); got != tc.want {
			t.Errorf("%q: got %q, want %q", tc.header, got, tc.want)
		}
	}
}

type stub map[string]identity.Identity

func (s stub) Verify(_ context.Context, tok string) (identity.Identity, error) {
	if id, ok := s[tok]; ok {
		return id, nil
	}
	return identity.Identity{}, ErrMalformed
}

func TestRequired(t *testing.T) {
	v := stub{"good": {Subject: "1", Scopes: []string{"a"}}, "anon": {}}
	var got identity.Identity
	var fwd string
	calls := 0
	h := Required(v, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls++
		got, fwd = From(r.Context()), Forwarding(r.Context())
	}))
	for _, tc := range []struct {
		header, challenge string
		pass              bool
	}{
		{"", "Bearer", false},
		{"Bearer null", "Bearer", false},
		{"Bearer bad", `Bearer error="invalid_token"`, false},
		{"Bearer anon", `Bearer error="invalid_token"`, false},
		{"BEARER good", "", true},
	} {
		calls = 0
		r := httptest.NewRequest("GET", "/", nil)
		if tc.header != "" {
			r.Header.Set("Authorization", tc.header)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		if tc.pass {
			if calls != 1 || got.Subject != "1" || fwd != "Bearer good" {
				t.Fatalf("%q: calls %d, identity %+v, forwarded %q", tc.header, calls, got, fwd)
			}
			continue
		}
		if calls != 0 || rec.Code != http.StatusForbidden || rec.Header().Get("WWW-Authenticate") != tc.challenge {
			t.Fatalf("%q: calls %d, %d, challenge %q", tc.header, calls, rec.Code, rec.Header().Get("WWW-Authenticate"))
		}
	}
	if Forwarding(context.Background()) != "" {
		t.Fatal("forwarding without Required")
	}
}

func TestScope(t *testing.T) {
	v := stub{
		"researcher": {Subject: "1", Scopes: []string{"openid", identity.ScopeResearcher}},
		"plain":      {Subject: "2", Scopes: []string{"openid", "mdr:secret"}},
		"near":       {Subject: "3", Scopes: []string{"broker:researchers", "broker"}},
		"client":     {Subject: "client:x", Client: "x"},
	}
	for _, tc := range []struct {
		name, token, realm, challenge string
		pass                          bool
	}{
		{"granted", "researcher", "", "", true},
		{"other scopes", "plain", "", `Bearer error="insufficient_scope", scope="broker:researcher"`, false},
		{"similar names", "near", "", `Bearer error="insufficient_scope", scope="broker:researcher"`, false},
		{"no scopes", "client", "fris", `Bearer realm="fris", error="insufficient_scope", scope="broker:researcher"`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls := 0
			h := Required(v, Scope(identity.ScopeResearcher, tc.realm, http.HandlerFunc(func(http.ResponseWriter, *http.Request) { calls++ })))
			r := httptest.NewRequest("GET", "/", nil)
			r.Header.Set("Authorization", "Bearer "+tc.token)
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, r)
			if tc.pass {
				if calls != 1 || rec.Code != http.StatusOK {
					t.Fatalf("calls %d, status %d", calls, rec.Code)
				}
				return
			}
			if calls != 0 || rec.Code != http.StatusForbidden || rec.Header().Get("WWW-Authenticate") != tc.challenge {
				t.Fatalf("calls %d, %d, challenge %q", calls, rec.Code, rec.Header().Get("WWW-Authenticate"))
			}
			if body := rec.Body.String(); !strings.Contains(body, `"error":"insufficient_scope"`) || !strings.Contains(body, identity.ScopeResearcher) {
				t.Fatalf("body %s", body)
			}
		})
	}
}

// TestRequireWithRealm is the researcher API's refusal: 401 with the
// realm in both challenges, and the token not passed on.
func TestRequireWithRealm(t *testing.T) {
	v := stub{"good": {Subject: "1"}}
	var fwd string
	h := Require(v, Challenge{Status: http.StatusUnauthorized, Realm: "fris"}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fwd = Forwarding(r.Context())
	}))
	for _, tc := range []struct {
		header, challenge string
		code              int
	}{
		{"", `Bearer realm="fris"`, http.StatusUnauthorized},
		{"Bearer bad", `Bearer realm="fris", error="invalid_token"`, http.StatusUnauthorized},
		{"Bearer good", "", http.StatusOK},
	} {
		r := httptest.NewRequest("GET", "/", nil)
		if tc.header != "" {
			r.Header.Set("Authorization", tc.header)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		if rec.Code != tc.code || rec.Header().Get("WWW-Authenticate") != tc.challenge {
			t.Errorf("%q: %d %q, want %d %q", tc.header, rec.Code, rec.Header().Get("WWW-Authenticate"), tc.code, tc.challenge)
		}
	}
	if fwd != "" {
		t.Errorf("the token was passed on: %q", fwd)
	}
}

// TestSubjectKnown: Subject vouches for a bearer token at once or not at
// all: a valid token (new, then remembered) gives its subject; a forged
// one, one of a key the gateway has not loaded (no fetch of the key set
// for it), none or a verifier that cannot tell give "".
func TestSubjectKnown(t *testing.T) {
	k, other := newKey(t, "k1", jwa.RS256, 0), newKey(t, "k2", jwa.RS256, 1)
	jw := newJWKSServer(t, k.public(t))
	v := newVerifier(t, jw)
	waitFor(t, func() bool { return v.keys.Load() != nil })
	now := time.Now()
	good := sign(t, k, jwa.RS256, claims(now))
	unloaded := sign(t, other, jwa.RS256, claims(now))
	forged := good[:strings.LastIndexByte(good, '.')+1] + strings.Repeat("A", 342)
	jw.mu.Lock()
	fetches := jw.fetches
	jw.mu.Unlock()
	req := func(tok string) *http.Request {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		if tok != "" {
			r.Header.Set("Authorization", "Bearer "+tok)
		}
		return r
	}
	for _, tc := range []struct {
		name, tok, want string
		v               Verifier
	}{
		{"new", good, "42", v},
		{"remembered", good, "42", v},
		{"forged", forged, "", v},
		{"key not loaded", unloaded, "", v},
		{"none", "", "", v},
		{"a verifier that cannot tell", good, "", stub{good: {Subject: "42"}}},
	} {
		if got := Subject(req(tc.tok), tc.v); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
	jw.mu.Lock()
	defer jw.mu.Unlock()
	if jw.fetches != fetches {
		t.Errorf("%d fetches of the key set for Subject", jw.fetches-fetches)
	}
}
