package e2e

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestRevocationFailClosed: a gateway started with -revocation-fail-closed
// whose revocation list cannot be fetched (-revocations-url names a port
// nobody listens on) refuses a valid bearer token with 503, Retry-After
// and a JSON error once -revocation-max-stale (2 s) has passed since its
// start, rather than trusting it; anonymous routes go on. (The default,
// fail open, accepts such a token: TestRevocation's stack and every other
// run without a reachable list.)
func TestRevocationFailClosed(t *testing.T) {
	t.Parallel()
	s := NewStack(t, Options{GatewayArgs: []string{"-revocations-url", "http://127.0.0.1:1/revocations",
		"-revocation-fail-closed", "-revocation-max-stale", "2s"}})
	seedAuth(t, s)
	access, _ := researcherToken(t, s, demoEmail, demoPass)
	// A hang guard only: the bound is counted from the gateway's start.
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	for {
		res, body := s.Do(t, http.MethodGet, oauth+"/userinfo", nil, "Authorization", "Bearer "+access)
		if res.StatusCode == http.StatusServiceUnavailable {
			if res.Header.Get("Retry-After") != "5" || !strings.Contains(string(body), "revocation list is out of date") ||
				!strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") {
				t.Fatalf("refusal: %v %s", res.Header, body)
			}
			break
		}
		if res.StatusCode != http.StatusOK {
			t.Fatalf("userinfo: %d %s", res.StatusCode, body)
		}
		if ctx.Err() != nil {
			t.Fatal("the token is still trusted with the revocation list never fetched")
		}
		time.Sleep(100 * time.Millisecond)
	}
	if res, body := s.Do(t, http.MethodGet, mdr+"/namespaces", nil); res.StatusCode != http.StatusOK {
		t.Fatalf("an anonymous read: %d %s", res.StatusCode, body)
	}
	if res, _ := s.Do(t, http.MethodGet, mdr+"/namespaces", nil, "Authorization", "Bearer "+access); res.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("the registry with the token: %d, want 503 rather than served as anonymous", res.StatusCode)
	}
}
