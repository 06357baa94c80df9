package app

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
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
