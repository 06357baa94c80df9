package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
)

// syncBuf is a log sink the server goroutines and the test share.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) { s.mu.Lock(); defer s.mu.Unlock(); return s.b.Write(p) }
func (s *syncBuf) String() string              { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// panicky is a health server whose Check panics, to prove recovery. Its
// generated handler reports the health method name, whatever the service is
// registered as.
type panicky struct {
	healthpb.UnimplementedHealthServer
}

func (panicky) Check(context.Context, *healthpb.HealthCheckRequest) (*healthpb.HealthCheckResponse, error) {
	panic("boom")
}

func TestRunServesHealthReadinessMetricsAndStops(t *testing.T) {
	var logs syncBuf
	log := slog.New(slog.NewJSONHandler(&logs, nil))
	var ready atomic.Bool
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, Config{GRPCAddr: "127.0.0.1:0", OpsAddr: "127.0.0.1:0", ShutdownTimeout: 5 * time.Second, MaxRecvBytes: 1 << 20, TLS: plaintext}, Service{
			Name: "test.Svc",
			Log:  log,
			Register: func(s *grpc.Server) {
				desc := healthpb.Health_ServiceDesc
				desc.ServiceName = "test.Panicky"
				s.RegisterService(&desc, panicky{})
			},
			Ready: func(context.Context) error {
				if !ready.Load() {
					return errors.New("store down")
				}
				return nil
			},
		})
	}()
	var addrs map[string]any
	for i := 0; i < 100 && addrs == nil; i++ {
		for _, line := range strings.Split(logs.String(), "\n") {
			var rec map[string]any
			if json.Unmarshal([]byte(line), &rec) == nil && rec["msg"] == "listening" {
				addrs = rec
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	if addrs == nil {
		t.Fatalf("no listening log: %s", logs.String())
	}
	ops := "http://" + addrs["ops"].(string)
	get := func(path string) (int, string) {
		res, err := http.Get(ops + path)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	if code, _ := get("/healthz"); code != 200 {
		t.Fatalf("/healthz = %d", code)
	}
	if code, body := get("/readyz"); code != 503 || !strings.Contains(body, "store down") {
		t.Fatalf("/readyz while not ready = %d %q", code, body)
	}
	ready.Store(true)
	if code, _ := get("/readyz"); code != 200 {
		t.Fatalf("/readyz when ready = %d", code)
	}

	cc, err := grpc.NewClient(addrs["grpc"].(string), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	// The health loop polls readiness every 2 s; wait for SERVING.
	hc := healthpb.NewHealthClient(cc)
	deadline := time.Now().Add(5 * time.Second)
	for {
		res, err := hc.Check(ctx, &healthpb.HealthCheckRequest{})
		if err == nil && res.GetStatus() == healthpb.HealthCheckResponse_SERVING {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("health never SERVING: %v %v", res, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// A panicking handler answers Internal and the server lives on.
	err = cc.Invoke(ctx, "/test.Panicky/Check", &healthpb.HealthCheckRequest{}, &healthpb.HealthCheckResponse{})
	if status.Code(err) != codes.Internal {
		t.Fatalf("panicking handler = %v, want Internal", err)
	}
	if _, err := hc.Check(ctx, &healthpb.HealthCheckRequest{}); err != nil {
		t.Fatalf("server dead after panic: %v", err)
	}
	if code, body := get("/metrics"); code != 200 || !strings.Contains(body, `fris_grpc_requests_total{code="Internal",method="/grpc.health.v1.Health/Check"} 1`) {
		t.Fatalf("/metrics = %d, missing request counter:\n%s", code, body)
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run = %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
	if !strings.Contains(logs.String(), `"msg":"stopped"`) {
		t.Fatal("no stopped log")
	}
}

func TestRunFailsOnBusyPort(t *testing.T) {
	err := Run(context.Background(), Config{GRPCAddr: "256.0.0.1:1", TLS: plaintext}, Service{Register: func(*grpc.Server) {}})
	if err == nil {
		t.Fatal("Run with an impossible address succeeded")
	}
}

func TestApplyGCPercent(t *testing.T) {
	prev := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(prev) })

	t.Setenv("GOGC", "150") // registers the restore of the caller's value
	ApplyGCPercent(400)
	if got := debug.SetGCPercent(100); got != 100 {
		t.Fatalf("with GOGC set the flag changed the target to %d", got)
	}
	os.Unsetenv("GOGC")
	ApplyGCPercent(400)
	if got := debug.SetGCPercent(100); got != 400 {
		t.Fatalf("target = %d, want 400", got)
	}
	ApplyGCPercent(0)
	if got := debug.SetGCPercent(100); got != 100 {
		t.Fatalf("0 must leave the target alone, got %d", got)
	}
}

// TestOldConnectionsAreReplaced: a client's connection is sent GOAWAY at
// MaxConnAge and the client dials again, which is when it re-resolves the
// service's name and finds replicas added since (deploy/README.md,
// "Scaling"). Without the age every call would share the first connection.
func TestOldConnectionsAreReplaced(t *testing.T) {
	var logs syncBuf
	log := slog.New(slog.NewJSONHandler(&logs, nil))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, Config{GRPCAddr: "127.0.0.1:0", OpsAddr: "127.0.0.1:0", ShutdownTimeout: 5 * time.Second,
			MaxRecvBytes: 1 << 20, TLS: plaintext, MaxConnAge: 300 * time.Millisecond},
			Service{Name: "test.Svc", Log: log, Register: func(*grpc.Server) {}, Ready: func(context.Context) error { return nil }})
	}()
	defer func() {
		cancel()
		<-done
	}()
	var grpcAddr string
	for i := 0; i < 100 && grpcAddr == ""; i++ {
		for _, line := range strings.Split(logs.String(), "\n") {
			var rec map[string]any
			if json.Unmarshal([]byte(line), &rec) == nil && rec["msg"] == "listening" {
				grpcAddr, _ = rec["grpc"].(string)
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	if grpcAddr == "" {
		t.Fatalf("no listening log: %s", logs.String())
	}
	var dials atomic.Int32
	dialer := func(ctx context.Context, addr string) (net.Conn, error) {
		dials.Add(1)
		var d net.Dialer
		return d.DialContext(ctx, "tcp", addr)
	}
	cc, err := grpc.NewClient("passthrough:///"+grpcAddr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(dialer))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	hc := healthpb.NewHealthClient(cc)
	// Calls for well over twice the age (plus gRPC's jitter of 10 %).
	for end := time.Now().Add(1500 * time.Millisecond); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if _, err := hc.Check(ctx, &healthpb.HealthCheckRequest{}); err != nil {
			t.Fatalf("call failed while connections were replaced: %v", err)
		}
	}
	if n := dials.Load(); n < 3 {
		t.Fatalf("%d dials in 1.5 s with a connection age of 300 ms, want at least 3", n)
	}
}
