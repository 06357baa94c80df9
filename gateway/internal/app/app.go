// Package app wires the gateway: config -> upstream connections -> HTTP
// server. config.go holds the flags and their checks; upstreams.go the
// gRPC connections to the services; handler.go the route table (every
// group's paths, from package routes, health and readiness) and the
// middleware chain around it; ops.go the operations port (/metrics);
// health.go the groups' health page;
// clientaddr.go the client address every call carries; this file Run: the
// server, its verifier and its graceful shutdown.
package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"golang.org/x/sync/errgroup"

	"fris.dev/gateway/internal/addrlimit"
	"fris.dev/gateway/internal/authn"
	"fris.dev/gateway/internal/clientaddr"
	"fris.dev/pkg/server"
	"fris.dev/pkg/telemetry"
)

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
	// The per-address cap wraps the global one: a connection it refuses
	// is closed at once and gives its global slot back.
	proxies, _ := clientaddr.Parse(cfg.TrustedProxies) // checked by Validate
	refused := prometheus.NewCounter(prometheus.CounterOpts{
		Name: "fris_gateway_conns_refused_total",
		Help: "Connections closed at once because their address held -max-conns-per-addr.",
	})
	reg.MustRegister(refused)
	lis = addrlimit.Listen(server.Limit(lis, cfg.MaxConns), addrlimit.ListenConfig{
		Max: cfg.MaxConnsPerAddr, Exempt: proxies.Trusts, Refused: refused.Inc, MaxPerSubject: cfg.MaxConnsPerSubject,
	})
	srv := &http.Server{
		Handler: h,
		// The connection rides in its requests' contexts, so a signed-in
		// request can move it to its subject's budget (withSubject).
		ConnContext:       addrlimit.ConnContext,
		ReadHeaderTimeout: cfg.ReadHeaderTimeout,
		ReadTimeout:       cfg.ReadTimeout,
		WriteTimeout:      cfg.WriteTimeout,
		IdleTimeout:       cfg.IdleTimeout,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	attrs := []any{"http", lis.Addr().String()}
	var ops *http.Server
	var olis net.Listener
	if cfg.OpsAddr != "" {
		if olis, err = net.Listen("tcp", cfg.OpsAddr); err != nil {
			_ = lis.Close()
			return fmt.Errorf("ops listen %s: %w", cfg.OpsAddr, err)
		}
		olis = server.Limit(olis, opsMaxConns)
		ops = server.OpsServer(opsHandler(ctx, reg), log)
		attrs = append(attrs, "ops", olis.Addr().String())
	}
	log.Info("listening", attrs...)
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		if err := srv.Serve(lis); err != nil && !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	})
	if ops != nil {
		g.Go(func() error {
			if err := ops.Serve(olis); err != nil && !errors.Is(err, http.ErrServerClosed) {
				return fmt.Errorf("ops serve: %w", err)
			}
			return nil
		})
	}
	g.Go(func() error {
		<-gctx.Done()
		log.Info("shutting down", "timeout", cfg.ShutdownTimeout)
		sctx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownTimeout)
		defer cancel()
		if ops != nil {
			defer func() { _ = ops.Shutdown(sctx) }()
		}
		return srv.Shutdown(sctx)
	})
	err = g.Wait()
	log.Info("stopped")
	return err
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
		JWKSURL:              cfg.JWKSURL,
		Issuer:               strings.TrimRight(cfg.Issuer, "/"), // auth writes iss without a trailing slash
		Skew:                 cfg.TokenSkew,
		RefreshInterval:      cfg.JWKSRefresh,
		MinRefreshInterval:   cfg.JWKSMinRefresh,
		RevocationsURL:       revocations,
		RevocationPoll:       cfg.RevocationPoll,
		RevocationFailClosed: cfg.RevocationFailClosed,
		RevocationMaxStale:   cfg.RevocationMaxStale,
		Log:                  log,
	})
}
