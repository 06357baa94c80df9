// Package server runs a FRIS service process: a gRPC server with the
// standard health service and the shared interceptors, and a small HTTP
// operations port with /healthz, /readyz and /metrics, both shut down
// gracefully when the context ends.
package server

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"runtime/debug"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc"
	"golang.org/x/net/netutil"
	"golang.org/x/sync/errgroup"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/reflection"
	"google.golang.org/grpc/status"

	"fris.dev/pkg/mtls"
)

// Config is the listening side of a service.
type Config struct {
	GRPCAddr        string
	OpsAddr         string
	ShutdownTimeout time.Duration
	// MaxRecvBytes bounds one gRPC request message.
	MaxRecvBytes int
	// GCPercent is the garbage collector's target (GOGC). An explicit GOGC
	// in the environment wins.
	GCPercent int
	// StreamWorkers serve RPCs on long-lived goroutines (0: a new goroutine
	// per RPC).
	StreamWorkers int
	// MaxConns caps concurrent gRPC connections (0: no cap); more wait in
	// the kernel's accept queue. MaxStreams caps concurrent RPCs on one
	// connection (0: gRPC's default, no cap); more wait in the client.
	MaxConns   int
	MaxStreams int
	// OpsMaxConns caps concurrent connections to the operations port (0: no
	// cap), so a flood of probes or scrapes cannot exhaust the process.
	OpsMaxConns int
	// TLS is the gRPC port's mutual TLS (docs/security.md,
	// "Service-to-service trust").
	TLS mtls.Config
	// MaxConnAge is the age at which a gRPC connection is sent GOAWAY (0:
	// grpcMaxAge); tests shorten it.
	MaxConnAge time.Duration
}

// Limits of the operations port. Its answers are small and local (health,
// readiness within 2 s, a metrics page, auth's JWK Set), so a client that
// needs longer is stuck or hostile.
const (
	opsReadHeaderTimeout = 5 * time.Second
	opsReadTimeout       = 10 * time.Second
	opsWriteTimeout      = 30 * time.Second
	opsIdleTimeout       = 30 * time.Second
	opsMaxHeaderBytes    = 16 << 10
)

// Limits of the gRPC port. Its clients are the gateway, other services and
// the admin CLIs, all inside the deployment; these only bound what a broken
// or hostile peer can hold.
const (
	// grpcConnectionTimeout bounds a new connection's HTTP/2 handshake.
	grpcConnectionTimeout = 10 * time.Second
	// grpcMinPingInterval: a client pinging more often is sent GOAWAY
	// (gRPC's default policy, 5 min, would also refuse clients that keep
	// idle connections alive, hence the shorter bound).
	grpcMinPingInterval = 10 * time.Second
	// After grpcPingAfter without traffic the server pings the client and
	// drops the connection when no answer comes within grpcPingTimeout:
	// a peer that vanished (no FIN) stops holding a connection.
	grpcPingAfter   = time.Minute
	grpcPingTimeout = 20 * time.Second
	// grpcMaxIdle closes connections without RPCs for this long; clients
	// reconnect when they need to.
	grpcMaxIdle = 5 * time.Minute
	// grpcMaxAge sends GOAWAY to a connection this old (gRPC adds ±10 %
	// jitter): the client reconnects and re-resolves the service's name, so
	// replicas added since (a scale-up behind a headless Service) get calls
	// within minutes, not only after some connection happens to fail. Calls
	// and streams in flight finish on the old connection (no grace limit).
	grpcMaxAge = 2 * time.Minute
)

// RegisterFlags adds -grpc-addr, -ops-addr and -shutdown-timeout with the
// given defaults. A MaxRecvBytes or MaxStreams set before is the service's
// default of -max-recv-bytes (else 64 MiB) or -max-streams (else 1000).
func (c *Config) RegisterFlags(fs *flag.FlagSet, grpcAddr, opsAddr string) {
	fs.StringVar(&c.GRPCAddr, "grpc-addr", grpcAddr, "gRPC listen address")
	fs.StringVar(&c.OpsAddr, "ops-addr", opsAddr, "HTTP address for /healthz, /readyz and /metrics (empty: off)")
	fs.DurationVar(&c.ShutdownTimeout, "shutdown-timeout", 15*time.Second, "how long in-flight requests may finish on shutdown")
	fs.IntVar(&c.MaxRecvBytes, "max-recv-bytes", cmp.Or(c.MaxRecvBytes, 64<<20), "largest gRPC request message accepted")
	fs.IntVar(&c.GCPercent, "gogc", DefaultGCPercent, "garbage collector target percentage, as GOGC (an explicit GOGC environment variable wins)")
	fs.IntVar(&c.StreamWorkers, "stream-workers", 32, "goroutines kept to serve RPCs (0: one new goroutine per RPC)")
	fs.IntVar(&c.MaxConns, "max-conns", 1024, "most concurrent gRPC connections (0: no cap)")
	fs.IntVar(&c.MaxStreams, "max-streams", cmp.Or(c.MaxStreams, 1000), "most concurrent RPCs on one gRPC connection (0: no cap)")
	fs.IntVar(&c.OpsMaxConns, "ops-max-conns", 64, "most concurrent connections to the operations port (0: no cap)")
	c.TLS.RegisterFlags(fs, mtls.Dev(mtls.DefaultDir(), component(fs)))
}

// component is the service a flag set configures: cmdutil names a service's
// serve flags "<service> serve". Its certificate in the development CA is
// the TLS default, as the operator's is the CLIs'.
func component(fs *flag.FlagSet) string {
	name, _, _ := strings.Cut(fs.Name(), " ")
	return name
}

// Validate reports configuration mistakes of the listening side.
func (c Config) Validate() error {
	var errs []error
	if c.MaxConns < 0 || c.MaxStreams < 0 || c.OpsMaxConns < 0 {
		errs = append(errs, errors.New("-max-conns, -max-streams and -ops-max-conns must not be negative"))
	}
	if c.ShutdownTimeout < 0 {
		errs = append(errs, errors.New("-shutdown-timeout must not be negative"))
	}
	if err := c.TLS.Validate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// DefaultGCPercent trades memory for CPU. The services' live heaps are small
// (tens of MiB) and their hot paths allocate per request, so the default 100
// collects several times a second under load; at 400 the auth service's
// token responses gained ~10 % (BENCHMARKS.md) for a peak heap of ~5x live.
const DefaultGCPercent = 400

// ApplyGCPercent sets the collector's target unless the operator set GOGC.
func ApplyGCPercent(percent int) {
	if _, set := os.LookupEnv("GOGC"); set || percent == 0 {
		return
	}
	debug.SetGCPercent(percent)
}

// Service is what a service plugs into the bootstrap.
type Service struct {
	Name string
	Log  *slog.Logger
	// Register adds the service's gRPC servers.
	Register func(*grpc.Server)
	// Ready reports whether the service can serve (its store answers).
	Ready func(context.Context) error
	// Metrics, when set, is the registry the service's own metrics live in;
	// the bootstrap adds its RPC metrics and the Go runtime's to it.
	Metrics *prometheus.Registry
	// Ops are extra handlers on the operations port, by ServeMux pattern
	// (the auth service publishes its signing keys there for the gateway).
	Ops map[string]http.Handler
	// Access adds callers to the default access table (see defaultAccess).
	Access Access
	// Operator lists admin methods (full names) the gateway may call on
	// behalf of a signed-in operator, for the Explorer's operator views:
	// the gateway is admitted to them, and each such call must carry the
	// identity of a token with the operator scope (operatorGate).
	Operator []string
	// Roles admits the holders of finer roles than the operator's to some
	// of the Operator methods: a role scope, the methods (each one also in
	// Operator) a token with it may have the gateway call. An operator's
	// token keeps every Operator method.
	Roles map[string][]string
}

// Run serves until ctx ends, then drains in-flight requests.
func Run(ctx context.Context, cfg Config, svc Service) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	if svc.Log == nil {
		svc.Log = slog.New(slog.DiscardHandler)
	}
	reg := svc.Metrics
	if reg == nil {
		reg = prometheus.NewRegistry()
	}
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m := newRPCMetrics(reg)
	ApplyGCPercent(cfg.GCPercent)

	creds, err := cfg.TLS.ServerCredentials()
	if err != nil {
		return err
	}
	unary := []grpc.UnaryServerInterceptor{m.unary, logUnary(svc.Log)}
	stream := []grpc.StreamServerInterceptor{}
	z := &authorizer{log: svc.Log}
	gate := newOperatorGate(svc.Operator, svc.Roles, svc.Log)
	if creds != nil {
		unary = append(unary, z.unary)
		stream = append(stream, z.stream)
	}
	// The gate runs without TLS too: a user's identity without the scope
	// is refused there as well.
	unary = append(unary, gate.unary)
	stream = append(stream, gate.stream)
	if creds == nil {
		svc.Log.Warn("gRPC without TLS (-insecure-plaintext): any caller that reaches the port may act as the gateway or an operator; development only")
	}
	maxAge := cfg.MaxConnAge
	if maxAge <= 0 {
		maxAge = grpcMaxAge
	}
	opts := []grpc.ServerOption{
		grpc.StatsHandler(otelgrpc.NewServerHandler()),
		grpc.ChainUnaryInterceptor(append(unary, recoverUnary(svc.Log))...),
		grpc.ChainStreamInterceptor(append(stream, recoverStream(svc.Log))...),
		grpc.MaxRecvMsgSize(cfg.MaxRecvBytes),
		grpc.ConnectionTimeout(grpcConnectionTimeout),
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: grpcMinPingInterval, PermitWithoutStream: true}),
		grpc.KeepaliveParams(keepalive.ServerParameters{Time: grpcPingAfter, Timeout: grpcPingTimeout, MaxConnectionIdle: grpcMaxIdle, MaxConnectionAge: maxAge}),
	}
	if creds != nil {
		opts = append(opts, grpc.Creds(creds))
	}
	if cfg.MaxStreams > 0 {
		opts = append(opts, grpc.MaxConcurrentStreams(uint32(cfg.MaxStreams)))
	}
	if cfg.StreamWorkers > 0 {
		// A worker keeps the stack it grew (RSA signing, XML parsing run
		// deep), where a fresh goroutine per RPC grows and copies it again:
		// ~1.5 % of the auth service's CPU under load.
		opts = append(opts, grpc.NumStreamWorkers(uint32(cfg.StreamWorkers)))
	}
	gs := grpc.NewServer(opts...)
	hs := health.NewServer()
	healthpb.RegisterHealthServer(gs, hs)
	reflection.Register(gs)
	svc.Register(gs)
	// Set before Serve, so no call reads it unset.
	z.access = withOperator(defaultAccess(gs, svc.Access), svc.Operator)
	if creds != nil {
		svc.Log.Debug("access table", "access", z.access.String())
	}
	hs.SetServingStatus("", healthpb.HealthCheckResponse_NOT_SERVING)

	glis, err := net.Listen("tcp", cfg.GRPCAddr)
	if err != nil {
		return fmt.Errorf("grpc listen %s: %w", cfg.GRPCAddr, err)
	}
	glis = Limit(glis, cfg.MaxConns)
	var olis net.Listener
	if cfg.OpsAddr != "" {
		if olis, err = net.Listen("tcp", cfg.OpsAddr); err != nil {
			_ = glis.Close()
			return fmt.Errorf("ops listen %s: %w", cfg.OpsAddr, err)
		}
		olis = Limit(olis, cfg.OpsMaxConns)
	}

	ready := func(ctx context.Context) error {
		if svc.Ready == nil {
			return nil
		}
		return svc.Ready(ctx)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		c, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		if err := ready(c); err != nil {
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = fmt.Fprintf(w, "not ready: %v\n", err)
			return
		}
		_, _ = w.Write([]byte("ready\n"))
	})
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	for pattern, h := range svc.Ops {
		mux.Handle(pattern, h)
	}
	ops := OpsServer(mux, svc.Log)

	attrs := []any{"grpc", glis.Addr().String()}
	if olis != nil {
		attrs = append(attrs, "ops", olis.Addr().String())
	}
	svc.Log.Info("listening", attrs...)

	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		if err := gs.Serve(glis); err != nil && !errors.Is(err, grpc.ErrServerStopped) {
			return fmt.Errorf("grpc serve: %w", err)
		}
		return nil
	})
	if olis != nil {
		g.Go(func() error {
			if err := ops.Serve(olis); err != nil && !errors.Is(err, http.ErrServerClosed) {
				return fmt.Errorf("ops serve: %w", err)
			}
			return nil
		})
	}
	// Health follows readiness, so load balancers stop sending before we stop.
	g.Go(func() error {
		t := time.NewTicker(2 * time.Second)
		defer t.Stop()
		last := healthpb.HealthCheckResponse_NOT_SERVING
		for {
			c, cancel := context.WithTimeout(gctx, 2*time.Second)
			st := healthpb.HealthCheckResponse_SERVING
			if err := ready(c); err != nil {
				st = healthpb.HealthCheckResponse_NOT_SERVING
			}
			cancel()
			if st != last {
				hs.SetServingStatus("", st)
				hs.SetServingStatus(svc.Name, st)
				last = st
			}
			select {
			case <-gctx.Done():
				return nil
			case <-t.C:
			}
		}
	})
	g.Go(func() error {
		<-gctx.Done()
		svc.Log.Info("shutting down", "timeout", cfg.ShutdownTimeout)
		hs.Shutdown()
		sctx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownTimeout)
		defer cancel()
		done := make(chan struct{})
		go func() { gs.GracefulStop(); close(done) }()
		select {
		case <-done:
		case <-sctx.Done():
			gs.Stop()
		}
		if olis != nil {
			_ = ops.Shutdown(sctx)
		}
		return nil
	})
	err = g.Wait()
	svc.Log.Info("stopped")
	return err
}

// OpsServer serves an operations port's handler (health, readiness,
// metrics) with the port's limits; the gateway's operations port uses it
// too.
func OpsServer(h http.Handler, log *slog.Logger) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: opsReadHeaderTimeout,
		ReadTimeout:       opsReadTimeout,
		WriteTimeout:      opsWriteTimeout,
		IdleTimeout:       opsIdleTimeout,
		MaxHeaderBytes:    opsMaxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
}

// Limit caps the connections lis hands out at n at a time (n <= 0: no cap).
// A connection beyond the cap waits in the kernel's accept queue until one
// closes, rather than costing a goroutine and buffers here.
func Limit(lis net.Listener, n int) net.Listener {
	if n <= 0 {
		return lis
	}
	return netutil.LimitListener(lis, n)
}

type rpcMetrics struct {
	count   *prometheus.CounterVec
	latency *prometheus.HistogramVec
}

func newRPCMetrics(reg *prometheus.Registry) *rpcMetrics {
	m := &rpcMetrics{
		count: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "fris_grpc_requests_total", Help: "gRPC requests by method and code.",
		}, []string{"method", "code"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "fris_grpc_request_duration_seconds", Help: "gRPC request latency.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5},
		}, []string{"method"}),
	}
	reg.MustRegister(m.count, m.latency)
	return m
}

func (m *rpcMetrics) unary(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	start := time.Now()
	resp, err := h(ctx, req)
	m.latency.WithLabelValues(info.FullMethod).Observe(time.Since(start).Seconds())
	m.count.WithLabelValues(info.FullMethod, status.Code(err).String()).Inc()
	return resp, err
}

// logUnary logs every call at debug level (errors that are server faults at
// error level). The context carries the caller's trace, so the record joins
// the gateway's record of the same request.
func logUnary(log *slog.Logger) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		start := time.Now()
		resp, err := h(ctx, req)
		code := status.Code(err)
		level := slog.LevelDebug
		switch code {
		case codes.Internal, codes.Unknown, codes.DataLoss:
			level = slog.LevelError
		}
		log.Log(ctx, level, "rpc", "method", info.FullMethod, "code", code.String(),
			"duration_ms", float64(time.Since(start).Microseconds())/1000)
		return resp, err
	}
}

// recoverUnary turns a panic into Internal so one bad request cannot take the
// process down; the stack goes to the log, not to the client.
func recoverUnary(log *slog.Logger) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (resp any, err error) {
		defer func() {
			if p := recover(); p != nil {
				log.ErrorContext(ctx, "panic in handler", "method", info.FullMethod, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
				err = status.Error(codes.Internal, "internal error")
			}
		}()
		return h(ctx, req)
	}
}

func recoverStream(log *slog.Logger) grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) (err error) {
		defer func() {
			if p := recover(); p != nil {
				log.ErrorContext(ss.Context(), "panic in handler", "method", info.FullMethod, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
				err = status.Error(codes.Internal, "internal error")
			}
		}()
		return h(srv, ss)
	}
}
