package authn

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v2/jwa"
)

func TestKeyRotation(t *testing.T) {
	old := newKey(t, "old", jwa.RS256, 0)
	next := newKey(t, "new", jwa.RS512, 1)
	srv := newJWKSServer(t, old.public(t))
	v := newVerifier(t, srv)
	ctx := context.Background()
	if _, err := v.Verify(ctx, sign(t, old, jwa.RS256, claims(time.Now()))); err != nil {
		t.Fatal(err)
	}
	// The auth service rotates: the new key is published, the old one stays
	// until its tokens expire. A token of the new kid makes the gateway
	// refetch at once.
	srv.setKeys(t, next.public(t), old.public(t))
	before := srv.count()
	if _, err := v.Verify(ctx, sign(t, next, jwa.RS512, claims(time.Now()))); err != nil {
		t.Fatalf("token of the new key: %v", err)
	}
	if got := srv.count() - before; got != 1 {
		t.Fatalf("%d fetches for the new kid, want 1", got)
	}
	if _, err := v.Verify(ctx, sign(t, old, jwa.RS256, claims(time.Now()))); err != nil {
		t.Fatalf("retired key still published: %v", err)
	}
	if srv.count() != before+1 {
		t.Fatal("known kids must not cause fetches")
	}
	// Once the old key is withdrawn, its tokens die with the next fetch.
	srv.setKeys(t, next.public(t))
	_, _ = v.Verify(ctx, sign(t, testKey{kid: "bogus", priv: next.priv}, jwa.RS512, claims(time.Now())))
	if _, err := v.Verify(ctx, sign(t, old, jwa.RS256, claims(time.Now()))); err == nil {
		t.Fatal("withdrawn key still verifies")
	}
}

// A flood of made-up kids costs the auth service one fetch per
// MinRefreshInterval, not one per token.
func TestUnknownKidFloodIsRateLimited(t *testing.T) {
	k1 := newKey(t, "k1", jwa.RS256, 0)
	srv := newJWKSServer(t, k1.public(t))
	v := newVerifier(t, srv, func(c *JWTConfig) { c.MinRefreshInterval = 300 * time.Millisecond })
	ctx := context.Background()
	if _, err := v.Verify(ctx, sign(t, k1, jwa.RS256, claims(time.Now()))); err != nil {
		t.Fatal(err)
	}
	before := srv.count()
	start := time.Now()
	var wg sync.WaitGroup
	tokens := make([]string, 40)
	for i := range tokens {
		tokens[i] = sign(t, testKey{kid: "bogus-" + string(rune('a'+i%26)) + time.Now().String(), priv: k1.priv}, jwa.RS256, claims(time.Now()))
	}
	for _, tok := range tokens {
		wg.Go(func() {
			if _, err := v.Verify(ctx, tok); !errors.Is(err, ErrUnknownKey) {
				t.Errorf("bogus kid: %v", err)
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	if n := srv.count() - before; n > 1+int(elapsed/(300*time.Millisecond)) {
		t.Fatalf("%d fetches in %s for 40 bogus kids", n, elapsed)
	}
}

// The gateway starts while the auth service is down: no error at start,
// tokens are refused meanwhile, and accepted once keys can be fetched.
func TestAuthServiceLate(t *testing.T) {
	k1 := newKey(t, "k1", jwa.RS256, 0)
	srv := newJWKSServer(t, k1.public(t))
	srv.setStatus(http.StatusServiceUnavailable)
	v := newVerifier(t, srv, func(c *JWTConfig) { c.MinRefreshInterval = 100 * time.Millisecond })
	ctx := context.Background()
	tok := sign(t, k1, jwa.RS256, claims(time.Now()))
	if _, err := v.Verify(ctx, tok); !errors.Is(err, ErrNoKeys) {
		t.Fatalf("while down: %v", err)
	}
	if v.Ready(ctx) == nil {
		t.Fatal("ready without keys")
	}
	srv.setStatus(http.StatusOK)
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, err := v.Verify(ctx, tok)
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("still refused after the auth service came up: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := v.Ready(ctx); err != nil {
		t.Fatal(err)
	}
	// A failing refresh keeps the keys already known.
	srv.setStatus(http.StatusInternalServerError)
	_, _ = v.Verify(ctx, sign(t, testKey{kid: "other", priv: k1.priv}, jwa.RS256, claims(time.Now())))
	if _, err := v.Verify(ctx, tok); err != nil {
		t.Fatalf("known key lost after a failed refresh: %v", err)
	}
}

func TestNewJWTNeedsURL(t *testing.T) {
	if _, err := NewJWT(context.Background(), JWTConfig{}); err == nil {
		t.Fatal("no error without URL")
	}
}

func TestOversizedKeySetRefused(t *testing.T) {
	k1 := newKey(t, "k1", jwa.RS256, 0)
	srv := newJWKSServer(t, k1.public(t))
	srv.mu.Lock()
	srv.body = append([]byte(strings.Repeat(" ", maxJWKS)), srv.body...)
	srv.mu.Unlock()
	v := newVerifier(t, srv)
	if _, err := v.Verify(context.Background(), sign(t, k1, jwa.RS256, claims(time.Now()))); !errors.Is(err, ErrNoKeys) {
		t.Fatalf("oversized key set: %v", err)
	}
}

// A remembered token still dies at its exp and with its key.
func TestVerifiedTokensAreRememberedNotTrustedForever(t *testing.T) {
	k1 := newKey(t, "k1", jwa.RS256, 0)
	k2 := newKey(t, "k2", jwa.RS256, 1)
	srv := newJWKSServer(t, k1.public(t))
	now := time.Now()
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	v := newVerifier(t, srv, func(c *JWTConfig) { c.Now = clock; c.Skew = 10 * time.Second })
	ctx := context.Background()
	tok := sign(t, k1, jwa.RS256, with(claims(now), "exp", now.Add(time.Minute).Unix()))
	for i := 0; i < 3; i++ {
		if _, err := v.Verify(ctx, tok); err != nil {
			t.Fatalf("verify %d: %v", i, err)
		}
	}
	if v.verified.Len() != 1 {
		t.Fatalf("%d tokens remembered, want 1", v.verified.Len())
	}
	mu.Lock()
	now = now.Add(time.Minute + 11*time.Second)
	mu.Unlock()
	if _, err := v.Verify(ctx, tok); err == nil {
		t.Fatal("an expired token was accepted from memory")
	}

	mu.Lock()
	now = time.Now()
	mu.Unlock()
	tok = sign(t, k1, jwa.RS256, claims(now))
	if _, err := v.Verify(ctx, tok); err != nil {
		t.Fatal(err)
	}
	// k1 is withdrawn; a token of an unknown kid makes the verifier refetch.
	srv.setKeys(t, k2.public(t))
	time.Sleep(60 * time.Millisecond)
	_, _ = v.Verify(ctx, sign(t, testKey{kid: "bogus", priv: k2.priv}, jwa.RS256, claims(now)))
	if _, err := v.Verify(ctx, tok); err == nil {
		t.Fatal("a remembered token outlived its withdrawn key")
	}
}
