package app

import (
	"context"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"fris.dev/gateway/internal/apierr"
)

// The gateway's operations port (-ops-addr) serves /metrics apart from the
// public port: request counts by route and status, latencies and the
// runtime's figures help whoever plans an attack (what is slow, what
// fails, how busy the node is), so they are for the deployment's scrapers
// only (docs/security.md, "Operations ports"). /healthz and /readyz are on
// both ports: probes may use either.

// opsMaxConns caps concurrent connections to the operations port, as the
// services' -ops-max-conns default does.
const opsMaxConns = 64

// opsHandler is the operations port's route table.
func opsHandler(ctx context.Context, reg *prometheus.Registry) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", healthz)
	mux.Handle("GET /readyz", readyz(ctx))
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	return mux
}

func healthz(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = w.Write([]byte("ok\n"))
}

// readyz is about this process: it can serve (every group's routes answer,
// if only with 503) until shutdown begins (ctx ends). A service's outage is
// shared by every replica of the gateway, so taking replicas out of
// rotation for it would only turn 503s into refused connections.
func readyz(ctx context.Context) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if ctx.Err() != nil {
			apierr.WriteText(w, http.StatusServiceUnavailable, "shutting down")
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte("ready\n"))
	})
}
