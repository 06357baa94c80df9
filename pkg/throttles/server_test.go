package throttles

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"fris.dev/pkg/audit"
	"fris.dev/pkg/devca"
	"fris.dev/pkg/identity"
	"fris.dev/pkg/kv"
	"fris.dev/pkg/mtls"
	"fris.dev/pkg/ratelimit"
	"fris.dev/pkg/server"
	ratelimitv1 "fris.dev/proto/ratelimit/v1"
)

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) { s.mu.Lock(); defer s.mu.Unlock(); return s.b.Write(p) }
func (s *syncBuf) String() string              { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// lines are the JSON lines of buf that have msg.
func lines(buf *syncBuf, msg string) []map[string]any {
	var out []map[string]any
	for _, l := range strings.Split(buf.String(), "\n") {
		var rec map[string]any
		if json.Unmarshal([]byte(l), &rec) == nil && rec["msg"] == msg {
			out = append(out, rec)
		}
	}
	return out
}

type fixture struct {
	addr   string
	cert   func(string) mtls.Config
	guard  *ratelimit.Guard
	audits *syncBuf
}

// serve runs a service as auth registers ThrottleAdmin: over mutual TLS,
// its methods open to the gateway for an operator's token.
func serve(t *testing.T) fixture {
	t.Helper()
	dir := t.TempDir()
	if _, err := devca.Ensure(dir, []string{"auth", "gateway", "admin", "upload"}, devca.Options{}); err != nil {
		t.Fatal(err)
	}
	cert := func(name string) mtls.Config {
		return mtls.Config{Cert: filepath.Join(dir, name+".pem"), Key: filepath.Join(dir, name+"-key.pem"), CA: filepath.Join(dir, "ca.pem")}
	}
	db, err := kv.OpenBolt(filepath.Join(dir, "auth.db"), kv.BoltOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	limits := ratelimit.New(db, nil, nil)
	guard := limits.Guard("login", ratelimit.Policy{Limit: ratelimit.Limit{Events: 1, Per: time.Hour, Burst: 2}}, ratelimit.Policy{})
	audits, logs := &syncBuf{}, &syncBuf{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- server.Run(ctx, server.Config{GRPCAddr: "127.0.0.1:0", ShutdownTimeout: time.Second, MaxRecvBytes: 1 << 20, TLS: cert("auth")}, server.Service{
			Name: "fris.auth.v1.AuthService",
			Log:  slog.New(slog.NewJSONHandler(logs, nil)),
			Register: func(s *grpc.Server) {
				Register(s, "auth", limits, audit.New(audits, "auth"), nil)
			},
			Operator: OperatorMethods,
		})
	}()
	t.Cleanup(func() { cancel(); <-done })
	for i := 0; ; i++ {
		if ls := lines(logs, "listening"); len(ls) > 0 {
			return fixture{addr: ls[0]["grpc"].(string), cert: cert, guard: guard, audits: audits}
		}
		if i > 500 {
			t.Fatalf("no listening log: %s", logs)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (f fixture) client(t *testing.T, as string) ratelimitv1.ThrottleAdminClient {
	t.Helper()
	opt, err := f.cert(as).DialOption()
	if err != nil {
		t.Fatal(err)
	}
	cc, err := grpc.NewClient(f.addr, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	return ratelimitv1.NewThrottleAdminClient(cc)
}

// slow fails the guard for account from addr until it is throttled.
func (f fixture) slow(t *testing.T, account, addr string) {
	t.Helper()
	ctx := metadata.NewIncomingContext(context.Background(), metadata.Pairs(identity.KeyClientAddr, addr))
	for range 3 {
		if a, err := f.guard.Begin(ctx, account, false); err == nil {
			a.Failed(ctx)
		}
	}
}

func as(id identity.Identity) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	_ = cancel // ends with the test process; the calls are short
	return metadata.AppendToOutgoingContext(ctx, id.Pairs()...)
}

// Only operators reach the throttles: the gateway for an operator's token
// and the admin certificate; not a researcher, a user administrator, a
// call without identity, nor another service's certificate.
func TestOnlyOperators(t *testing.T) {
	f := serve(t)
	f.slow(t, "alice@example.org", "192.0.2.1")
	operator := identity.Identity{Subject: "op-1", Scopes: []string{"openid", identity.ScopeOperator}}
	for _, tc := range []struct {
		name string
		cert string
		id   identity.Identity
		want codes.Code
	}{
		{"gateway, researcher", "gateway", identity.Identity{Subject: "r-1", Scopes: []string{identity.ScopeResearcher}}, codes.PermissionDenied},
		{"gateway, user administrator", "gateway", identity.Identity{Subject: "u-1", Scopes: []string{identity.ScopeUserAdmin}}, codes.PermissionDenied},
		{"gateway, nobody", "gateway", identity.Identity{}, codes.Unauthenticated},
		{"upload's certificate", "upload", identity.Identity{}, codes.PermissionDenied},
		{"gateway, operator", "gateway", operator, codes.OK},
		{"admin certificate", "admin", identity.Identity{}, codes.OK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := f.client(t, tc.cert)
			res, err := c.ListThrottles(as(tc.id), &ratelimitv1.ListThrottlesRequest{})
			if status.Code(err) != tc.want {
				t.Fatalf("ListThrottles: %v, want %v", err, tc.want)
			}
			if tc.want == codes.OK && (len(res.GetThrottles()) != 1 || res.GetThrottles()[0].GetAccount() != "alice@example.org") {
				t.Fatalf("listed %v", res.GetThrottles())
			}
			if tc.want != codes.OK {
				// Not even an attempt to lift gets through.
				_, err := c.LiftThrottle(as(tc.id), &ratelimitv1.LiftThrottleRequest{Id: "login:pa:0123456789abcdef01234567"})
				if status.Code(err) != tc.want {
					t.Fatalf("LiftThrottle: %v, want %v", err, tc.want)
				}
			}
		})
	}
	if n := len(lines(f.audits, "audit")); n != 0 {
		t.Fatalf("refused calls and reads audited: %s", f.audits)
	}
}

// A lift through the gateway is audited (class admin, as every admin
// call; the log line does not carry the class) with the operator as the actor and
// the account as the target; one through the admin certificate with the
// admin API; the account is admitted at once.
func TestLiftAudited(t *testing.T) {
	f := serve(t)
	f.slow(t, "alice@example.org", "192.0.2.1")
	f.slow(t, "bob@example.org", "192.0.2.2")
	gw, admin := f.client(t, "gateway"), f.client(t, "admin")
	operator := identity.Identity{Subject: "op-1", Scopes: []string{identity.ScopeOperator}}
	res, err := gw.ListThrottles(as(operator), &ratelimitv1.ListThrottlesRequest{})
	if err != nil || len(res.GetThrottles()) != 2 {
		t.Fatalf("list: %v %v", res, err)
	}
	ids := map[string]string{}
	for _, th := range res.GetThrottles() {
		if th.GetKind() != "pair" || th.GetFailures() != 2 || th.GetUntil().AsTime().Before(time.Now()) {
			t.Fatalf("listed %v", th)
		}
		ids[th.GetAccount()] = th.GetId()
	}
	lifted, err := gw.LiftThrottle(as(operator), &ratelimitv1.LiftThrottleRequest{Id: ids["alice@example.org"]})
	if err != nil || !lifted.GetLifted() || lifted.GetThrottle().GetAccount() != "alice@example.org" {
		t.Fatalf("lift: %v %v", lifted, err)
	}
	ctx := metadata.NewIncomingContext(context.Background(), metadata.Pairs(identity.KeyClientAddr, "192.0.2.1"))
	if _, err := f.guard.Begin(ctx, "alice@example.org", false); err != nil {
		t.Fatalf("after the lift: %v", err)
	}
	if _, err := admin.LiftThrottle(as(identity.Identity{}), &ratelimitv1.LiftThrottleRequest{Id: ids["bob@example.org"]}); err != nil {
		t.Fatal(err)
	}
	again, err := admin.LiftThrottle(as(identity.Identity{}), &ratelimitv1.LiftThrottleRequest{Id: ids["bob@example.org"]})
	if err != nil || again.GetLifted() {
		t.Fatalf("a second lift: %v %v", again, err)
	}
	if _, err := admin.LiftThrottle(as(identity.Identity{}), &ratelimitv1.LiftThrottleRequest{Id: "login:kn:0123456789abcdef01234567"}); status.Code(err) != codes.InvalidArgument {
		t.Fatalf("a known-address mark: %v, want InvalidArgument", err)
	}
	evs := lines(f.audits, "audit")
	if len(evs) != 4 {
		t.Fatalf("%d audit events, want 4: %s", len(evs), f.audits)
	}
	for i, want := range []struct{ actor, target, outcome string }{
		{"op-1", "alice@example.org", "success"}, {audit.ActorAdmin, "bob@example.org", "success"}, {audit.ActorAdmin, "", "success"}, {audit.ActorAdmin, "", "failure"},
	} {
		e := evs[i]
		if e["action"] != "auth.admin.LiftThrottle" || e["actor"] != want.actor || (e["target"] != nil && e["target"] != want.target) ||
			(want.target != "" && e["target"] != want.target) || e["outcome"] != want.outcome {
			t.Errorf("audit event %d: %v, want %+v", i, e, want)
		}
	}
}
