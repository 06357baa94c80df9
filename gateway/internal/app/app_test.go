package app

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
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
}

func (r *recorder) record(ctx context.Context, method string, req proto.Message) {
	md, _ := metadata.FromIncomingContext(ctx)
	r.mu.Lock()
	r.calls = append(r.calls, call{method, proto.Clone(req), md.Copy()})
	r.mu.Unlock()
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
	return &authv1.JWKS{Keys: []*authv1.JWK{{Kty: "RSA", Kid: "k1", Alg: "RS256"}}}, nil
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

func TestGroupADisabled(t *testing.T) {
	e := newEnv(t, false)
	for _, tc := range []struct{ method, path string }{
		{"GET", "/oauth2/clients"}, {"POST", "/oauth2/token"}, {"GET", "/oauth2/tokeninfo"},
		{"GET", "/oauth2/authorize?client_id=c1"}, {"POST", "/oauth2/authorize"}, {"GET", "/.well-known/openid-configuration"},
	} {
		jsonErr(t, e.do(t, tc.method, tc.path, ""), http.StatusServiceUnavailable, "temporarily_unavailable")
	}
	if rec := e.do(t, "GET", "/readyz", ""); rec.Code != 200 {
		t.Fatalf("readyz without auth: %d %s", rec.Code, rec.Body)
	}
	// Group B still works.
	if rec := e.do(t, "GET", "/v3/api/mdr/namespaces", ""); rec.Code != 200 {
		t.Fatalf("mdr: %d %s", rec.Code, rec.Body)
	}
}

func TestGroupAPublicRoutes(t *testing.T) {
	e := newEnv(t, true)
	for _, tc := range []struct {
		path, method string
		wantJSON     string
	}{
		{"/oauth2/clients", "ListClients", `[{"clientId":"c1","name":"Client","description":"","redirectUrl":"","type":"MDR"}]`},
		{"/oauth2/certs", "ListCerts", `[{"keyType":"RSA","use":"","keyId":"k1","n":"","e":"","derFormat":"","base64DerFormat":""}]`},
		{"/oauth2/jwks", "GetJWKS", `{"keys":[{"kty":"RSA","use":"","kid":"k1","alg":"RS256","n":"","e":""}]}`},
		{"/.well-known/openid-configuration", "GetDiscovery", ""},
		// Where the Samply auth client looks for it.
		{"/oauth2/.well-known/openid-configuration", "GetDiscovery", ""},
	} {
		// A token, even a valid one, is ignored: not verified, not forwarded.
		rec := e.do(t, "GET", tc.path, "", "Authorization", "Bearer good", "X-Fris-Subject", "1", "Grpc-Metadata-Authorization", "Bearer x")
		if rec.Code != 200 {
			t.Fatalf("%s: %d %s", tc.path, rec.Code, rec.Body)
		}
		if tc.wantJSON != "" {
			jsonEqual(t, rec.Body.String(), tc.wantJSON)
		}
		c := e.auth.last(t)
		if c.method != tc.method {
			t.Fatalf("%s called %s", tc.path, c.method)
		}
		for _, k := range []string{"authorization", identity.KeySubject, identity.KeyScope, "grpcgateway-authorization"} {
			if v := c.md.Get(k); len(v) > 0 {
				t.Fatalf("%s: public route forwarded %s=%v", tc.path, k, v)
			}
		}
		if len(c.md.Get("x-request-id")) != 1 {
			t.Fatalf("%s: no request id", tc.path)
		}
		if rec.Header().Get("Access-Control-Allow-Origin") != "" {
			t.Fatal("CORS header without Origin")
		}
	}
	// (net/http drops the body of HEAD responses; the recorder keeps it.)
	if rec := e.do(t, "HEAD", "/oauth2/clients", ""); rec.Code != 200 {
		t.Fatalf("HEAD: %d %q", rec.Code, rec.Body)
	}
	rec := e.do(t, "GET", "/oauth2/clients", "", "Origin", "https://app.example")
	if rec.Header().Get("Access-Control-Allow-Origin") != "https://app.example" {
		t.Fatalf("CORS: %v", rec.Header())
	}
}

// basicCred is client_secret_basic's credential: each part form-urlencoded
// (RFC 6749 2.3.1), then base64.
func basicCred(id, secret string) string {
	return base64.StdEncoding.EncodeToString([]byte(url.QueryEscape(id) + ":" + url.QueryEscape(secret)))
}

func jsonEqual(t *testing.T, got, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal([]byte(got), &g); err != nil {
		t.Fatalf("got %q: %v", got, err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatal(err)
	}
	gb, _ := json.Marshal(g)
	wb, _ := json.Marshal(w)
	if string(gb) != string(wb) {
		t.Fatalf("got %s\nwant %s", gb, wb)
	}
}

func TestGroupARouting(t *testing.T) {
	e := newEnv(t, true)
	jsonErr(t, e.do(t, "GET", "/oauth2/nope", ""), 404, "not_found")
	for _, tc := range []struct{ method, path, allow string }{
		{"PUT", "/oauth2/token", "POST"},
		{"GET", "/oauth2/token", "POST"},
		{"GET", "/oauth2/access_token", "POST"},
		{"DELETE", "/oauth2/clients", "GET, HEAD"},
		{"POST", "/oauth2/tokeninfo", "GET, HEAD"},
		{"PUT", "/oauth2/authorize", "GET, HEAD, POST"},
		{"POST", "/.well-known/openid-configuration", "GET, HEAD"},
	} {
		rec := e.do(t, tc.method, tc.path, "")
		jsonErr(t, rec, 405, "method_not_allowed")
		if got := rec.Header().Get("Allow"); got != tc.allow {
			t.Errorf("%s %s: Allow %q, want %q", tc.method, tc.path, got, tc.allow)
		}
	}
}

func TestAuthPrefix(t *testing.T) {
	e := newEnv(t, true, "-auth-prefix", "/auth/")
	if rec := e.do(t, "GET", "/auth/clients", ""); rec.Code != 200 {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
	if rec := e.do(t, "POST", "/auth/access_token", `{"refresh_token":"r"}`); rec.Code != 200 {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
	jsonErr(t, e.do(t, "GET", "/oauth2/clients", ""), 404, "not_found")
	if rec := e.do(t, "GET", "/auth/clients", ""); rec.Code != 200 || len(e.auth.last(t).md.Get(identity.KeyAuthPrefix)) != 0 {
		t.Fatalf("the prefix goes with discovery calls only: %d %v", rec.Code, e.auth.last(t).md)
	}
	if rec := e.do(t, "GET", "/.well-known/openid-configuration", ""); rec.Code != 200 {
		t.Fatalf("discovery: %d", rec.Code)
	}
	// The auth service names its endpoints under the prefix the gateway sends.
	if got := e.auth.last(t).md.Get(identity.KeyAuthPrefix); len(got) != 1 || got[0] != "/auth" {
		t.Fatalf("discovery call metadata %s = %q, want [/auth]", identity.KeyAuthPrefix, got)
	}
	rec := e.do(t, "GET", "/auth/authorize?client_id=c1", "")
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), `action="/auth/authorize"`) || !strings.Contains(rec.Header().Get("Set-Cookie"), "Path=/auth;") {
		t.Fatalf("login under /auth: %d %v %s", rec.Code, rec.Header(), rec.Body)
	}
}

func TestTokenBodies(t *testing.T) {
	e := newEnv(t, true, "-max-body", "1024")
	full := &authv1.TokenRequest{Code: "c d", ClientId: "cid", ClientSecret: "s+/=", Signature: "sig", RefreshToken: "", CodeVerifier: "v", RedirectUri: "https://x/cb?a=1", GrantType: "authorization_code"}
	form := url.Values{"code": {"c d"}, "client_id": {"cid"}, "client_secret": {"s+/="}, "signature": {"sig"}, "code_verifier": {"v"},
		"redirect_uri": {"https://x/cb?a=1"}, "grant_type": {"authorization_code"}, "unknown": {"x"}}.Encode()
	for _, tc := range []struct {
		name, path, ct, body string
		want                 *authv1.TokenRequest
	}{
		{"json", "/oauth2/token", "application/json", `{"code":"c d","client_id":"cid","client_secret":"s+/=","signature":"sig","code_verifier":"v","redirect_uri":"https://x/cb?a=1","grant_type":"authorization_code","extra":1}`, full},
		{"json charset", "/oauth2/token", "application/json; charset=ISO-8859-1", `{"refresh_token":"r"}`, &authv1.TokenRequest{RefreshToken: "r"}},
		{"json camelCase", "/oauth2/token", "application/json", `{"refreshToken":"r"}`, &authv1.TokenRequest{RefreshToken: "r"}},
		{"no content type", "/oauth2/token", "", `{"refresh_token":"r"}`, &authv1.TokenRequest{RefreshToken: "r"}},
		{"form", "/oauth2/token", "application/x-www-form-urlencoded", form, full},
		{"form alias", "/oauth2/access_token", "application/x-www-form-urlencoded; charset=UTF-8", "refresh_token=r&grant_type=refresh_token", &authv1.TokenRequest{RefreshToken: "r", GrantType: "refresh_token"}},
		// client_secret_basic: id and secret form-urlencoded inside Basic
		// (RFC 6749 2.3.1), moved into the request the service reads.
		{"basic with form", "/oauth2/token", "application/x-www-form-urlencoded", "grant_type=refresh_token&refresh_token=r",
			&authv1.TokenRequest{RefreshToken: "r", GrantType: "refresh_token", ClientId: "c id", ClientSecret: "s+/=:x"}},
		{"basic with json", "/oauth2/access_token", "application/json", `{"code":"c","client_id":"c id"}`,
			&authv1.TokenRequest{Code: "c", ClientId: "c id", ClientSecret: "s+/=:x"}},
		{"basic alone", "/oauth2/token", "application/x-www-form-urlencoded", "grant_type=client_credentials",
			&authv1.TokenRequest{GrantType: "client_credentials", ClientId: "c id", ClientSecret: "s+/=:x"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var h []string
			if tc.ct != "" {
				h = []string{"Content-Type", tc.ct}
			}
			if strings.HasPrefix(tc.name, "basic") {
				h = append(h, "Authorization", "Basic "+basicCred("c id", "s+/=:x"))
			}
			rec := e.do(t, "POST", tc.path, tc.body, h...)
			if rec.Code != 200 {
				t.Fatalf("%d %s", rec.Code, rec.Body)
			}
			jsonEqual(t, rec.Body.String(), `{"access_token":"at","id_token":"it","refresh_token":"rt","token_type":"Bearer","expires_in":3600}`)
			if rec.Header().Get("Cache-Control") != "no-store" || rec.Header().Get("Pragma") != "no-cache" {
				t.Fatalf("cache headers: %v", rec.Header())
			}
			if got := e.auth.last(t).req; !proto.Equal(got, tc.want) {
				t.Fatalf("service got %v, want %v", got, tc.want)
			}
		})
	}

	// Errors.
	n := e.auth.count()
	for _, tc := range []struct {
		name, authz, body string
		code              int
		errCode           string
	}{
		{"basic not base64", "Basic %%%", `{"code":"c"}`, 401, "invalid_client"},
		{"basic without colon", "Basic " + base64.StdEncoding.EncodeToString([]byte("cid")), `{"code":"c"}`, 401, "invalid_client"},
		{"basic bad escape", "Basic " + base64.StdEncoding.EncodeToString([]byte("c%zz:s")), `{"code":"c"}`, 401, "invalid_client"},
		{"basic empty id", "Basic " + base64.StdEncoding.EncodeToString([]byte(":s")), `{"code":"c"}`, 401, "invalid_client"},
		{"basic and body disagree", "Basic " + basicCred("cid", "s"), `{"code":"c","client_id":"other"}`, 400, "invalid_request"},
		{"basic and body secrets disagree", "Basic " + basicCred("cid", "s"), `{"code":"c","client_secret":"t"}`, 400, "invalid_request"},
	} {
		rec := e.do(t, "POST", "/oauth2/token", tc.body, "Content-Type", "application/json", "Authorization", tc.authz)
		jsonErr(t, rec, tc.code, tc.errCode)
		if tc.code == 401 && rec.Header().Get("WWW-Authenticate") != `Basic realm="fris"` {
			t.Fatalf("%s: WWW-Authenticate %q", tc.name, rec.Header().Get("WWW-Authenticate"))
		}
	}
	jsonErr(t, e.do(t, "POST", "/oauth2/token", `{"code":`, "Content-Type", "application/json"), 400, "invalid_request")
	jsonErr(t, e.do(t, "POST", "/oauth2/token", `code=x`, "Content-Type", "text/plain"), 415, "unsupported_media_type")
	jsonErr(t, e.do(t, "POST", "/oauth2/token", `code=x`, "Content-Type", "multipart/form-data; boundary=x"), 415, "unsupported_media_type")
	jsonErr(t, e.do(t, "POST", "/oauth2/token", `code=x`, "Content-Type", "application/json;;"), 415, "unsupported_media_type")
	jsonErr(t, e.do(t, "POST", "/oauth2/sign_request", `keyId=1`, "Content-Type", "application/x-www-form-urlencoded"), 415, "unsupported_media_type")
	jsonErr(t, e.do(t, "POST", "/oauth2/register", `x`, "Content-Type", "application/xml"), 415, "unsupported_media_type")
	jsonErr(t, e.do(t, "POST", "/oauth2/token", `code=a&code=b`, "Content-Type", "application/x-www-form-urlencoded"), 400, "invalid_request")
	jsonErr(t, e.do(t, "POST", "/oauth2/token", `code=%zz`, "Content-Type", "application/x-www-form-urlencoded"), 400, "invalid_request")
	if e.auth.count() != n {
		t.Fatal("a refused body reached the service")
	}
	// The service's OAuth error codes reach the body.
	jsonErr(t, e.do(t, "POST", "/oauth2/token", `grant_type=magic`, "Content-Type", "application/x-www-form-urlencoded"), 400, "unsupported_grant_type")
	rec401 := e.do(t, "POST", "/oauth2/token", `grant_type=client_credentials`, "Content-Type", "application/x-www-form-urlencoded", "Authorization", "Basic "+basicCred("cid", "wrong"))
	jsonErr(t, rec401, 401, "invalid_client")
	if rec401.Header().Get("WWW-Authenticate") != `Basic realm="fris"` {
		t.Fatalf("invalid_client without a Basic challenge: %v", rec401.Header())
	}
	// Too large, without a Content-Length (chunked).
	req := httptest.NewRequest("POST", "/oauth2/token", io.MultiReader(strings.NewReader(`{"code":"`), strings.NewReader(strings.Repeat("x", 2048)+`"}`)))
	req.ContentLength = -1
	rec := httptest.NewRecorder()
	e.h.ServeHTTP(rec, req)
	jsonErr(t, rec, 413, "too_large")

	// An empty body, JSON or form, reaches the service, which refuses it.
	for _, ct := range []string{"", "application/json", "application/x-www-form-urlencoded"} {
		var h []string
		if ct != "" {
			h = []string{"Content-Type", ct}
		}
		if d := jsonErr(t, e.do(t, "POST", "/oauth2/token", "", h...), 400, "invalid_request"); d != "no payload" {
			t.Fatalf("empty body with %q: %q", ct, d)
		}
	}
}

func TestOtherPostRoutes(t *testing.T) {
	e := newEnv(t, true)
	for _, path := range []string{"/oauth2/sign_request", "/oauth2/signRequest"} {
		rec := e.do(t, "POST", path, `{"key_id":7,"sha512Hash":"ab"}`, "Content-Type", "application/json")
		if rec.Code != 200 || rec.Header().Get("Cache-Control") != "no-store" {
			t.Fatalf("%s: %d %v %s", path, rec.Code, rec.Header(), rec.Body)
		}
		jsonEqual(t, rec.Body.String(), `{"code":"c","expirationDate":1700000000,"algoritm":"SHA512withRSA","algorithm":"SHA512withRSA","exp":1700000000}`)
		if got := e.auth.last(t).req.(*authv1.SignRequestRequest); got.GetKeyIdAlias() != 7 || got.GetSha512Hash() != "ab" {
			t.Fatalf("service got %v", got)
		}
	}
	rec := e.do(t, "POST", "/oauth2/register", `{"email":"a@b.c","base64EncodedPublicKey":"x"}`)
	jsonErr(t, rec, 409, "conflict")
	if rec.Header().Get("Cache-Control") != "no-store" {
		t.Fatal("register without no-store")
	}
	// CORS preflight for a JSON POST from a configured origin.
	rec = e.do(t, "OPTIONS", "/oauth2/token", "", "Origin", "https://app.example", "Access-Control-Request-Method", "POST", "Access-Control-Request-Headers", "content-type")
	if rec.Header().Get("Access-Control-Allow-Origin") != "https://app.example" || !strings.Contains(strings.ToLower(rec.Header().Get("Access-Control-Allow-Headers")), "content-type") {
		t.Fatalf("preflight: %d %v", rec.Code, rec.Header())
	}
	rec = e.do(t, "OPTIONS", "/oauth2/token", "", "Origin", "https://evil.example", "Access-Control-Request-Method", "POST")
	if rec.Header().Get("Access-Control-Allow-Origin") != "" {
		t.Fatal("preflight allowed an unconfigured origin")
	}
	// A researcher's web app edits an inquiry with PUT.
	rec = e.do(t, "OPTIONS", "/broker/rest/searchbroker/researcher/inquiries/1", "", "Origin", "https://app.example",
		"Access-Control-Request-Method", "PUT", "Access-Control-Request-Headers", "authorization, content-type")
	if rec.Header().Get("Access-Control-Allow-Origin") != "https://app.example" || !strings.Contains(rec.Header().Get("Access-Control-Allow-Methods"), "PUT") {
		t.Fatalf("PUT preflight: %d %v", rec.Code, rec.Header())
	}
}

func TestBearerRoutes(t *testing.T) {
	e := newEnv(t, true)
	for _, path := range []string{"/oauth2/tokeninfo", "/oauth2/userinfo", "/oauth2/users/search?query=ad"} {
		n := e.auth.count()
		for _, tc := range []struct{ header, challenge string }{
			{"", `Bearer`},
			{"Bearer null", `Bearer`},
			{"Basic Zm9vOmJhcg==", `Bearer`},
			{"Bearer bad", `Bearer error="invalid_token"`},
		} {
			var h []string
			if tc.header != "" {
				h = []string{"Authorization", tc.header}
			}
			rec := e.do(t, "GET", path, "", h...)
			jsonErr(t, rec, 403, "access_denied")
			if got := rec.Header().Get("WWW-Authenticate"); got != tc.challenge {
				t.Fatalf("%s with %q: WWW-Authenticate %q", path, tc.header, got)
			}
		}
		if e.auth.count() != n {
			t.Fatalf("%s: refused request reached the service", path)
		}
		rec := e.do(t, "GET", path, "", "Authorization", "bearer  good ", "X-Fris-Subject", "1", "X-Fris-Scope", "mdr:*")
		if rec.Code != 200 {
			t.Fatalf("%s: %d %s", path, rec.Code, rec.Body)
		}
		if rec.Header().Get("Cache-Control") != "no-store" || rec.Header().Get("ETag") != "" {
			t.Fatalf("%s: cache headers %v", path, rec.Header())
		}
		c := e.auth.last(t)
		if got := c.md.Get("authorization"); len(got) != 1 || got[0] != "Bearer good" {
			t.Fatalf("%s: authorization metadata %v", path, got)
		}
		id := identity.FromIncoming(metadata.NewIncomingContext(context.Background(), c.md))
		if id.Subject != "42" || id.Client != "c1" || !id.HasScope("mdr:secret") || id.HasScope("mdr:*") {
			t.Fatalf("%s: identity %+v", path, id)
		}
	}
	if got := e.auth.last(t).req.(*authv1.SearchUsersRequest).GetQuery(); got != "ad" {
		t.Fatalf("query %q", got)
	}
	rec := e.do(t, "GET", "/oauth2/userinfo", "", "Authorization", "Bearer good")
	jsonEqual(t, rec.Body.String(), `{"real_name":"Ada","contact_information":"","locality":null,"email":"ada@example.org","email_verified":false,"sub":"42","name":"Ada"}`)
}

// users/search lists names and addresses: a valid token without the scope
// is refused before the service is called, with the RFC 6750 challenge.
func TestUserSearchNeedsScope(t *testing.T) {
	e := newEnv(t, true)
	n := e.auth.count()
	rec := e.do(t, "GET", "/oauth2/users/search?query=@", "", "Authorization", "Bearer plain")
	jsonErr(t, rec, 403, "insufficient_scope")
	if got, want := rec.Header().Get("WWW-Authenticate"), `Bearer error="insufficient_scope", scope="users:search"`; got != want {
		t.Fatalf("WWW-Authenticate %q, want %q", got, want)
	}
	if e.auth.count() != n {
		t.Fatal("refused request reached the service")
	}
	// The other bearer routes need no role.
	if rec := e.do(t, "GET", "/oauth2/userinfo", "", "Authorization", "Bearer plain"); rec.Code != 200 {
		t.Fatalf("userinfo: %d %s", rec.Code, rec.Body)
	}
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

func TestLoginPageThroughGateway(t *testing.T) {
	e := newEnv(t, true)
	rec := e.do(t, "GET", "/oauth2/authorize?client_id=c1&state=s&response_type=code", "", "Origin", "https://app.example")
	if rec.Code != 200 || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/html") {
		t.Fatalf("%d %v", rec.Code, rec.Header())
	}
	h := rec.Header()
	if h.Get("ETag") != "" || h.Get("Access-Control-Allow-Origin") != "" || h.Get("Cache-Control") != "no-store" || h.Get("X-Frame-Options") != "DENY" {
		t.Fatalf("headers %v", h)
	}
	if !strings.Contains(h.Get("Content-Security-Policy"), "form-action 'self' https://client.example;") {
		t.Fatalf("CSP %q", h.Get("Content-Security-Policy"))
	}
	rec = e.do(t, "GET", "/oauth2/authorize?client_id=nope", "")
	if rec.Code != 404 || !strings.Contains(rec.Body.String(), "Unknown client.") {
		t.Fatalf("%d %s", rec.Code, rec.Body)
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
