package server

import (
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
)

// runService starts Run and returns its listening addresses; the server
// stops when the test ends.
func runService(t *testing.T, cfg Config) map[string]string {
	t.Helper()
	var logs syncBuf
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, cfg, Service{Name: "test.Svc", Log: slog.New(slog.NewJSONHandler(&logs, nil)), Register: func(*grpc.Server) {}})
	}()
	t.Cleanup(func() { cancel(); <-done })
	for i := 0; i < 200; i++ {
		for _, line := range strings.Split(logs.String(), "\n") {
			var rec map[string]string
			if json.Unmarshal([]byte(line), &rec) == nil && rec["msg"] == "listening" {
				return rec
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no listening log: %s", logs.String())
	return nil
}

// The operations port serves at most OpsMaxConns connections at once: one
// more waits until a slot frees, it is not served beside them.
func TestOpsPortCapsConnections(t *testing.T) {
	addrs := runService(t, Config{GRPCAddr: "127.0.0.1:0", OpsAddr: "127.0.0.1:0", ShutdownTimeout: time.Second, OpsMaxConns: 1, TLS: plaintext})
	hold, err := net.Dial("tcp", addrs["ops"])
	if err != nil {
		t.Fatal(err)
	}
	// The held connection is accepted first: give the server a moment.
	time.Sleep(100 * time.Millisecond)
	quick := &http.Client{Timeout: 300 * time.Millisecond}
	if res, err := quick.Get("http://" + addrs["ops"] + "/healthz"); err == nil {
		res.Body.Close()
		t.Fatal("a second connection was served beside the held one")
	}
	_ = hold.Close()
	res, err := (&http.Client{Timeout: 5 * time.Second}).Get("http://" + addrs["ops"] + "/healthz")
	if err != nil {
		t.Fatalf("not served once the slot was free: %v", err)
	}
	res.Body.Close()
}

func TestConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
		ok   bool
	}{
		{"defaults", Config{MaxConns: 1024, MaxStreams: 1000, OpsMaxConns: 64, TLS: plaintext}, true},
		{"no caps", Config{TLS: plaintext}, true},
		{"no TLS material", Config{}, false},
		{"negative conns", Config{MaxConns: -1}, false},
		{"negative streams", Config{MaxStreams: -1}, false},
		{"negative ops conns", Config{OpsMaxConns: -1}, false},
	} {
		if err := tc.cfg.Validate(); (err == nil) != tc.ok {
			t.Errorf("%s: Validate = %v", tc.name, err)
		}
	}
}

func TestLimitZeroIsNoCap(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer lis.Close()
	if Limit(lis, 0) != lis {
		t.Fatal("Limit(lis, 0) wrapped the listener")
	}
}
