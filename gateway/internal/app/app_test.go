package app

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"fris.dev/pkg/identity"
	"fris.dev/pkg/rpcclient"
	"fris.dev/pkg/rpcerr"
	authv1 "fris.dev/proto/auth/v1"
	mdrv1 "fris.dev/proto/mdr/v1"
)

// call is what a fake service saw.
type call struct {
	method string
	req    proto.Message
	md     metadata.MD
}

type recorder struct {
	mu    sync.Mutex
	calls []call
	// entered, when not nil, is told of each call, which then waits for
	// hold to close: calls kept in flight.
	entered chan struct{}
	hold    chan struct{}
}

func (r *recorder) record(ctx context.Context, method string, req proto.Message) {
	md, _ := metadata.FromIncomingContext(ctx)
	r.mu.Lock()
	r.calls = append(r.calls, call{method, proto.Clone(req), md.Copy()})
	r.mu.Unlock()
	if r.entered != nil {
		r.entered <- struct{}{}
		<-r.hold
	}
}

func (r *recorder) last(t *testing.T) call {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.calls) == 0 {
		t.Fatal("service not called")
	}
	return r.calls[len(r.calls)-1]
}

func (r *recorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.calls)
}

type fakeAuth struct {
	authv1.UnimplementedAuthServiceServer
	*recorder
}

func (f fakeAuth) ListClients(ctx context.Context, in *authv1.ListClientsRequest) (*authv1.ListClientsResponse, error) {
	f.record(ctx, "ListClients", in)
	return &authv1.ListClientsResponse{Clients: []*authv1.Client{{ClientId: "c1", Name: "Client", Type: "MDR"}}}, nil
}

func (f fakeAuth) ListCerts(ctx context.Context, in *authv1.ListCertsRequest) (*authv1.ListCertsResponse, error) {
	f.record(ctx, "ListCerts", in)
	return &authv1.ListCertsResponse{Keys: []*authv1.PublicKey{{KeyType: "RSA", KeyId: "k1"}}}, nil
}

func (f fakeAuth) GetJWKS(ctx context.Context, in *authv1.GetJWKSRequest) (*authv1.JWKS, error) {
	f.record(ctx, "GetJWKS", in)
	return &authv1.JWKS{Keys: []*authv1.JWK{{Kty: "RSA", Kid: "k1", Alg: "RS256", N: proto.String("AQAB"), E: proto.String("AQAB")}}}, nil
}

func (f fakeAuth) GetDiscovery(ctx context.Context, in *authv1.GetDiscoveryRequest) (*authv1.Discovery, error) {
	f.record(ctx, "GetDiscovery", in)
	return &authv1.Discovery{Issuer: "http://127.0.0.1:8080"}, nil
}

func (f fakeAuth) Token(ctx context.Context, in *authv1.TokenRequest) (*authv1.TokenResponse, error) {
	f.record(ctx, "Token", in)
	if proto.Equal(in, &authv1.TokenRequest{}) {
		return nil, status.Error(codes.InvalidArgument, "no payload")
	}
	if in.GetGrantType() == "magic" {
		return nil, rpcerr.From(ctx, slog.New(slog.DiscardHandler), rpcerr.WithReason(rpcerr.New(rpcerr.ErrInvalid, "grant_type is not supported"), "unsupported_grant_type"))
	}
	if in.GetClientSecret() == "wrong" {
		return nil, rpcerr.From(ctx, slog.New(slog.DiscardHandler), rpcerr.WithReason(rpcerr.New(rpcerr.ErrUnauthenticated, "client authentication failed"), "invalid_client"))
	}
	return &authv1.TokenResponse{AccessToken: "at", IdToken: proto.String("it"), RefreshToken: proto.String("rt"), TokenType: "Bearer", ExpiresIn: 3600}, nil
}

func (f fakeAuth) SignRequest(ctx context.Context, in *authv1.SignRequestRequest) (*authv1.SignRequestResponse, error) {
	f.record(ctx, "SignRequest", in)
	return &authv1.SignRequestResponse{Code: "c", ExpirationDate: 1700000000, Algoritm: "SHA512withRSA", Algorithm: "SHA512withRSA", Exp: 1700000000}, nil
}

func (f fakeAuth) GetTokenInfo(ctx context.Context, in *authv1.GetTokenInfoRequest) (*authv1.TokenInfo, error) {
	f.record(ctx, "GetTokenInfo", in)
	return &authv1.TokenInfo{Subject: "42", Scope: []string{"openid"}, ExpirationDate: 1700000000}, nil
}

func (f fakeAuth) GetUserInfo(ctx context.Context, in *authv1.GetUserInfoRequest) (*authv1.UserInfo, error) {
	f.record(ctx, "GetUserInfo", in)
	return &authv1.UserInfo{RealName: "Ada", Email: "ada@example.org", Sub: "42", Name: "Ada"}, nil
}

func (f fakeAuth) SearchUsers(ctx context.Context, in *authv1.SearchUsersRequest) (*authv1.SearchUsersResponse, error) {
	f.record(ctx, "SearchUsers", in)
	return &authv1.SearchUsersResponse{Users: []*authv1.UserInfo{{RealName: "Ada"}}}, nil
}

func (f fakeAuth) Register(ctx context.Context, in *authv1.RegisterRequest) (*authv1.RegisterResponse, error) {
	f.record(ctx, "Register", in)
	return nil, status.Error(codes.AlreadyExists, "a user with this email address already exists")
}

func (f fakeAuth) Authorize(ctx context.Context, in *authv1.AuthorizeRequest) (*authv1.AuthorizeResponse, error) {
	f.record(ctx, "Authorize", in)
	if in.GetClientId() != "c1" {
		return nil, status.Error(codes.NotFound, "unknown client")
	}
	return &authv1.AuthorizeResponse{ClientName: "Client One", RedirectUri: "https://client.example/cb"}, nil
}

type fakeMDR struct {
	mdrv1.UnimplementedMdrServiceServer
	*recorder
}

func (f fakeMDR) ListNamespaces(ctx context.Context, in *mdrv1.ListNamespacesRequest) (*mdrv1.ListNamespacesResponse, error) {
	f.record(ctx, "ListNamespaces", in)
	return &mdrv1.ListNamespacesResponse{}, nil
}

// serve starts a gRPC server with register's services and the health
// service, on loopback.
func serve(t *testing.T, register func(*grpc.Server)) (*grpc.ClientConn, *health.Server) {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	register(srv)
	hs := health.NewServer()
	healthpb.RegisterHealthServer(srv, hs)
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	cc, err := rpcclient.Dial(lis.Addr().String(), forwardClientAddr()...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cc.Close() })
	return cc, hs
}

// stubVerifier accepts the tokens it knows.
type stubVerifier struct {
	ids   map[string]identity.Identity
	ready error
}

func (s stubVerifier) Verify(_ context.Context, tok string) (identity.Identity, error) {
	if id, ok := s.ids[tok]; ok {
		return id, nil
	}
	return identity.Identity{}, errors.New("bad token")
}

func (s stubVerifier) Ready(context.Context) error { return s.ready }

type env struct {
	h        http.Handler
	auth     *recorder
	mdr      *recorder
	authHS   *health.Server
	verifier *stubVerifier
}

func defaultConfig(t *testing.T, args ...string) Config {
	t.Helper()
	var cfg Config
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	cfg.RegisterFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return cfg
}

func newEnv(t *testing.T, withAuth bool, args ...string) *env {
	t.Helper()
	e := &env{auth: &recorder{}, mdr: &recorder{}, verifier: &stubVerifier{ids: map[string]identity.Identity{
		"good":    {Subject: "42", Client: "c1", Scopes: []string{"openid", "mdr:secret", identity.ScopeUserSearch, identity.ScopeResearcher}},
		"good-id": {Subject: "7"},
		"plain":   {Subject: "8", Scopes: []string{"openid"}},
	}}}
	var up Upstreams
	up.MDR, _ = serve(t, func(s *grpc.Server) { mdrv1.RegisterMdrServiceServer(s, fakeMDR{recorder: e.mdr}) })
	if withAuth {
		args = append([]string{"-auth-addr", "set-by-test"}, args...)
		up.Auth, e.authHS = serve(t, func(s *grpc.Server) { authv1.RegisterAuthServiceServer(s, fakeAuth{recorder: e.auth}) })
	}
	cfg := defaultConfig(t, append([]string{"-cors-origins", "https://app.example", "-insecure-plaintext"}, args...)...)
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	h, err := Handler(t.Context(), cfg, up, e.verifier, slog.New(slog.DiscardHandler), prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	e.h = h
	return e
}

func (e *env) do(t *testing.T, method, target, body string, headers ...string) *httptest.ResponseRecorder {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, target, r)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	rec := httptest.NewRecorder()
	e.h.ServeHTTP(rec, req)
	return rec
}

func jsonErr(t *testing.T, rec *httptest.ResponseRecorder, wantStatus int, wantCode string) string {
	t.Helper()
	if rec.Code != wantStatus {
		t.Fatalf("status %d, want %d: %s", rec.Code, wantStatus, rec.Body)
	}
	if ct := rec.Header().Get("Content-Type"); ct != "application/json; charset=utf-8" {
		t.Fatalf("Content-Type %q", ct)
	}
	var b struct{ Error, Error_description string }
	if err := json.Unmarshal(rec.Body.Bytes(), &b); err != nil {
		t.Fatalf("error body %q: %v", rec.Body, err)
	}
	if b.Error != wantCode {
		t.Fatalf("error %q, want %q (%s)", b.Error, wantCode, rec.Body)
	}
	return b.Error_description
}

// Every call carries the address the client connected from, for the
// services' audit log; headers claiming another address change nothing.
func TestClientAddrForwarded(t *testing.T) {
	e := newEnv(t, true)
	spoof := []string{"X-Forwarded-For", "203.0.113.66", "X-Fris-Client-Addr", "203.0.113.77", "Grpc-Metadata-X-Fris-Client-Addr", "203.0.113.88"}
	for _, tc := range []struct {
		path string
		rec  *recorder
	}{
		{"/v3/api/mdr/namespaces", e.mdr},
		{"/oauth2/userinfo", e.auth},
		{"/oauth2/clients", e.auth},
	} {
		rec := e.do(t, "GET", tc.path, "", append([]string{"Authorization", "Bearer good"}, spoof...)...)
		if rec.Code != 200 {
			t.Fatalf("%s: %d %s", tc.path, rec.Code, rec.Body)
		}
		// httptest's requests come from 192.0.2.1:1234.
		if got := tc.rec.last(t).md.Get(identity.KeyClientAddr); len(got) != 1 || got[0] != "192.0.2.1" {
			t.Fatalf("%s: client address metadata %v", tc.path, got)
		}
	}
}

// Group B: a verified token's scopes reach the registry (private
// namespaces), the raw token never does, and an invalid token is anonymous.
func TestRegistryIdentity(t *testing.T) {
	e := newEnv(t, true)
	rec := e.do(t, "GET", "/v3/api/mdr/namespaces", "", "Authorization", "Bearer good")
	if rec.Code != 200 || rec.Header().Get("X-Cache") != "" {
		t.Fatalf("%d %v", rec.Code, rec.Header())
	}
	c := e.mdr.last(t)
	if len(c.md.Get("authorization")) != 0 {
		t.Fatal("registry got the raw token")
	}
	if id := identity.FromIncoming(metadata.NewIncomingContext(context.Background(), c.md)); !id.HasScope("mdr:secret") {
		t.Fatalf("registry identity %+v", id)
	}
	e.do(t, "GET", "/v3/api/mdr/namespaces", "", "Authorization", "Bearer bad")
	c = e.mdr.last(t)
	if len(c.md.Get("authorization")) != 0 || len(c.md.Get(identity.KeySubject)) != 0 {
		t.Fatalf("invalid token forwarded: %v", c.md)
	}
}

// The gateway's /readyz is about the gateway: one service's outage (or
// missing signing keys) shows in /health/groups, never in /readyz.
func TestReadiness(t *testing.T) {
	e := newEnv(t, true)
	groups := func(t *testing.T, wantStatus int) map[string]GroupState {
		t.Helper()
		rec := e.do(t, "GET", GroupsPath, "")
		if rec.Code != wantStatus || rec.Header().Get("Content-Type") != "application/json; charset=utf-8" {
			t.Fatalf("%s = %d %q, want %d: %s", GroupsPath, rec.Code, rec.Header().Get("Content-Type"), wantStatus, rec.Body)
		}
		var rep GroupsReport
		if err := json.Unmarshal(rec.Body.Bytes(), &rep); err != nil {
			t.Fatal(err)
		}
		if rep.Up != (wantStatus == 200) {
			t.Fatalf("up = %v with status %d", rep.Up, wantStatus)
		}
		out := map[string]GroupState{}
		for _, g := range rep.Groups {
			out[g.Group+" "+g.Service] = g
		}
		return out
	}
	ready := func(t *testing.T) {
		t.Helper()
		if rec := e.do(t, "GET", "/readyz", ""); rec.Code != 200 {
			t.Fatalf("/readyz = %d %s", rec.Code, rec.Body)
		}
	}
	for _, tc := range []struct {
		name   string
		break_ func()
		status int
		want   map[string]string // group -> state
		reason string
	}{
		{"all up", func() {}, 200, map[string]string{"A auth": "up", "B mdr": "up", "C upload": "off", "D broker": "off"}, ""},
		{"no signing keys", func() { e.verifier.ready = errors.New("no keys") }, 503,
			map[string]string{"A auth": "down", "B mdr": "up"}, "signing keys not loaded"},
		{"auth not serving", func() {
			e.verifier.ready = nil
			e.authHS.SetServingStatus("", healthpb.HealthCheckResponse_NOT_SERVING)
		}, 503, map[string]string{"A auth": "down", "B mdr": "up"}, "not serving (its store does not answer)"},
		{"auth back", func() { e.authHS.SetServingStatus("", healthpb.HealthCheckResponse_SERVING) }, 200,
			map[string]string{"A auth": "up", "B mdr": "up"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.break_()
			ready(t)
			got := groups(t, tc.status)
			for g, state := range tc.want {
				if got[g].State != state {
					t.Errorf("%s: %+v, want %s", g, got[g], state)
				}
			}
			if tc.reason != "" && got["A auth"].Reason != tc.reason {
				t.Errorf("reason %q, want %q", got["A auth"].Reason, tc.reason)
			}
		})
	}
}

func TestReadinessDuringShutdown(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var up Upstreams
	up.MDR, _ = serve(t, func(s *grpc.Server) { mdrv1.RegisterMdrServiceServer(s, fakeMDR{recorder: &recorder{}}) })
	h, err := Handler(ctx, defaultConfig(t), up, nil, slog.New(slog.DiscardHandler), prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/readyz", nil))
	if rec.Code != 503 {
		t.Fatalf("/readyz while shutting down = %d %s", rec.Code, rec.Body)
	}
}

func TestConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		args []string
		ok   bool
	}{
		{nil, true},
		{[]string{"-auth-addr", "127.0.0.1:9101"}, true},
		{[]string{"-jwks-url", ""}, true},
		{[]string{"-issuer", ""}, true},
		{[]string{"-auth-prefix", "oauth2"}, false},
		{[]string{"-auth-prefix", "/"}, false},
		{[]string{"-auth-prefix", "/v3/api/mdr/"}, false},
		{[]string{"-jwks-url", "127.0.0.1:9201/jwks"}, false},
		{[]string{"-jwks-url", "ftp://x/jwks"}, false},
		{[]string{"-token-skew", "-1s"}, false},
		{[]string{"-token-skew", "1h"}, false},
		{[]string{"-jwks-refresh", "0s"}, false},
		{[]string{"-jwks-min-refresh", "0s"}, false},
		{[]string{"-jwks-min-refresh", "1m"}, false},
		{[]string{"-revocation-fail-closed"}, true},
		{[]string{"-revocation-fail-closed", "-revocation-max-stale", "10s"}, true},
		{[]string{"-revocation-fail-closed", "-revocation-max-stale", "1s"}, false},
		{[]string{"-revocation-fail-closed", "-revocation-max-stale", "2h"}, false},
		{[]string{"-revocation-fail-closed", "-revocations-url", "off"}, false},
		{[]string{"-revocation-fail-closed", "-jwks-url", ""}, false},
		{[]string{"-revocation-poll", "1m"}, true},
		{[]string{"-upload-prefix", "/explorer"}, false},
		{[]string{"-mdr-prefix", "/explorer/mdr"}, false},
		{[]string{"-broker-prefix", "/explorers"}, true},
		{[]string{"-explorer-client-id", "fris-explorer"}, false},
		{[]string{"-explorer-client-secret-file", "s"}, false},
		{[]string{"-explorer-client-id", "fris-explorer", "-explorer-client-secret-file", "s"}, true},
		{[]string{"-explorer-url", "https://fris.example.org"}, true},
		{[]string{"-explorer-url", "https://fris.example.org/"}, true},
		{[]string{"-explorer-url", "https://fris.example.org/app"}, false},
		{[]string{"-explorer-url", "fris.example.org"}, false},
		{[]string{"-explorer-sessions", "0"}, false},
		{[]string{"-max-conns", "0"}, true},
		{[]string{"-max-conns", "-1"}, false},
		{[]string{"-idle-timeout", "0s"}, false},
		{[]string{"-read-header-timeout", "10m"}, false},
		{[]string{"-write-timeout", "1m"}, false},
		{[]string{"-read-timeout", "30s", "-write-timeout", "1m"}, true},
		{[]string{"-max-conns-per-addr", "0", "-max-inflight-per-addr", "0", "-min-body-rate", "0", "-body-memory", "0"}, true},
		{[]string{"-max-conns-per-addr", "-1"}, false},
		{[]string{"-max-inflight-per-addr", "-1"}, false},
		{[]string{"-min-body-rate", "-1"}, false},
		{[]string{"-body-rate-window", "500ms"}, false},
		{[]string{"-body-rate-window", "6m"}, false},
		{[]string{"-min-body-rate", "0", "-body-rate-window", "0s"}, true},
		{[]string{"-body-memory", "1048576"}, false},
		{[]string{"-body-memory", "-1"}, false},
		{[]string{"-body-memory", "1048576", "-max-body", "1048576"}, true},
		// The cases above run with -insecure-plaintext; TLS is secure by default.
		{[]string{"-insecure-plaintext=false"}, false},
		{[]string{"-insecure-plaintext=false", "-tls-cert", "g.pem", "-tls-key", "g-key.pem", "-tls-ca", "ca.pem"}, true},
	} {
		cfg := defaultConfig(t, append([]string{"-insecure-plaintext"}, tc.args...)...)
		if err := cfg.Validate(); (err == nil) != tc.ok {
			t.Errorf("%v: %v", tc.args, err)
		}
	}
	cfg := defaultConfig(t)
	if cfg.MaxConns != 4096 || cfg.IdleTimeout != 30*time.Second || cfg.WriteTimeout < cfg.ReadTimeout+cfg.UpstreamTimeout {
		t.Fatalf("connection defaults %+v", cfg)
	}
	// The slowest link FRIS serves (-max-body within -read-timeout, ~35 KB/s)
	// keeps the minimum body pace with room to spare.
	if slowest := cfg.MaxBody / int64(cfg.ReadTimeout/time.Second); cfg.MinBodyRate <= 0 || cfg.MinBodyRate*4 > slowest ||
		cfg.MaxConnsPerAddr <= 0 || cfg.MaxInFlightPerAddr <= 0 || cfg.BodyMemory < 16*cfg.MaxBody || cfg.ReadHeaderTimeout > 5*time.Second {
		t.Fatalf("per-address and body defaults %+v", cfg)
	}
	if cfg.AuthAddr != "" || cfg.AuthPrefix != "/oauth2" || cfg.JWKSURL != "http://127.0.0.1:9201/jwks" || cfg.Issuer != "http://127.0.0.1:8080" {
		t.Fatalf("defaults %+v", cfg)
	}
}

func TestGroupCDisabled(t *testing.T) {
	e := newEnv(t, false)
	for _, tc := range []struct{ method, path string }{
		{"GET", "/dktk/sites/charite_teiler/t1/uploadStats"}, {"PUT", "/dktk/sites/charite/teiler/t1/pats/p1"},
		{"DELETE", "/dktk/sites/charite_teiler/t1/patsPrefix/TEST"},
	} {
		rec := e.do(t, tc.method, tc.path, "")
		if rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Content-Type") != "text/plain; charset=utf-8" ||
			!strings.Contains(rec.Body.String(), "not configured") {
			t.Fatalf("%s %s without upload: %d %q %s", tc.method, tc.path, rec.Code, rec.Header().Get("Content-Type"), rec.Body)
		}
	}
}
