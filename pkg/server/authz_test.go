package server

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"fris.dev/pkg/devca"
	"fris.dev/pkg/identity"
	"fris.dev/pkg/mtls"
)

// plaintext is the TLS setting of tests about something else.
var plaintext = mtls.Config{Insecure: true}

// seen is a health server standing in for a public or an admin API: it
// remembers the subject of the identity metadata it was called with.
type seen struct {
	healthpb.UnimplementedHealthServer
	mu      sync.Mutex
	subject string
}

func (s *seen) Check(ctx context.Context, _ *healthpb.HealthCheckRequest) (*healthpb.HealthCheckResponse, error) {
	s.mu.Lock()
	s.subject = identity.FromIncoming(ctx).Subject
	s.mu.Unlock()
	return &healthpb.HealthCheckResponse{Status: healthpb.HealthCheckResponse_SERVING}, nil
}

func (s *seen) last() string { s.mu.Lock(); defer s.mu.Unlock(); return s.subject }

func certs(t *testing.T, dir string, names ...string) func(name string) mtls.Config {
	t.Helper()
	if _, err := devca.Ensure(dir, names, devca.Options{}); err != nil {
		t.Fatal(err)
	}
	return func(name string) mtls.Config {
		return mtls.Config{Cert: filepath.Join(dir, name+".pem"), Key: filepath.Join(dir, name+"-key.pem"), CA: filepath.Join(dir, "ca.pem")}
	}
}

// TestAccess runs a service with mutual TLS and calls it as each kind of
// peer: the access table and the rule on identity metadata, end to end
// over real handshakes.
func TestAccess(t *testing.T) {
	cert := certs(t, t.TempDir(), "svc", "gateway", "admin", "upload")
	stranger := certs(t, t.TempDir(), "gateway") // a CA of its own
	api, admin, open := &seen{}, &seen{}, &seen{}
	cfg := Config{GRPCAddr: "127.0.0.1:0", ShutdownTimeout: time.Second, MaxRecvBytes: 1 << 20, TLS: cert("svc")}
	var logs syncBuf
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, cfg, Service{
			Name: "test.v1.ThingService",
			Log:  slog.New(slog.NewJSONHandler(&logs, nil)),
			Register: func(s *grpc.Server) {
				for name, impl := range map[string]*seen{"test.v1.ThingService": api, "test.v1.ThingAdmin": admin, "test.v1.OpenService": open} {
					desc := healthpb.Health_ServiceDesc
					desc.ServiceName = name
					s.RegisterService(&desc, impl)
				}
			},
			Access: Access{"/test.v1.OpenService/Check": {mtls.Upload}},
		})
	}()
	t.Cleanup(func() { cancel(); <-done })
	addr := listening(t, &logs)["grpc"]

	noCert := cert("gateway")
	noCert.Cert, noCert.Key = "", ""
	tests := []struct {
		name    string
		as      mtls.Config
		method  string
		subject string // identity metadata sent
		want    codes.Code
		seen    *seen // the server that must have seen subject
	}{
		{"gateway calls the public API with identity", cert("gateway"), "test.v1.ThingService/Check", "alice", codes.OK, api},
		{"gateway may not call the admin API", cert("gateway"), "test.v1.ThingAdmin/Check", "", codes.PermissionDenied, nil},
		{"admin calls the admin API", cert("admin"), "test.v1.ThingAdmin/Check", "", codes.OK, admin},
		{"admin may not call the public API", cert("admin"), "test.v1.ThingService/Check", "", codes.PermissionDenied, nil},
		{"admin may not send identity metadata", cert("admin"), "test.v1.ThingAdmin/Check", "alice", codes.PermissionDenied, nil},
		{"upload calls what the table adds for it", cert("upload"), "test.v1.OpenService/Check", "", codes.OK, open},
		{"upload may not send identity metadata", cert("upload"), "test.v1.OpenService/Check", "alice", codes.PermissionDenied, nil},
		{"upload may not call the public API", cert("upload"), "test.v1.ThingService/Check", "", codes.PermissionDenied, nil},
		{"a service certificate has no rights", cert("svc"), "test.v1.ThingService/Check", "", codes.PermissionDenied, nil},
		{"any verified peer checks health", cert("svc"), "grpc.health.v1.Health/Check", "", codes.OK, nil},
		{"reflection is for operators", cert("gateway"), "grpc.reflection.v1.ServerReflection/ServerReflectionInfo", "", codes.PermissionDenied, nil},
		{"another CA's certificate: no handshake", stranger("gateway"), "grpc.health.v1.Health/Check", "", codes.Unavailable, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := call(t, addr, tc.as, tc.method, tc.subject)
			if got != tc.want {
				t.Fatalf("code %v, want %v", got, tc.want)
			}
			if tc.seen != nil && tc.seen.last() != tc.subject {
				t.Fatalf("service saw subject %q, want %q", tc.seen.last(), tc.subject)
			}
		})
	}

	t.Run("no client certificate: no handshake", func(t *testing.T) {
		// DialOption wants a key pair; a TLS client without one is built
		// from the same CA by hand.
		opt, err := mtls.Config{Insecure: true}.DialOption()
		if err != nil {
			t.Fatal(err)
		}
		if got := callWith(t, addr, opt, "grpc.health.v1.Health/Check", ""); got != codes.Unavailable {
			t.Fatalf("plaintext call: code %v, want Unavailable", got)
		}
		if got := callWith(t, addr, caOnly(t, noCert), "grpc.health.v1.Health/Check", ""); got != codes.Unavailable {
			t.Fatalf("TLS without a client certificate: code %v, want Unavailable", got)
		}
	})
}

func call(t *testing.T, addr string, as mtls.Config, method, subject string) codes.Code {
	t.Helper()
	opt, err := as.DialOption()
	if err != nil {
		t.Fatal(err)
	}
	return callWith(t, addr, opt, method, subject)
}

func callWith(t *testing.T, addr string, opt grpc.DialOption, method, subject string) codes.Code {
	t.Helper()
	cc, err := grpc.NewClient(addr, opt)
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if subject != "" {
		ctx = metadata.AppendToOutgoingContext(ctx, identity.Identity{Subject: subject}.Pairs()...)
	}
	err = cc.Invoke(ctx, "/"+method, &healthpb.HealthCheckRequest{}, &healthpb.HealthCheckResponse{})
	return status.Code(err)
}

func TestAccessAllows(t *testing.T) {
	a := Access{
		"/p.Svc/":       {mtls.Gateway},
		"/p.Svc/Check":  {mtls.Upload},
		"/p.Admin/":     {mtls.Admin},
		"/grpc.health.": {Anyone},
	}
	tests := []struct {
		name, method string
		want         bool
	}{
		{mtls.Gateway, "/p.Svc/Get", true},
		{mtls.Upload, "/p.Svc/Get", false},
		{mtls.Upload, "/p.Svc/Check", true},
		{mtls.Gateway, "/p.Svc/Check", false}, // the longest prefix decides
		{mtls.Admin, "/p.Admin/Delete", true},
		{mtls.Gateway, "/p.Admin/Delete", false},
		{"anyone", "/grpc.health.v1.Health/Check", true},
		{mtls.Admin, "/p.Unlisted/Get", false},
	}
	for _, tc := range tests {
		if got := a.allows(tc.name, tc.method); got != tc.want {
			t.Errorf("%s calls %s: %v, want %v", tc.name, tc.method, got, tc.want)
		}
	}
}

// Every key pkg/identity carries must start with the prefix the authoriser
// refuses from peers other than the gateway.
func TestIdentityKeysHaveThePrefix(t *testing.T) {
	for _, k := range []string{identity.KeySubject, identity.KeyScope, identity.KeyClient, identity.KeyAuthPrefix, identity.KeyClientAddr} {
		if len(k) < len(identityPrefix) || k[:len(identityPrefix)] != identityPrefix {
			t.Errorf("identity key %q does not start with %q", k, identityPrefix)
		}
	}
}

// caOnly is a TLS client that trusts c's CA but has no certificate of its
// own.
func caOnly(t *testing.T, c mtls.Config) grpc.DialOption {
	t.Helper()
	pem, err := os.ReadFile(c.CA)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	return grpc.WithTransportCredentials(credentials.NewTLS(&tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS13}))
}

// listening waits for Run's "listening" log line and returns its addresses.
func listening(t *testing.T, logs *syncBuf) map[string]string {
	t.Helper()
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
