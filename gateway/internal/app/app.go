// Package app wires the gateway: config -> upstream connections -> HTTP
// server.
package app

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/rs/cors"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"golang.org/x/sync/errgroup"
	"google.golang.org/grpc"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/encoding/protojson"

	"fris.dev/gateway/internal/apierr"
	"fris.dev/gateway/internal/authn"
	"fris.dev/gateway/internal/clientaddr"
	"fris.dev/gateway/internal/explorer"
	"fris.dev/gateway/internal/httpx"
	"fris.dev/gateway/internal/login"
	"fris.dev/gateway/internal/respcache"
	"fris.dev/gateway/internal/routes"
	"fris.dev/pkg/identity"
	"fris.dev/pkg/mtls"
	"fris.dev/pkg/rpcclient"
	"fris.dev/pkg/server"
	"fris.dev/pkg/telemetry"
	authv1 "fris.dev/proto/auth/v1"
	brokerv1 "fris.dev/proto/broker/v1"
	mdrv1 "fris.dev/proto/mdr/v1"
	uploadv1 "fris.dev/proto/upload/v1"
)

// Config is everything the gateway reads from flags and FRIS_GATEWAY_*.
type Config struct {
	Addr           string
	MDRAddr        string
	MDRPrefix      string
	AuthAddr       string
	AuthPrefix     string
	UploadAddr     string
	UploadPrefix   string
	BrokerAddr     string
	BrokerPrefix   string
	JWKSURL        string
	Issuer         string
	TokenSkew      time.Duration
	JWKSRefresh    time.Duration
	JWKSMinRefresh time.Duration
	RevocationsURL string
	RevocationPoll time.Duration
	CORSOrigins    string
	MaxBody        int64
	// MaxAuthBody bounds the bodies of group A's POST routes (register,
	// token, the login form...), which are small (docs/security.md,
	// "Input limits").
	MaxAuthBody int64
	// MaxPathSegment bounds each path segment (400 beyond).
	MaxPathSegment int
	// TrustedProxies may tell the client's address in X-Forwarded-For
	// (comma-separated CIDR prefixes; empty: nobody).
	TrustedProxies  string
	LogLevel        string
	ShutdownTimeout time.Duration
	UpstreamTimeout time.Duration
	MDRCacheTTL     time.Duration
	MDRCacheSize    int
	GCPercent       int

	// Connection limits of the public port (docs/security.md, "Limits").
	MaxConns          int
	ReadHeaderTimeout time.Duration
	ReadTimeout       time.Duration
	WriteTimeout      time.Duration
	IdleTimeout       time.Duration

	// The Explorer's OAuth client (docs/decisions.md, "Explorer"): without
	// an id and secret its sign-in says it is not configured.
	ExplorerClientID         string
	ExplorerClientSecretFile string
	ExplorerURL              string
	ExplorerSessions         int

	// TLS is the gateway's side of the services' mutual TLS: its
	// certificate ("gateway", the one peer whose identity metadata the
	// services believe) and the deployment's CA.
	TLS mtls.Config
}

// RegisterFlags adds the gateway's flags to fs.
func (c *Config) RegisterFlags(fs *flag.FlagSet) {
	fs.StringVar(&c.Addr, "addr", "127.0.0.1:8080", "HTTP listen address")
	fs.StringVar(&c.MDRAddr, "mdr-addr", "127.0.0.1:9102", "gRPC address of the mdr service")
	fs.StringVar(&c.MDRPrefix, "mdr-prefix", routes.CanonicalMDRPrefix, "path prefix of the metadata registry (group B)")
	fs.StringVar(&c.AuthAddr, "auth-addr", "", "gRPC address of the auth service, e.g. 127.0.0.1:9101 (empty: group A answers 503)")
	fs.StringVar(&c.AuthPrefix, "auth-prefix", routes.CanonicalAuthPrefix, "path prefix of the identity provider (group A)")
	fs.StringVar(&c.UploadAddr, "upload-addr", "", "gRPC address of the upload service, e.g. 127.0.0.1:9103 (empty: group C answers 503)")
	fs.StringVar(&c.UploadPrefix, "upload-prefix", "/dktk", "path prefix of the central upload (group C)")
	fs.StringVar(&c.BrokerAddr, "broker-addr", "", "gRPC address of the broker service, e.g. 127.0.0.1:9104 (empty: group D answers 503)")
	fs.StringVar(&c.BrokerPrefix, "broker-prefix", "/broker/rest", "path prefix of the search broker (group D); its API lives under <prefix>/searchbroker, its health check at <prefix>/health")
	fs.StringVar(&c.JWKSURL, "jwks-url", "http://127.0.0.1:9201/jwks", "JWK Set of the auth service's signing keys (empty: no bearer token is ever accepted)")
	fs.StringVar(&c.Issuer, "issuer", "http://127.0.0.1:8080", "required iss of access tokens (empty: not checked)")
	fs.DurationVar(&c.TokenSkew, "token-skew", 30*time.Second, "clock skew tolerated on token exp, nbf and iat")
	fs.DurationVar(&c.JWKSRefresh, "jwks-refresh", 15*time.Minute, "how often the signing keys are fetched in the background")
	fs.StringVar(&c.RevocationsURL, "revocations-url", "", "the auth service's revocation list, polled so revoked tokens are refused (empty: -jwks-url with /jwks replaced by /revocations; \"off\": no revocation checks)")
	fs.DurationVar(&c.RevocationPoll, "revocation-poll", time.Second, "how often the revocation list is polled: the longest a revoked access token is still accepted")
	fs.DurationVar(&c.JWKSMinRefresh, "jwks-min-refresh", 2*time.Second, "least time between fetches of the signing keys caused by tokens with an unknown kid (such tokens wait for the next allowed fetch; at most 30s)")
	fs.StringVar(&c.CORSOrigins, "cors-origins", "*", "comma-separated origins allowed by CORS on the JSON groups (* for any)")
	fs.Int64Var(&c.MaxBody, "max-body", 10<<20, "largest request body accepted, in bytes")
	fs.Int64Var(&c.MaxAuthBody, "max-auth-body", 64<<10, "largest body of the identity provider's POST routes (register, token, sign request, revoke, introspect, the login form), in bytes")
	// A patient id may have 512 bytes (the upload service's limit), the
	// longest id any path carries.
	fs.IntVar(&c.MaxPathSegment, "max-path-segment", 512, "longest path segment accepted (decoded), in bytes; longer is 400")
	fs.StringVar(&c.TrustedProxies, "trusted-proxies", "", "comma-separated CIDR prefixes of reverse proxies whose X-Forwarded-For names the client's address (empty: the connection's address is the client's, the header is ignored)")
	fs.StringVar(&c.LogLevel, "log-level", "info", "debug, info, warn or error")
	fs.DurationVar(&c.ShutdownTimeout, "shutdown-timeout", 15*time.Second, "how long in-flight requests may finish on shutdown")
	fs.DurationVar(&c.UpstreamTimeout, "upstream-timeout", 30*time.Second, "deadline of one call to a service")
	fs.DurationVar(&c.MDRCacheTTL, "mdr-cache-ttl", time.Second, "how long anonymous registry responses are reused (0: no cache)")
	fs.IntVar(&c.MDRCacheSize, "mdr-cache-size", 4096, "most registry responses kept in the cache")
	fs.IntVar(&c.GCPercent, "gogc", server.DefaultGCPercent, "garbage collector target percentage, as GOGC (an explicit GOGC environment variable wins)")
	fs.IntVar(&c.MaxConns, "max-conns", 4096, "most concurrent client connections; more wait in the kernel's accept queue (0: no cap)")
	fs.DurationVar(&c.ReadHeaderTimeout, "read-header-timeout", 10*time.Second, "how long a client may take to send a request's headers")
	// A whole request, body included: the largest body (-max-body, 10 MiB)
	// needs 5 min at ~280 kbit/s, a slow site link.
	fs.DurationVar(&c.ReadTimeout, "read-timeout", 5*time.Minute, "how long a client may take to send a whole request, body included")
	// Counted from the end of the headers, so it spans reading the body, the
	// service call (-upstream-timeout) and writing the response (a 10 MiB
	// expose PDF); hence one minute more than -read-timeout.
	fs.DurationVar(&c.WriteTimeout, "write-timeout", 6*time.Minute, "how long a request may take from the end of its headers to the last byte of its response (at least -read-timeout)")
	fs.DurationVar(&c.IdleTimeout, "idle-timeout", 30*time.Second, "how long a kept-alive connection may wait for its next request")
	fs.StringVar(&c.ExplorerClientID, "explorer-client-id", "", "the FRIS Explorer's OAuth client id at the auth service (empty: the Explorer's sign-in is not configured)")
	fs.StringVar(&c.ExplorerClientSecretFile, "explorer-client-secret-file", "", "file holding the Explorer's client secret")
	fs.StringVar(&c.ExplorerURL, "explorer-url", "", "the gateway's origin as browsers reach it, e.g. https://fris.example.org, for the Explorer's redirect URI <url>/explorer/callback (empty: each request's own Host)")
	fs.IntVar(&c.ExplorerSessions, "explorer-sessions", 10000, "most Explorer sessions kept in memory; beyond, the least recently used goes")
	c.TLS.RegisterFlags(fs, mtls.Dev(mtls.DevDir, mtls.Gateway))
}

// Validate reports every configuration mistake at once.
func (c *Config) Validate() error {
	var errs []error
	if c.Addr == "" {
		errs = append(errs, errors.New("-addr is required"))
	}
	if c.MDRAddr == "" {
		errs = append(errs, errors.New("-mdr-addr is required"))
	}
	if !strings.HasPrefix(c.MDRPrefix, "/") {
		errs = append(errs, fmt.Errorf("-mdr-prefix %q must start with /", c.MDRPrefix))
	}
	if !strings.HasPrefix(c.AuthPrefix, "/") || strings.TrimRight(c.AuthPrefix, "/") == "" {
		errs = append(errs, fmt.Errorf("-auth-prefix %q must start with / and name a path", c.AuthPrefix))
	}
	prefixes := map[string]string{}
	for flagName, p := range map[string]string{"-mdr-prefix": c.MDRPrefix, "-auth-prefix": c.AuthPrefix, "-upload-prefix": c.UploadPrefix, "-broker-prefix": c.BrokerPrefix} {
		p = strings.TrimRight(p, "/")
		if flagName == "-upload-prefix" || flagName == "-broker-prefix" {
			if !strings.HasPrefix(p, "/") {
				errs = append(errs, fmt.Errorf("%s %q must start with / and name a path", flagName, p))
				continue
			}
		}
		if p == explorer.Prefix || strings.HasPrefix(p, explorer.Prefix+"/") {
			errs = append(errs, fmt.Errorf("%s %q is the Explorer's (%s)", flagName, p, explorer.Prefix))
		}
		if other, dup := prefixes[p]; dup {
			errs = append(errs, fmt.Errorf("%s and %s must differ", other, flagName))
		}
		prefixes[p] = flagName
	}
	if c.JWKSURL != "" {
		if u, err := url.Parse(c.JWKSURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			errs = append(errs, fmt.Errorf("-jwks-url %q must be an http(s) URL", c.JWKSURL))
		}
	}
	if u := c.revocationsURL(); u != "" {
		if pu, err := url.Parse(u); err != nil || (pu.Scheme != "http" && pu.Scheme != "https") || pu.Host == "" {
			errs = append(errs, fmt.Errorf("-revocations-url %q must be an http(s) URL", u))
		}
	}
	if c.RevocationPoll < 100*time.Millisecond || c.RevocationPoll > time.Minute {
		errs = append(errs, errors.New("-revocation-poll must be between 100ms and 1m"))
	}
	if c.TokenSkew < 0 || c.TokenSkew > 5*time.Minute {
		errs = append(errs, errors.New("-token-skew must be between 0 and 5m"))
	}
	if c.JWKSRefresh < time.Second {
		errs = append(errs, errors.New("-jwks-refresh must be at least 1s"))
	}
	// Requests with an unknown kid may wait up to -jwks-min-refresh.
	if c.JWKSMinRefresh <= 0 || c.JWKSMinRefresh > 30*time.Second {
		errs = append(errs, errors.New("-jwks-min-refresh must be between 0 and 30s"))
	}
	if c.MDRCacheTTL < 0 || c.MDRCacheSize < 0 {
		errs = append(errs, errors.New("-mdr-cache-ttl and -mdr-cache-size must not be negative"))
	}
	if c.MaxBody <= 0 {
		errs = append(errs, errors.New("-max-body must be positive"))
	}
	if c.MaxAuthBody <= 0 {
		errs = append(errs, errors.New("-max-auth-body must be positive"))
	}
	if c.MaxPathSegment < 64 {
		errs = append(errs, errors.New("-max-path-segment must be at least 64"))
	}
	if _, err := clientaddr.Parse(c.TrustedProxies); err != nil {
		errs = append(errs, fmt.Errorf("-trusted-proxies: %w", err))
	}
	if c.MaxConns < 0 {
		errs = append(errs, errors.New("-max-conns must not be negative (0: no cap)"))
	}
	if c.ReadHeaderTimeout <= 0 || c.ReadTimeout <= 0 || c.WriteTimeout <= 0 || c.IdleTimeout <= 0 {
		errs = append(errs, errors.New("-read-header-timeout, -read-timeout, -write-timeout and -idle-timeout must be positive"))
	}
	if c.ReadHeaderTimeout > c.ReadTimeout {
		errs = append(errs, errors.New("-read-header-timeout must not exceed -read-timeout"))
	}
	if c.WriteTimeout < c.ReadTimeout {
		// The write deadline runs from the end of the headers: a shorter one
		// would cut off a body the read timeout still allows.
		errs = append(errs, errors.New("-write-timeout must be at least -read-timeout"))
	}
	if (c.ExplorerClientID == "") != (c.ExplorerClientSecretFile == "") {
		errs = append(errs, errors.New("-explorer-client-id and -explorer-client-secret-file go together"))
	}
	if c.ExplorerURL != "" {
		if u, err := url.Parse(c.ExplorerURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || strings.TrimRight(u.Path, "/") != "" || u.RawQuery != "" {
			errs = append(errs, fmt.Errorf("-explorer-url %q must be an http(s) origin, without a path", c.ExplorerURL))
		}
	}
	if c.ExplorerSessions < 1 {
		errs = append(errs, errors.New("-explorer-sessions must be positive"))
	}
	if err := c.TLS.Validate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// Upstreams are the gRPC connections the gateway talks through. Auth is
// nil when no auth service is configured.
type Upstreams struct {
	MDR    *grpc.ClientConn
	Auth   *grpc.ClientConn
	Upload *grpc.ClientConn
	Broker *grpc.ClientConn
}

// Close closes every connection.
func (u Upstreams) Close() {
	for _, cc := range []*grpc.ClientConn{u.MDR, u.Auth, u.Upload, u.Broker} {
		if cc != nil {
			_ = cc.Close()
		}
	}
}

// Dial connects to every service named in cfg.
func Dial(cfg Config) (Upstreams, error) {
	var up Upstreams
	transport, err := cfg.TLS.DialOption()
	if err != nil {
		return Upstreams{}, err
	}
	opts := append(forwardClientAddr(), transport)
	if up.MDR, err = rpcclient.Dial(cfg.MDRAddr, opts...); err != nil {
		return Upstreams{}, err
	}
	for _, o := range []struct {
		addr string
		cc   **grpc.ClientConn
	}{{cfg.AuthAddr, &up.Auth}, {cfg.UploadAddr, &up.Upload}, {cfg.BrokerAddr, &up.Broker}} {
		if o.addr == "" {
			continue
		}
		if *o.cc, err = rpcclient.Dial(o.addr, opts...); err != nil {
			up.Close()
			return Upstreams{}, err
		}
	}
	return up, nil
}

// ReadyChecker is a verifier that can tell whether it can verify tokens
// (its signing keys are loaded).
type ReadyChecker interface {
	Ready(ctx context.Context) error
}

// newGatewayMux is grpc-gateway's mux as every JSON group uses it.
func newGatewayMux() *runtime.ServeMux {
	return runtime.NewServeMux(
		runtime.WithMarshalerOption(runtime.MIMEWildcard, jsonMarshaler{&runtime.JSONPb{
			MarshalOptions:   protojson.MarshalOptions{UseProtoNames: true, EmitUnpopulated: true},
			UnmarshalOptions: protojson.UnmarshalOptions{DiscardUnknown: true},
		}}),
		runtime.WithIncomingHeaderMatcher(incomingHeaders),
		runtime.WithOutgoingHeaderMatcher(func(string) (string, bool) { return "", false }),
		runtime.WithMetadata(func(ctx context.Context, r *http.Request) metadata.MD {
			md := metadata.Pairs("x-request-id", httpx.RequestID(ctx))
			if tok := authn.Forwarding(ctx); tok != "" {
				md.Set("authorization", tok)
			}
			if p := routes.AuthPrefix(ctx); p != "" {
				md.Set(identity.KeyAuthPrefix, p)
			}
			return metadata.Join(md, metadata.Pairs(authn.From(ctx).Pairs()...))
		}),
		runtime.WithErrorHandler(apierr.GatewayErrorHandler),
		runtime.WithRoutingErrorHandler(func(_ context.Context, _ *runtime.ServeMux, _ runtime.Marshaler, w http.ResponseWriter, _ *http.Request, code int) {
			apierr.WriteJSON(w, code, http.StatusText(code))
		}),
		runtime.WithUnescapingMode(runtime.UnescapingModeAllCharacters),
	)
}

// routeTable registers every public path of the gateway on mux: groups A-D
// and the operations endpoints. It is apart from Handler so that a test can
// list the table (docs/interface.md names every pattern).
func routeTable(ctx context.Context, mux routes.Mux, cfg Config, up Upstreams, verifier authn.Verifier, log *slog.Logger, reg *prometheus.Registry) error {
	gw := newGatewayMux()
	if err := mdrv1.RegisterMdrServiceHandlerClient(ctx, gw, mdrv1.NewMdrServiceClient(up.MDR)); err != nil {
		return err
	}
	cache := respcache.New(cfg.MDRCacheSize, cfg.MDRCacheTTL, 64<<10)
	routes.MDR(mux, cfg.MDRPrefix, authn.Optional(verifier, cache.Handler(upstream(cfg.UpstreamTimeout, gw))))

	// Group A: never through the registry's response cache.
	var authGW, loginPage http.Handler
	if up.Auth != nil {
		client := authv1.NewAuthServiceClient(up.Auth)
		agw := newGatewayMux()
		if err := authv1.RegisterAuthServiceHandlerClient(ctx, agw, client); err != nil {
			return err
		}
		authGW = upstream(cfg.UpstreamTimeout, agw)
		loginPage = login.New(login.Config{Client: client, Prefix: cfg.AuthPrefix, Timeout: cfg.UpstreamTimeout, Log: log, MaxForm: min(cfg.MaxAuthBody, cfg.MaxBody)})
	}
	// -max-body bounds every body, these included.
	routes.Auth(mux, cfg.AuthPrefix, authGW, verifier, loginPage, min(cfg.MaxAuthBody, cfg.MaxBody))

	// Group C (upload).
	uc := routes.UploadConfig{Prefix: cfg.UploadPrefix, Timeout: cfg.UpstreamTimeout}
	if up.Upload != nil {
		uc.Client = uploadv1.NewUploadServiceClient(up.Upload)
	}
	routes.Upload(mux, uc)

	// Group D (broker): wired here.
	bc := routes.BrokerConfig{Prefix: cfg.BrokerPrefix, Verifier: verifier, Timeout: cfg.UpstreamTimeout, Log: log}
	if up.Broker != nil {
		bc.Client = brokerv1.NewBrokerServiceClient(up.Broker)
		rgw := newGatewayMux()
		if err := brokerv1.RegisterResearcherServiceHandlerClient(ctx, rgw, brokerv1.NewResearcherServiceClient(up.Broker)); err != nil {
			return err
		}
		bc.Researcher = upstream(cfg.UpstreamTimeout, rgw)
	}
	routes.Broker(mux, bc)

	if err := registerExplorer(mux, cfg, up, verifier, log); err != nil {
		return err
	}

	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte("ok\n"))
	})
	// /readyz is about this process: it can serve (every group's routes
	// answer, if only with 503) until shutdown begins. A service's outage is
	// shared by every replica of the gateway, so taking replicas out of
	// rotation for it would only turn 503s into refused connections.
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		if ctx.Err() != nil {
			apierr.WriteText(w, http.StatusServiceUnavailable, "shutting down")
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte("ready\n"))
	})
	mux.Handle("GET "+GroupsPath, groupHealth(up, verifier))
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	return nil
}

// registerExplorer adds the FRIS Explorer and the landing page. It reaches
// the registry through the gRPC client the registry's routes use, and the
// identity provider through the gateway's own auth routes, called in
// process on mux (when mux can serve: a test's recorder cannot).
func registerExplorer(mux routes.Mux, cfg Config, up Upstreams, verifier authn.Verifier, log *slog.Logger) error {
	ec := explorer.Config{
		MDR: mdrv1.NewMdrServiceClient(up.MDR), Verifier: verifier, ClientID: cfg.ExplorerClientID,
		PublicURL: cfg.ExplorerURL, AuthPrefix: cfg.AuthPrefix, MaxSessions: cfg.ExplorerSessions,
		Timeout: cfg.UpstreamTimeout, Log: log,
	}
	if cfg.ExplorerClientSecretFile != "" {
		b, err := os.ReadFile(cfg.ExplorerClientSecretFile)
		if err != nil {
			return fmt.Errorf("-explorer-client-secret-file: %w", err)
		}
		if ec.ClientSecret = strings.TrimSpace(string(b)); ec.ClientSecret == "" {
			return fmt.Errorf("-explorer-client-secret-file %s is empty", cfg.ExplorerClientSecretFile)
		}
	}
	if h, ok := mux.(http.Handler); ok && up.Auth != nil {
		ec.Loopback = h
	}
	app, err := explorer.New(ec)
	if err != nil {
		return err
	}
	if ec.ClientID == "" {
		log.Info("the Explorer's sign-in is not configured (-explorer-client-id); the registry can be browsed anonymously")
	}
	app.Register(mux)
	return nil
}

// Handler builds the gateway's whole HTTP handler.
func Handler(ctx context.Context, cfg Config, up Upstreams, verifier authn.Verifier, log *slog.Logger, reg *prometheus.Registry) (http.Handler, error) {
	if verifier == nil {
		verifier = authn.None{}
	}
	mux := http.NewServeMux()
	if err := routeTable(ctx, mux, cfg, up, verifier, log, reg); err != nil {
		return nil, err
	}

	metrics := httpx.NewMetrics(reg)
	origins := strings.Split(cfg.CORSOrigins, ",")
	for i := range origins {
		origins[i] = strings.TrimSpace(origins[i])
	}
	c := cors.New(cors.Options{
		AllowedOrigins: origins,
		AllowedMethods: []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodHead},
		AllowedHeaders: []string{"Authorization", "Content-Type", "Accept", "Accept-Language", "If-None-Match", "X-Request-Id"},
		ExposedHeaders: []string{"ETag", "X-Request-Id"},
		MaxAge:         600,
	})

	route := func(r *http.Request) string {
		if _, p := mux.Handler(r); p != "" {
			return p
		}
		return "unmatched"
	}
	var h http.Handler = routed(mux)
	textErrors := func(p string) bool {
		return httpx.Under(p, cfg.UploadPrefix) ||
			httpx.Under(p, cfg.BrokerPrefix) && !httpx.Under(p, routes.ResearcherPath(cfg.BrokerPrefix))
	}
	h = httpx.LimitSegments(cfg.MaxPathSegment, textErrors, h)
	h = httpx.CleanTarget(textErrors, h)
	h = httpx.ETag(h)
	h = httpx.LimitBody(cfg.MaxBody, h)
	h = corsExcept(c, []string{strings.TrimRight(cfg.AuthPrefix, "/") + routes.AuthorizePath, "/", explorer.Prefix}, h)
	h = httpx.Observe(log, metrics, h)
	h = otelhttp.NewHandler(h, "gateway", otelhttp.WithSpanNameFormatter(func(_ string, r *http.Request) string {
		return r.Method + " " + httpx.Route(r)
	}))
	h = httpx.WithRoute(route, h)
	h = httpx.WithRequestID(h)
	proxies, err := clientaddr.Parse(cfg.TrustedProxies)
	if err != nil {
		return nil, err
	}
	h = withClientAddr(proxies, h)
	h = httpx.Recover(log, h)
	return h, nil
}

// routed answers unknown paths with 404 and known paths with a wrong method
// with 405 and the Allow header, as JSON errors like every other.
func routed(mux *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if httpx.Route(r) != "unmatched" {
			mux.ServeHTTP(w, r)
			return
		}
		// ServeMux knows which it is and which methods the path allows.
		probe := &headerOnly{h: http.Header{}}
		mux.ServeHTTP(probe, r)
		if probe.status == http.StatusMethodNotAllowed {
			w.Header().Set("Allow", probe.h.Get("Allow"))
			apierr.WriteJSON(w, http.StatusMethodNotAllowed, "method "+r.Method+" not allowed here")
			return
		}
		if probe.status == http.StatusMovedPermanently || probe.status == http.StatusTemporaryRedirect || probe.status == http.StatusPermanentRedirect {
			mux.ServeHTTP(w, r)
			return
		}
		apierr.WriteJSON(w, http.StatusNotFound, "no such path")
	})
}

type headerOnly struct {
	h      http.Header
	status int
}

func (p *headerOnly) Header() http.Header         { return p.h }
func (p *headerOnly) WriteHeader(c int)           { p.status = c }
func (p *headerOnly) Write(b []byte) (int, error) { return len(b), nil }

// GroupsPath shows each group's state: whether the service behind it (and
// for group A the signing keys) can serve.
const GroupsPath = "/health/groups"

// GroupState is one group's line of GroupsPath.
type GroupState struct {
	Group   string `json:"group"`
	Service string `json:"service"`
	// State is "up", "down" or "off" (no service configured: the group
	// answers 503 by configuration).
	State  string `json:"state"`
	Reason string `json:"reason,omitempty"`
}

// GroupsReport is the body of GroupsPath; its status is 200 when every
// configured group is up, else 503.
type GroupsReport struct {
	Up     bool         `json:"up"`
	Groups []GroupState `json:"groups"`
}

// groupHealth asks every configured service's gRPC health (which follows
// its store) at once, within 2 s. Reasons are a fixed vocabulary: the page
// is public and must not show addresses or errors.
func groupHealth(up Upstreams, verifier authn.Verifier) http.Handler {
	type group struct {
		id, service string
		cc          *grpc.ClientConn
		extra       func(context.Context) error // after the service is up
		extraReason string
	}
	groups := []group{{id: "A", service: "auth", cc: up.Auth}, {id: "B", service: "mdr", cc: up.MDR},
		{id: "C", service: "upload", cc: up.Upload}, {id: "D", service: "broker", cc: up.Broker}}
	if rc, ok := verifier.(ReadyChecker); ok && up.Auth != nil {
		groups[0].extra, groups[0].extraReason = rc.Ready, "signing keys not loaded"
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		rep := GroupsReport{Up: true, Groups: make([]GroupState, len(groups))}
		var wg sync.WaitGroup
		for i, g := range groups {
			st := &rep.Groups[i]
			*st = GroupState{Group: g.id, Service: g.service, State: "up"}
			if g.cc == nil {
				st.State = "off"
				continue
			}
			wg.Go(func() {
				res, err := healthpb.NewHealthClient(g.cc).Check(ctx, &healthpb.HealthCheckRequest{})
				switch {
				case err != nil:
					st.State, st.Reason = "down", "unreachable"
				case res.GetStatus() != healthpb.HealthCheckResponse_SERVING:
					st.State, st.Reason = "down", "not serving (its store does not answer)"
				case g.extra != nil && g.extra(ctx) != nil:
					st.State, st.Reason = "down", g.extraReason
				}
			})
		}
		wg.Wait()
		code := http.StatusOK
		for _, g := range rep.Groups {
			if g.State == "down" {
				rep.Up, code = false, http.StatusServiceUnavailable
			}
		}
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(code)
		_ = json.NewEncoder(w).Encode(rep)
	})
}

// corsExcept applies CORS everywhere but on the given paths and below them
// (the browser login page, the landing page and the Explorer, which no
// script of another origin has any business reading).
func corsExcept(c *cors.Cors, paths []string, next http.Handler) http.Handler {
	withCORS := c.Handler(next)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for _, p := range paths {
			if r.URL.Path == p || p != "/" && strings.HasPrefix(r.URL.Path, p+"/") {
				next.ServeHTTP(w, r)
				return
			}
		}
		withCORS.ServeHTTP(w, r)
	})
}

// upstream prepares a request for grpc-gateway: a deadline, and no
// Authorization header. grpc-gateway would forward that header to every
// service whatever the header matcher says; the routes whose service reads
// the token put it in the context instead (authn.Required), and only those
// forward it.
func upstream(d time.Duration, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), d)
		defer cancel()
		r = r.WithContext(ctx)
		if _, ok := r.Header["Authorization"]; ok {
			r.Header = r.Header.Clone()
			r.Header.Del("Authorization")
		}
		next.ServeHTTP(w, r)
	})
}

// incomingHeaders forwards only what services need. Nothing else reaches
// them: in particular no client can send identity metadata of its own.
func incomingHeaders(key string) (string, bool) {
	switch strings.ToLower(key) {
	case "accept-language":
		return "accept-language", true
	}
	return "", false
}

// jsonMarshaler names the charset, as every text response does.
type jsonMarshaler struct{ *runtime.JSONPb }

func (jsonMarshaler) ContentType(any) string { return "application/json; charset=utf-8" }

// Run serves until ctx ends, then drains in-flight requests.
func Run(ctx context.Context, cfg Config, log *slog.Logger) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	server.ApplyGCPercent(cfg.GCPercent)
	shutdown, err := telemetry.Setup(ctx, "fris-gateway")
	if err != nil {
		return fmt.Errorf("telemetry: %w", err)
	}
	defer func() { _ = shutdown(context.Background()) }()
	if cfg.TLS.Insecure {
		log.Warn("gRPC to the services without TLS (-insecure-plaintext): they must run with -insecure-plaintext too; development only")
	}
	up, err := Dial(cfg)
	if err != nil {
		return err
	}
	defer up.Close()
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	verifier, err := newVerifier(ctx, cfg, log)
	if err != nil {
		return err
	}
	h, err := Handler(ctx, cfg, up, verifier, log, reg)
	if err != nil {
		return err
	}
	lis, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen %s: %w", cfg.Addr, err)
	}
	lis = server.Limit(lis, cfg.MaxConns)
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: cfg.ReadHeaderTimeout,
		ReadTimeout:       cfg.ReadTimeout,
		WriteTimeout:      cfg.WriteTimeout,
		IdleTimeout:       cfg.IdleTimeout,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	log.Info("listening", "http", lis.Addr().String())
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		if err := srv.Serve(lis); err != nil && !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	})
	g.Go(func() error {
		<-gctx.Done()
		log.Info("shutting down", "timeout", cfg.ShutdownTimeout)
		sctx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownTimeout)
		defer cancel()
		return srv.Shutdown(sctx)
	})
	err = g.Wait()
	log.Info("stopped")
	return err
}

// revocationsURL is the revocation list to poll: -revocations-url, or next
// to the key set on the auth service's operations port, where auth serves
// both; "" when none.
func (c *Config) revocationsURL() string {
	switch {
	case c.RevocationsURL == "off":
		return ""
	case c.RevocationsURL != "":
		return c.RevocationsURL
	case strings.HasSuffix(c.JWKSURL, "/jwks"):
		return strings.TrimSuffix(c.JWKSURL, "/jwks") + "/revocations"
	}
	return ""
}

// newVerifier is the bearer token verifier cfg asks for: JWTs checked
// against the auth service's JWK Set, or none at all.
func newVerifier(ctx context.Context, cfg Config, log *slog.Logger) (authn.Verifier, error) {
	if cfg.AuthAddr == "" {
		log.Info("no auth service configured (-auth-addr): group A answers 503")
	}
	if cfg.JWKSURL == "" {
		if cfg.AuthAddr != "" {
			log.Warn("-jwks-url is empty: no bearer token will be accepted")
		}
		return authn.None{}, nil
	}
	revocations := cfg.revocationsURL()
	if revocations == "" {
		log.Warn("no revocation list (-revocations-url): revoked access tokens are accepted until they expire")
	}
	return authn.NewJWT(ctx, authn.JWTConfig{
		JWKSURL:            cfg.JWKSURL,
		Issuer:             strings.TrimRight(cfg.Issuer, "/"), // auth writes iss without a trailing slash
		Skew:               cfg.TokenSkew,
		RefreshInterval:    cfg.JWKSRefresh,
		MinRefreshInterval: cfg.JWKSMinRefresh,
		RevocationsURL:     revocations,
		RevocationPoll:     cfg.RevocationPoll,
		Log:                log,
	})
}
