package authn

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v2/jwa"
	"google.golang.org/protobuf/encoding/protojson"

	"fris.dev/pkg/identity"
	authv1 "fris.dev/proto/auth/v1"
)

// revServer plays the auth service's /revocations: a log of entries, each
// with its version, answered since the version asked for.
type revServer struct {
	*httptest.Server
	mu   sync.Mutex
	log  []*authv1.Revocation
	base uint32 // versions start after it (a reset store: lower it)
	asks []string
}

func newRevServer(t testing.TB) *revServer {
	s := &revServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		defer s.mu.Unlock()
		since := r.URL.Query().Get("since")
		s.asks = append(s.asks, since)
		var n uint32
		for _, c := range since {
			n = n*10 + uint32(c-'0')
		}
		top := s.base + uint32(len(s.log))
		list := &authv1.RevocationList{Version: top, Full: n == 0 || n > top}
		for i, e := range s.log {
			if list.Full || s.base+uint32(i)+1 > n {
				list.Revocations = append(list.Revocations, e)
			}
		}
		b, _ := protojson.Marshal(list)
		_, _ = w.Write(b)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *revServer) add(kind, id string, nbf int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.log = append(s.log, &authv1.Revocation{Kind: kind, Id: id, NotBefore: uint32(nbf), Until: uint32(time.Now().Add(time.Hour).Unix())})
}

// TestRevokedTokenRefusedFromMemory: a token verified and remembered is
// refused once the revocation list names it, within the poll interval,
// for each kind of revocation; other tokens are untouched.
func TestRevokedTokenRefusedFromMemory(t *testing.T) {
	k := newKey(t, "k1", jwa.RS256, 0)
	now := time.Now()
	base := with(claims(now), "iat", now.Unix()-10, "sid", "chain-1", "jti", "jti-1", "aud", "client-1")
	for _, tc := range []struct {
		name      string
		kind, id  string
		nbf       int64
		untouched map[string]any // claims of a token this revocation leaves alone
	}{
		{"user", revokeUser, "42", now.Unix() - 5, with(base, "iat", now.Unix()-5)},
		{"client", revokeClient, "client-1", now.Unix() - 5, with(base, "aud", "client-2")},
		{"chain", revokeChain, "chain-1", 0, with(base, "sid", "chain-2")},
		{"token", revokeToken, "jti-1", 0, with(base, "jti", "jti-2")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rs := newRevServer(t)
			poll := 50 * time.Millisecond
			v := newVerifier(t, newJWKSServer(t, k.public(t)), func(c *JWTConfig) { c.RevocationsURL = rs.URL; c.RevocationPoll = poll })
			ctx := context.Background()
			tok, other := sign(t, k, jwa.RS256, base), sign(t, k, jwa.RS256, tc.untouched)
			for _, s := range []string{tok, other} {
				if _, err := v.Verify(ctx, s); err != nil {
					t.Fatal(err)
				}
			}
			rs.add(tc.kind, tc.id, tc.nbf)
			start := time.Now()
			for {
				_, err := v.Verify(ctx, tok)
				if errors.Is(err, ErrRevoked) {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				// A hang guard: without the poll the token stays good.
				if time.Since(start) > 30*time.Second {
					t.Fatalf("still accepted %v after the revocation", time.Since(start))
				}
				time.Sleep(5 * time.Millisecond)
			}
			if v.verified.Len() != 2 {
				t.Fatalf("%d tokens remembered: the revoked one should stay, refused", v.verified.Len())
			}
			if _, err := v.Verify(ctx, other); err != nil {
				t.Fatalf("a token the revocation does not name: %v", err)
			}
		})
	}
}

func TestRevocationPollsIncrementallyAndRestarts(t *testing.T) {
	k := newKey(t, "k1", jwa.RS256, 0)
	rs := newRevServer(t)
	rs.add(revokeToken, "old", 0)
	v := newVerifier(t, newJWKSServer(t, k.public(t)), func(c *JWTConfig) { c.RevocationsURL = rs.URL; c.RevocationPoll = time.Hour })
	ctx := context.Background()
	// run's first poll happened at start; drive the rest by hand.
	waitFor(t, func() bool { return v.rev.state.Load() != nil })
	if err := v.rev.poll(ctx); err != nil {
		t.Fatal(err)
	}
	rs.add(revokeChain, "c", 0)
	if err := v.rev.poll(ctx); err != nil {
		t.Fatal(err)
	}
	rs.mu.Lock()
	asks := append([]string(nil), rs.asks...)
	// The auth store is restored from a backup: versions go back.
	rs.base, rs.log = 0, rs.log[:0]
	rs.mu.Unlock()
	if want := []string{"0", "1", "1"}; len(asks) != 3 || asks[0] != want[0] || asks[1] != want[1] || asks[2] != want[2] {
		t.Fatalf("asked since %v, want %v", asks, want)
	}
	if !v.rev.covers(&tokenRef{sid: "c"}) || !v.rev.covers(&tokenRef{jti: "old"}) {
		t.Fatal("entries missing")
	}
	rs.add(revokeUser, "7", time.Now().Unix())
	// since=2 is beyond the new log: the server answers in full.
	if err := v.rev.poll(ctx); err != nil {
		t.Fatal(err)
	}
	if v.rev.covers(&tokenRef{sid: "c"}) || !v.rev.covers(&tokenRef{sub: "7"}) {
		t.Fatal("a full list did not replace the state")
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("condition never held")
		}
	}
}

func TestRevStateApply(t *testing.T) {
	now := time.Now().Unix()
	until := uint32(now + 60)
	entry := func(kind, id string, nbf int64, until uint32) *authv1.Revocation {
		return &authv1.Revocation{Kind: kind, Id: id, NotBefore: uint32(nbf), Until: until}
	}
	start := (*revState)(nil).apply(&authv1.RevocationList{Version: 3, Full: true, Revocations: []*authv1.Revocation{
		entry(revokeUser, "1", now, until),
		entry(revokeChain, "c1", 0, until),
		entry(revokeToken, "expired", 0, uint32(now-1)),
		entry("group", "g", 0, until), // unknown kind
		entry(revokeToken, "", 0, until),
	}}, now)
	for _, tc := range []struct {
		name  string
		state *revState
		ref   tokenRef
		want  bool
	}{
		{"user, issued before", start, tokenRef{sub: "1", iat: now - 1}, true},
		{"user, issued at the revocation", start, tokenRef{sub: "1", iat: now}, false},
		{"another user", start, tokenRef{sub: "2", iat: now - 1}, false},
		{"chain", start, tokenRef{sub: "2", sid: "c1", iat: now}, true},
		{"expired entry dropped", start, tokenRef{jti: "expired"}, false},
		{"empty id never matches", start, tokenRef{}, false},
		{"incremental keeps the old", start.apply(&authv1.RevocationList{Version: 4, Revocations: []*authv1.Revocation{entry(revokeClient, "cl", now, until)}}, now),
			tokenRef{sub: "1", iat: now - 1}, true},
		{"incremental adds the new", start.apply(&authv1.RevocationList{Version: 4, Revocations: []*authv1.Revocation{entry(revokeClient, "cl", now, until)}}, now),
			tokenRef{sub: "9", client: "cl", iat: now - 1}, true},
		{"a later nbf wins", start.apply(&authv1.RevocationList{Version: 4, Revocations: []*authv1.Revocation{entry(revokeUser, "1", now+5, until)}}, now),
			tokenRef{sub: "1", iat: now + 1}, true},
		{"an earlier nbf does not undo", start.apply(&authv1.RevocationList{Version: 4, Revocations: []*authv1.Revocation{entry(revokeUser, "1", now-100, until)}}, now),
			tokenRef{sub: "1", iat: now - 1}, true},
		{"full replaces", start.apply(&authv1.RevocationList{Version: 1, Full: true}, now), tokenRef{sub: "1", iat: now - 1}, false},
		{"entries expire at a later apply", start.apply(&authv1.RevocationList{Version: 4}, now+61), tokenRef{sid: "c1"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.state.covers(&tc.ref); got != tc.want {
				t.Fatalf("covers(%+v) = %t, want %t", tc.ref, got, tc.want)
			}
		})
	}
	if start.users["1"].nbf != now || len(start.tokens) != 0 {
		t.Fatalf("the state changed under an apply: %+v", start)
	}
}

// FuzzRevocationList: whatever the revocation endpoint answers, parsing
// and applying it never panics, and an applied list's entries revoke.
func FuzzRevocationList(f *testing.F) {
	f.Add([]byte(`{"version":3,"full":true,"revocations":[{"kind":"user","id":"1","notBefore":100,"until":4000000000}]}`))
	f.Add([]byte(`{"version":1,"revocations":[{"kind":"chain","id":"c","until":4000000000},{"kind":"token","id":"j","until":1}]}`))
	f.Add([]byte(`{"version":"x"}`))
	f.Add([]byte(`{"revocations":[{"kind":"client","id":"","not_before":-1}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		list, err := parseRevocationList(b)
		if err != nil {
			return
		}
		now := time.Now().Unix()
		s := (*revState)(nil).apply(list, now)
		s = s.apply(list, now)
		for _, r := range list.GetRevocations() {
			ref := tokenRef{sub: r.GetId(), client: r.GetId(), sid: r.GetId(), jti: r.GetId(), iat: int64(r.GetNotBefore()) - 1}
			known := r.GetKind() == revokeUser || r.GetKind() == revokeClient || r.GetKind() == revokeChain || r.GetKind() == revokeToken
			live := r.GetId() != "" && len(r.GetId()) <= maxRevokedID && int64(r.GetUntil()) > now
			nbfMatters := r.GetKind() == revokeUser || r.GetKind() == revokeClient
			if known && live && (!nbfMatters || r.GetNotBefore() > 0) && !s.covers(&ref) {
				t.Fatalf("entry %v applied but not in force", r)
			}
		}
	})
}

// BenchmarkVerifyRemembered is the bearer hot path: a remembered token,
// with and without a revocation list in force.
func BenchmarkVerifyRemembered(b *testing.B) {
	k := newKey(b, "k1", jwa.RS256, 0)
	jw := newJWKSServer(b, k.public(b))
	now := time.Now()
	tok := sign(b, k, jwa.RS256, with(claims(now), "sid", "chain-1"))
	for _, withList := range []bool{false, true} {
		name := map[bool]string{false: "no-list", true: "list"}[withList]
		b.Run(name, func(b *testing.B) {
			var mod []func(*JWTConfig)
			if withList {
				rs := newRevServer(b)
				for i := range 1000 {
					rs.add(revokeToken, "j"+string(rune('a'+i%26))+time.Duration(i).String(), 0)
				}
				rs.add(revokeUser, "7", now.Unix())
				mod = append(mod, func(c *JWTConfig) { c.RevocationsURL = rs.URL; c.RevocationPoll = time.Hour })
			}
			v := newVerifier(b, jw, mod...)
			ctx := context.Background()
			if _, err := v.Verify(ctx, tok); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := v.Verify(ctx, tok); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestRevocationFailClosed: with RevocationFailClosed and a 1 minute bound,
// on a fake clock: tokens pass while the list is fresh and while polls
// have failed for up to the bound; past it every token, remembered or
// new, is ErrRevocationStale; a successful poll accepts them again.
// Without the choice (fail open) the same outage refuses nothing. A
// gateway that never fetched the list counts the bound from its start.
func TestRevocationFailClosed(t *testing.T) {
	k := newKey(t, "k1", jwa.RS256, 0)
	jw := newJWKSServer(t, k.public(t))
	start := time.Now()
	tok := sign(t, k, jwa.RS256, claims(start))
	other := sign(t, k, jwa.RS256, with(claims(start), "jti", "j2"))
	for _, tc := range []struct {
		name       string
		failClosed bool
		neverUp    bool
	}{
		{"fail closed", true, false},
		{"fail open (the default)", false, false},
		{"fail closed, never fetched", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var clock atomic.Int64
			clock.Store(start.UnixNano())
			advance := func(d time.Duration) { clock.Add(int64(d)) }
			var down atomic.Bool
			down.Store(tc.neverUp)
			rs := newRevServer(t)
			failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if down.Load() {
					http.Error(w, "down", http.StatusServiceUnavailable)
					return
				}
				rs.Config.Handler.ServeHTTP(w, r)
			}))
			t.Cleanup(failing.Close)
			v := newVerifier(t, jw, func(c *JWTConfig) {
				c.RevocationsURL, c.RevocationPoll = failing.URL, time.Hour // polls by hand below
				c.RevocationFailClosed, c.RevocationMaxStale = tc.failClosed, time.Minute
				c.Now = func() time.Time { return time.Unix(0, clock.Load()) }
			})
			ctx := context.Background()
			verify := func(when string, tok string, want error) {
				t.Helper()
				if _, err := v.Verify(ctx, tok); !errors.Is(err, want) {
					t.Fatalf("%s: %v, want %v", when, err, want)
				}
			}
			if !tc.neverUp {
				// run's first poll, then one by hand: fresh.
				waitFor(t, func() bool { return v.rev.state.Load() != nil })
				if err := v.rev.poll(ctx); err != nil {
					t.Fatal(err)
				}
			}
			verify("fresh", tok, nil)
			down.Store(true)
			advance(30 * time.Second)
			if err := v.rev.poll(ctx); err == nil {
				t.Fatal("a poll of a failing list succeeded")
			}
			verify("30 s without a list", tok, nil)
			advance(30 * time.Second)
			verify("exactly the bound", tok, nil)
			advance(time.Second)
			var want error
			if tc.failClosed {
				want = ErrRevocationStale
			}
			verify("past the bound, remembered", tok, want)
			verify("past the bound, new", other, want)
			verify("past the bound, malformed", "x", ErrMalformed)
			down.Store(false)
			if err := v.rev.poll(ctx); err != nil {
				t.Fatal(err)
			}
			verify("fetched again", tok, nil)
			verify("fetched again, new", other, nil)
		})
	}
}

// TestStaleRefusal: a token the verifier cannot check now
// (ErrRevocationStale) is 503 with Retry-After on a route that requires
// one and on one that takes it optionally (not served as anonymous); the
// handler is not called.
func TestStaleRefusal(t *testing.T) {
	v := staleVerifier{}
	for name, h := range map[string]func(http.Handler) http.Handler{
		"Required": func(n http.Handler) http.Handler { return Required(v, n) },
		"Require":  func(n http.Handler) http.Handler { return Require(v, Challenge{Status: http.StatusUnauthorized}, n) },
		"Optional": func(n http.Handler) http.Handler { return Optional(v, n) },
	} {
		called := false
		srv := h(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { called = true }))
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.Header.Set("Authorization", "Bearer a.b.c")
		w := httptest.NewRecorder()
		srv.ServeHTTP(w, r)
		if w.Code != http.StatusServiceUnavailable || w.Header().Get("Retry-After") != StaleRetryAfter || called {
			t.Errorf("%s: %d, Retry-After %q, handler called %t: %s", name, w.Code, w.Header().Get("Retry-After"), called, w.Body)
		}
	}
	// Without a token, Optional serves the request as anonymous.
	called := false
	Optional(v, http.HandlerFunc(func(http.ResponseWriter, *http.Request) { called = true })).ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/", nil))
	if !called {
		t.Error("Optional without a token: not served")
	}
}

type staleVerifier struct{}

func (staleVerifier) Verify(context.Context, string) (identity.Identity, error) {
	return identity.Identity{}, ErrRevocationStale
}
