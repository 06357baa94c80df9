// Package app wires the gateway: config -> upstream connections -> HTTP
// server.
package app

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
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
	"fris.dev/gateway/internal/httpx"
	"fris.dev/gateway/internal/respcache"
	"fris.dev/gateway/internal/routes"
	"fris.dev/pkg/rpcclient"
	"fris.dev/pkg/telemetry"
	mdrv1 "fris.dev/proto/mdr/v1"
)

// Config is everything the gateway reads from flags and FRIS_GATEWAY_*.
type Config struct {
	Addr            string
	MDRAddr         string
	MDRPrefix       string
	CORSOrigins     string
	MaxBody         int64
	LogLevel        string
	ShutdownTimeout time.Duration
	UpstreamTimeout time.Duration
	MDRCacheTTL     time.Duration
	MDRCacheSize    int
}

// RegisterFlags adds the gateway's flags to fs.
func (c *Config) RegisterFlags(fs *flag.FlagSet) {
	fs.StringVar(&c.Addr, "addr", "127.0.0.1:8080", "HTTP listen address")
	fs.StringVar(&c.MDRAddr, "mdr-addr", "127.0.0.1:9102", "gRPC address of the mdr service")
	fs.StringVar(&c.MDRPrefix, "mdr-prefix", routes.CanonicalMDRPrefix, "path prefix of the metadata registry (group B)")
	fs.StringVar(&c.CORSOrigins, "cors-origins", "*", "comma-separated origins allowed by CORS on the JSON groups (* for any)")
	fs.Int64Var(&c.MaxBody, "max-body", 10<<20, "largest request body accepted, in bytes")
	fs.StringVar(&c.LogLevel, "log-level", "info", "debug, info, warn or error")
	fs.DurationVar(&c.ShutdownTimeout, "shutdown-timeout", 15*time.Second, "how long in-flight requests may finish on shutdown")
	fs.DurationVar(&c.UpstreamTimeout, "upstream-timeout", 30*time.Second, "deadline of one call to a service")
	fs.DurationVar(&c.MDRCacheTTL, "mdr-cache-ttl", time.Second, "how long anonymous registry responses are reused (0: no cache)")
	fs.IntVar(&c.MDRCacheSize, "mdr-cache-size", 4096, "most registry responses kept in the cache")
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
	if c.MDRCacheTTL < 0 || c.MDRCacheSize < 0 {
		errs = append(errs, errors.New("-mdr-cache-ttl and -mdr-cache-size must not be negative"))
	}
	if c.MaxBody <= 0 {
		errs = append(errs, errors.New("-max-body must be positive"))
	}
	return errors.Join(errs...)
}

// Upstreams are the gRPC connections the gateway talks through.
type Upstreams struct {
	MDR *grpc.ClientConn
}

// Close closes every connection.
func (u Upstreams) Close() {
	if u.MDR != nil {
		_ = u.MDR.Close()
	}
}

// Dial connects to every service named in cfg.
func Dial(cfg Config) (Upstreams, error) {
	mdr, err := rpcclient.Dial(cfg.MDRAddr)
	if err != nil {
		return Upstreams{}, err
	}
	return Upstreams{MDR: mdr}, nil
}

// Handler builds the gateway's whole HTTP handler.
func Handler(ctx context.Context, cfg Config, up Upstreams, verifier authn.Verifier, log *slog.Logger, reg *prometheus.Registry) (http.Handler, error) {
	gw := runtime.NewServeMux(
		runtime.WithMarshalerOption(runtime.MIMEWildcard, jsonMarshaler{&runtime.JSONPb{
			MarshalOptions:   protojson.MarshalOptions{UseProtoNames: true, EmitUnpopulated: true},
			UnmarshalOptions: protojson.UnmarshalOptions{DiscardUnknown: true},
		}}),
		runtime.WithIncomingHeaderMatcher(incomingHeaders),
		runtime.WithOutgoingHeaderMatcher(func(string) (string, bool) { return "", false }),
		runtime.WithMetadata(func(ctx context.Context, r *http.Request) metadata.MD {
			md := metadata.Pairs("x-request-id", httpx.RequestID(ctx))
			return metadata.Join(md, metadata.Pairs(authn.From(ctx).Pairs()...))
		}),
		runtime.WithErrorHandler(apierr.GatewayErrorHandler),
		runtime.WithRoutingErrorHandler(func(_ context.Context, _ *runtime.ServeMux, _ runtime.Marshaler, w http.ResponseWriter, _ *http.Request, code int) {
			apierr.WriteJSON(w, code, http.StatusText(code))
		}),
		runtime.WithUnescapingMode(runtime.UnescapingModeAllCharacters),
	)
	if err := mdrv1.RegisterMdrServiceHandlerClient(ctx, gw, mdrv1.NewMdrServiceClient(up.MDR)); err != nil {
		return nil, err
	}

	mux := http.NewServeMux()
	cache := respcache.New(cfg.MDRCacheSize, cfg.MDRCacheTTL, 64<<10)
	routes.MDR(mux, cfg.MDRPrefix, authn.Optional(verifier, cache.Handler(withTimeout(cfg.UpstreamTimeout, gw))))

	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		c, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		for name, cc := range map[string]*grpc.ClientConn{"mdr": up.MDR} {
			res, err := healthpb.NewHealthClient(cc).Check(c, &healthpb.HealthCheckRequest{})
			if err != nil || res.GetStatus() != healthpb.HealthCheckResponse_SERVING {
				apierr.WriteText(w, http.StatusServiceUnavailable, name+" is not ready")
				return
			}
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte("ready\n"))
	})
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))

	metrics := httpx.NewMetrics(reg)
	origins := strings.Split(cfg.CORSOrigins, ",")
	for i := range origins {
		origins[i] = strings.TrimSpace(origins[i])
	}
	c := cors.New(cors.Options{
		AllowedOrigins: origins,
		AllowedMethods: []string{http.MethodGet, http.MethodPost, http.MethodHead},
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
	h = httpx.ETag(h)
	h = httpx.LimitBody(cfg.MaxBody, h)
	h = c.Handler(h)
	h = httpx.Observe(log, metrics, h)
	h = otelhttp.NewHandler(h, "gateway", otelhttp.WithSpanNameFormatter(func(_ string, r *http.Request) string {
		return r.Method + " " + httpx.Route(r)
	}))
	h = httpx.WithRoute(route, h)
	h = httpx.WithRequestID(h)
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

func withTimeout(d time.Duration, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), d)
		defer cancel()
		next.ServeHTTP(w, r.WithContext(ctx))
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
	shutdown, err := telemetry.Setup(ctx, "fris-gateway")
	if err != nil {
		return fmt.Errorf("telemetry: %w", err)
	}
	defer func() { _ = shutdown(context.Background()) }()
	up, err := Dial(cfg)
	if err != nil {
		return err
	}
	defer up.Close()
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	h, err := Handler(ctx, cfg, up, authn.None{}, log, reg)
	if err != nil {
		return err
	}
	lis, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen %s: %w", cfg.Addr, err)
	}
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       2 * time.Minute,
		WriteTimeout:      2 * time.Minute,
		IdleTimeout:       2 * time.Minute,
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
