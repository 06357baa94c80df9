package app

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"google.golang.org/grpc"
)

// TestExplorerSecretFile: the gateway refuses to start with a client
// secret file it cannot read or that is empty, and reads one that is there.
func TestExplorerSecretFile(t *testing.T) {
	cc, _ := serve(t, func(*grpc.Server) {})
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty")
	good := filepath.Join(dir, "good")
	_ = os.WriteFile(empty, []byte(" \n"), 0o600)
	_ = os.WriteFile(good, []byte("a-secret-of-enough-length\n"), 0o600)
	for file, wantErr := range map[string]string{filepath.Join(dir, "missing"): "no such file", empty: "is empty", good: ""} {
		cfg := defaultConfig(t, "-insecure-plaintext", "-auth-addr", "x", "-explorer-client-id", "fris-explorer", "-explorer-client-secret-file", file)
		_, err := Handler(t.Context(), cfg, Upstreams{MDR: cc, Auth: cc}, stubVerifier{}, slog.New(slog.DiscardHandler), prometheus.NewRegistry())
		if wantErr == "" && err != nil || wantErr != "" && (err == nil || !strings.Contains(err.Error(), wantErr)) {
			t.Errorf("%s: %v, want %q", filepath.Base(file), err, wantErr)
		}
	}
}

// TestExplorerCookieKeyFile: the gateway refuses to start with a cookie
// key file it cannot read or whose keys are not 32 bytes of base64, reads
// one that is right, and says how many sessions it holds on /metrics.
func TestExplorerCookieKeyFile(t *testing.T) {
	cc, _ := serve(t, func(*grpc.Server) {})
	dir := t.TempDir()
	files := map[string]string{"empty": "# no key\n", "short": "c2hvcnQ=\n", "garbage": "@@@@\n",
		"good": "# current\nAAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=\n" + "ICEiIyQlJicoKSorLC0uLzAxMjM0NTY3ODk6Ozw9Pj8\n"}
	for name, text := range files {
		_ = os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600)
	}
	for name, wantErr := range map[string]string{"missing": "no such file", "empty": "no cookie key", "short": "has 5 bytes", "garbage": "not base64", "good": ""} {
		cfg := defaultConfig(t, "-insecure-plaintext", "-explorer-cookie-key-file", filepath.Join(dir, name))
		reg := prometheus.NewRegistry()
		_, err := Handler(t.Context(), cfg, Upstreams{MDR: cc}, stubVerifier{}, slog.New(slog.DiscardHandler), reg)
		if wantErr == "" && err != nil || wantErr != "" && (err == nil || !strings.Contains(err.Error(), wantErr)) {
			t.Errorf("%s: %v, want %q", name, err, wantErr)
			continue
		}
		if err != nil {
			continue
		}
		n, err := testutil.GatherAndCount(reg, "fris_explorer_sessions")
		if err != nil || n != 1 {
			t.Errorf("fris_explorer_sessions: %d series, %v", n, err)
		}
	}
}

// TestExplorerThroughGateway: the Explorer's pages come through the whole
// handler without CORS, as HTML with their own CSP, and reach the
// registry in the page's language with the gateway's request id.
func TestExplorerThroughGateway(t *testing.T) {
	e := newEnv(t, true)
	for _, path := range []string{"/", "/explorer/", "/explorer/nope"} {
		rec := e.do(t, "GET", path, "", "Origin", "https://app.example", "Accept-Language", "de")
		h := rec.Header()
		if !strings.HasPrefix(h.Get("Content-Type"), "text/html") || h.Get("Access-Control-Allow-Origin") != "" ||
			h.Get("Cache-Control") != "no-store" || !strings.Contains(h.Get("Content-Security-Policy"), "script-src 'self'") {
			t.Errorf("%s: %d %v", path, rec.Code, h)
		}
		if !strings.Contains(rec.Body.String(), `<html lang="de">`) {
			t.Errorf("%s: not in German:\n%s", path, rec.Body)
		}
	}
	c := e.mdr.last(t)
	if c.method != "ListNamespaces" || strings.Join(c.md.Get("accept-language"), ",") != "de" || len(c.md.Get("x-request-id")) != 1 {
		t.Fatalf("the registry got %s with %v", c.method, c.md)
	}
	if rec := e.do(t, "GET", "/explorer", ""); rec.Code != 301 || rec.Header().Get("Location") != "/explorer/" {
		t.Fatalf("/explorer: %d %v", rec.Code, rec.Header())
	}
	if rec := e.do(t, "GET", "/explorer/login", ""); rec.Code != 503 {
		t.Fatalf("sign-in without the Explorer's client: %d", rec.Code)
	}
}

// TestAcceptLanguageForwarded: the registry gets the client's languages as
// metadata; a value gRPC cannot carry is dropped quietly (grpc-gateway's
// own forwarding logged an ERROR line for each such request).
func TestAcceptLanguageForwarded(t *testing.T) {
	e := newEnv(t, true)
	for _, tc := range []struct{ header, want string }{
		{"de, en;q=0.8", "de, en;q=0.8"},
		{"d\u00e9", ""},
		{"", ""},
	} {
		var hdr []string
		if tc.header != "" {
			hdr = []string{"Accept-Language", tc.header}
		}
		if rec := e.do(t, "GET", "/v3/api/mdr/namespaces", "", hdr...); rec.Code != 200 {
			t.Fatalf("Accept-Language %q: %d %s", tc.header, rec.Code, rec.Body)
		}
		c := e.mdr.last(t)
		if got := strings.Join(c.md.Get("accept-language"), ","); c.method != "ListNamespaces" || got != tc.want {
			t.Errorf("Accept-Language %q: the registry got %s with accept-language %q, want %q", tc.header, c.method, got, tc.want)
		}
	}
}
