package server

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"fris.dev/pkg/identity"
	"fris.dev/pkg/mtls"
)

// operatorService runs a service with an admin API of two methods, one of
// which the gateway may call for an operator.
func operatorService(t *testing.T, tlsCfg mtls.Config) string {
	t.Helper()
	cfg := Config{GRPCAddr: "127.0.0.1:0", ShutdownTimeout: time.Second, MaxRecvBytes: 1 << 20, TLS: tlsCfg}
	var logs syncBuf
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, cfg, Service{
			Name: "test.v1.ThingService",
			Log:  slog.New(slog.NewJSONHandler(&logs, nil)),
			Register: func(s *grpc.Server) {
				for _, name := range []string{"test.v1.ThingService", "test.v1.ThingAdmin"} {
					desc := healthpb.Health_ServiceDesc
					desc.ServiceName = name
					s.RegisterService(&desc, &seen{})
				}
			},
			// Check stands for a read the Explorer needs, Watch (a stream)
			// for an admin call it does not.
			Operator: []string{"/test.v1.ThingAdmin/Check"},
		})
	}()
	t.Cleanup(func() { cancel(); <-done })
	return listening(t, &logs)["grpc"]
}

func callAs(t *testing.T, addr string, opt grpc.DialOption, method string, id identity.Identity) codes.Code {
	t.Helper()
	cc, err := grpc.NewClient(addr, opt)
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ctx = metadata.AppendToOutgoingContext(ctx, id.Pairs()...)
	err = cc.Invoke(ctx, "/"+method, &healthpb.HealthCheckRequest{}, &healthpb.HealthCheckResponse{})
	return status.Code(err)
}

// TestOperatorMethods: the gateway reaches an operator method only with an
// operator's identity, and no other admin method at all; the admin
// certificate keeps its access. Over real mutual TLS.
func TestOperatorMethods(t *testing.T) {
	cert := certs(t, t.TempDir(), "svc", "gateway", "admin")
	addr := operatorService(t, cert("svc"))
	dial := func(name string) grpc.DialOption {
		opt, err := cert(name).DialOption()
		if err != nil {
			t.Fatal(err)
		}
		return opt
	}
	operator := identity.Identity{Subject: "op-1", Scopes: []string{"openid", identity.ScopeOperator}}
	researcher := identity.Identity{Subject: "r-1", Scopes: []string{"openid", identity.ScopeResearcher}}
	tests := []struct {
		name   string
		as     string
		method string
		id     identity.Identity
		want   codes.Code
	}{
		{"gateway for an operator", "gateway", "test.v1.ThingAdmin/Check", operator, codes.OK},
		{"gateway for a researcher", "gateway", "test.v1.ThingAdmin/Check", researcher, codes.PermissionDenied},
		{"gateway for nobody", "gateway", "test.v1.ThingAdmin/Check", identity.Identity{}, codes.Unauthenticated},
		{"gateway, another admin method, for an operator", "gateway", "test.v1.ThingAdmin/Watch", operator, codes.PermissionDenied},
		{"admin keeps the operator method", "admin", "test.v1.ThingAdmin/Check", identity.Identity{}, codes.OK},
		{"admin keeps the other admin methods", "admin", "test.v1.ThingAdmin/Watch", identity.Identity{}, codes.Unimplemented},
		{"gateway keeps the public API", "gateway", "test.v1.ThingService/Check", researcher, codes.OK},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := callAs(t, addr, dial(tc.as), tc.method, tc.id); got != tc.want {
				t.Fatalf("code %v, want %v", got, tc.want)
			}
		})
	}
}

// TestOperatorMethodsPlaintext: without TLS (development) a call carrying a
// user's identity still needs the operator scope.
func TestOperatorMethodsPlaintext(t *testing.T) {
	addr := operatorService(t, plaintext)
	opt, err := plaintext.DialOption()
	if err != nil {
		t.Fatal(err)
	}
	if got := callAs(t, addr, opt, "test.v1.ThingAdmin/Check", identity.Identity{Subject: "r-1"}); got != codes.PermissionDenied {
		t.Fatalf("a researcher's identity: %v, want PermissionDenied", got)
	}
	if got := callAs(t, addr, opt, "test.v1.ThingAdmin/Check", identity.Identity{Subject: "op", Scopes: []string{identity.ScopeOperator}}); got != codes.OK {
		t.Fatalf("an operator's identity: %v, want OK", got)
	}
}

// TestOperatorRoles: a finer role reaches the methods given to it and no
// other operator method; a role given a method operators lack gains nothing.
func TestOperatorRoles(t *testing.T) {
	g := newOperatorGate([]string{"/a/One", "/a/Two"}, map[string][]string{"x:role": {"/a/One", "/a/Three"}}, slog.New(slog.DiscardHandler))
	ctx := func(scopes ...string) context.Context {
		return metadata.NewIncomingContext(context.Background(), metadata.Pairs(identity.Identity{Subject: "u", Scopes: scopes}.Pairs()...))
	}
	tests := []struct {
		name, method string
		ctx          context.Context
		want         codes.Code
	}{
		{"role, its method", "/a/One", ctx("x:role"), codes.OK},
		{"role, an operator's method", "/a/Two", ctx("x:role"), codes.PermissionDenied},
		{"operator, the role's method", "/a/One", ctx(identity.ScopeOperator), codes.OK},
		{"operator, the other", "/a/Two", ctx(identity.ScopeOperator), codes.OK},
		{"researcher", "/a/One", ctx(identity.ScopeResearcher), codes.PermissionDenied},
		{"role, a method no operator has", "/a/Three", ctx("x:role"), codes.OK}, // not guarded: the access table refuses it
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := status.Code(g.check(tc.ctx, tc.method)); got != tc.want {
				t.Fatalf("code %v, want %v", got, tc.want)
			}
		})
	}
	if g.methods["/a/Three"] != nil {
		t.Fatal("a role widened the guarded methods")
	}
	err := g.check(ctx("broker:researcher"), "/a/One")
	if msg := status.Convert(err).Message(); msg != "the access token lacks the scope fris:operator or x:role" {
		t.Fatalf("refusal %q", msg)
	}
}
