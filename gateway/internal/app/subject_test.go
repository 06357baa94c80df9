package app

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"

	"fris.dev/pkg/identity"
	mdrv1 "fris.dev/proto/mdr/v1"
)

// knownVerifier is stubVerifier that vouches for its tokens at once, as
// authn.JWT's Known does.
type knownVerifier struct{ stubVerifier }

func (k knownVerifier) Known(ctx context.Context, tok string) (identity.Identity, bool) {
	id, err := k.Verify(ctx, tok)
	return id, err == nil
}

// TestInFlightPerSubject: Handler counts a request with a bearer token the
// verifier vouches for against its subject, not its address: from one
// address whose anonymous budget (1) is held, two subjects hold two
// requests each (-max-inflight-per-subject 2); the next of each, and the
// next anonymous one or one with an invalid token, is 429.
func TestInFlightPerSubject(t *testing.T) {
	rec := &recorder{entered: make(chan struct{}, 10), hold: make(chan struct{})}
	var up Upstreams
	up.MDR, _ = serve(t, func(s *grpc.Server) { mdrv1.RegisterMdrServiceServer(s, fakeMDR{recorder: rec}) })
	cfg := defaultConfig(t, "-insecure-plaintext", "-max-inflight-per-addr", "1", "-max-inflight-per-subject", "2", "-mdr-cache-size", "0")
	v := knownVerifier{stubVerifier{ids: map[string]identity.Identity{"ada": {Subject: "1"}, "bob": {Subject: "2"}}}}
	h, err := Handler(t.Context(), cfg, up, v, slog.New(slog.DiscardHandler), prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	send := func(tok string) int {
		r := httptest.NewRequest(http.MethodGet, "/v3/api/mdr/namespaces", nil)
		r.RemoteAddr = "192.0.2.1:1234"
		if tok != "" {
			r.Header.Set("Authorization", "Bearer "+tok)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Code
	}
	done := make(chan int, 5)
	for _, tok := range []string{"", "ada", "ada", "bob", "bob"} {
		go func() { done <- send(tok) }()
		<-rec.entered
	}
	for _, tok := range []string{"", "ada", "bob", "forged"} {
		if got := send(tok); got != http.StatusTooManyRequests {
			t.Errorf("token %q beyond its budget: %d, want 429", tok, got)
		}
	}
	close(rec.hold)
	for range 5 {
		if got := <-done; got != http.StatusOK {
			t.Errorf("admitted: %d", got)
		}
	}
}
