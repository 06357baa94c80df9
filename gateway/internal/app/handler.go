package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/cors"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/encoding/protojson"

	"fris.dev/gateway/internal/addrlimit"
	"fris.dev/gateway/internal/apidoc"
	"fris.dev/gateway/internal/apierr"
	"fris.dev/gateway/internal/authn"
	"fris.dev/gateway/internal/authshape"
	"fris.dev/gateway/internal/clientaddr"
	"fris.dev/gateway/internal/explorer"
	"fris.dev/gateway/internal/httpx"
	"fris.dev/gateway/internal/login"
	"fris.dev/gateway/internal/protobody"
	"fris.dev/gateway/internal/respcache"
	"fris.dev/gateway/internal/routes"
	"fris.dev/pkg/identity"
	authv1 "fris.dev/proto/auth/v1"
	brokerv1 "fris.dev/proto/broker/v1"
	mdrv1 "fris.dev/proto/mdr/v1"
	uploadv1 "fris.dev/proto/upload/v1"
)

// newGatewayMux is grpc-gateway's mux as every JSON group uses it; reshape,
// when given, reshapes its answers (group A's, authshape).
func newGatewayMux(reshape func(runtime.Marshaler) runtime.Marshaler) *runtime.ServeMux {
	var m runtime.Marshaler = jsonMarshaler{&runtime.JSONPb{
		MarshalOptions:   protojson.MarshalOptions{UseProtoNames: true, EmitUnpopulated: true},
		UnmarshalOptions: protojson.UnmarshalOptions{DiscardUnknown: true},
	}}
	if reshape != nil {
		m = reshape(m)
	}
	return runtime.NewServeMux(
		runtime.WithMarshalerOption(runtime.MIMEWildcard, m),
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
			// Forwarded here rather than by the header matcher: grpc-gateway
			// logs an unstructured ERROR line for every value gRPC cannot
			// carry, which let any client write to the gateway's log at will.
			if al := strings.Join(r.Header.Values("Accept-Language"), ", "); al != "" && routes.MetadataSafe(al) {
				md.Set("accept-language", al)
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
// and health and readiness (/metrics is on the operations port, ops.go).
// It is apart from Handler so that a test can list the table
// (docs/interface.md names every pattern). loopback serves the auth routes
// to the Explorer in process (nil: the Explorer has no sign-in, as in a
// test that only lists the table).
//
// It returns how to find a request's signed-in Explorer session (its
// subject; "" without), for the per-subject budgets.
func routeTable(ctx context.Context, mux routes.Mux, loopback http.Handler, cfg Config, up Upstreams, verifier authn.Verifier, log *slog.Logger, reg *prometheus.Registry) (func(*http.Request) string, error) {
	gw := newGatewayMux(nil)
	if err := mdrv1.RegisterMdrServiceHandlerClient(ctx, gw, mdrv1.NewMdrServiceClient(up.MDR)); err != nil {
		return nil, err
	}
	cache := respcache.New(cfg.MDRCacheSize, cfg.MDRCacheTTL, 64<<10)
	routes.MDR(mux, cfg.MDRPrefix, authn.Optional(verifier, cache.Handler(upstream(cfg.UpstreamTimeout, gw))))

	// Group A: never through the registry's response cache.
	var authGW, loginPage http.Handler
	if up.Auth != nil {
		client := authv1.NewAuthServiceClient(up.Auth)
		// The answers' names as the deployment's clients read them
		// (-auth-answers).
		agw := newGatewayMux(func(m runtime.Marshaler) runtime.Marshaler {
			return authshape.Marshaler{Marshaler: m, Shape: cfg.AuthAnswers}
		})
		if err := authv1.RegisterAuthServiceHandlerClient(ctx, agw, client); err != nil {
			return nil, err
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
		rgw := newGatewayMux(nil)
		if err := brokerv1.RegisterResearcherServiceHandlerClient(ctx, rgw, brokerv1.NewResearcherServiceClient(up.Broker)); err != nil {
			return nil, err
		}
		bc.Researcher = upstream(cfg.UpstreamTimeout, rgw)
	}
	routes.Broker(mux, bc)

	signedIn, err := registerExplorer(ctx, mux, loopback, cfg, up, verifier, log, reg)
	if err != nil {
		return nil, err
	}

	mux.HandleFunc("GET /healthz", healthz)
	mux.Handle("GET /readyz", readyz(ctx))
	mux.Handle("GET "+GroupsPath, groupHealth(up, verifier))
	apidoc.Register(mux)
	return signedIn, nil
}

// registerExplorer adds the FRIS Explorer and the landing page. It reaches
// the registry through the gRPC client the registry's routes use, and the
// identity provider through the gateway's own auth routes, called in
// process on loopback (the gateway's whole mux; nil: no sign-in).
func registerExplorer(ctx context.Context, mux routes.Mux, loopback http.Handler, cfg Config, up Upstreams, verifier authn.Verifier, log *slog.Logger, reg *prometheus.Registry) (func(*http.Request) string, error) {
	ec := explorer.Config{
		MDR: mdrv1.NewMdrServiceClient(up.MDR), Verifier: verifier, ClientID: cfg.ExplorerClientID,
		PublicURL: cfg.ExplorerURL, AuthPrefix: cfg.AuthPrefix, MaxSessions: cfg.ExplorerSessions,
		Timeout: cfg.UpstreamTimeout, Log: log, StaleAfter: cfg.ExplorerStaleAfter,
		UnsharedStreams: !cfg.ExplorerShareStreams, MaxUpload: cfg.MaxBody, Done: ctx.Done(),
		// An open results stream checks its session as often as revoked
		// tokens can become known.
		SessionCheck: cfg.RevocationPoll,
		// The operator views: the services admit the gateway to the few
		// admin RPCs they call, only for an operator's token.
		Registry: mdrv1.NewMdrAdminClient(up.MDR),
		Audit:    auditServices(up), Settings: cfg.settings(),
		Throttles: throttleServices(up),
	}
	if up.Broker != nil {
		ec.Banks = brokerv1.NewBrokerAdminClient(up.Broker)
		ec.Broker = brokerv1.NewResearcherServiceClient(up.Broker)
	}
	if up.Upload != nil {
		ec.Uploads = uploadv1.NewUploadAdminClient(up.Upload)
	}
	if up.Auth != nil {
		ec.Auth = authv1.NewAuthServiceClient(up.Auth)
		ec.Users = authv1.NewAuthAdminClient(up.Auth)
	}
	if cfg.ExplorerClientSecretFile != "" {
		b, err := os.ReadFile(cfg.ExplorerClientSecretFile)
		if err != nil {
			return nil, fmt.Errorf("-explorer-client-secret-file: %w", err)
		}
		if ec.ClientSecret = strings.TrimSpace(string(b)); ec.ClientSecret == "" {
			return nil, fmt.Errorf("-explorer-client-secret-file %s is empty", cfg.ExplorerClientSecretFile)
		}
	}
	if cfg.ExplorerCookieKeyFile != "" {
		b, err := os.ReadFile(cfg.ExplorerCookieKeyFile)
		if err != nil {
			return nil, fmt.Errorf("-explorer-cookie-key-file: %w", err)
		}
		if ec.CookieKeys, err = explorer.ParseCookieKeys(string(b)); err != nil {
			return nil, fmt.Errorf("-explorer-cookie-key-file %s: %w", cfg.ExplorerCookieKeyFile, err)
		}
	}
	if up.Auth != nil {
		ec.Loopback = loopback
	}
	app, err := explorer.New(ec)
	if err != nil {
		return nil, err
	}
	if _, ok := app.Sessions(); ok && reg != nil {
		g := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "fris_explorer_sessions",
			Help: "Explorer sessions held in memory (signed in; visitors who have not signed in hold none)."},
			func() float64 { n, _ := app.Sessions(); return float64(n) })
		if err := reg.Register(g); err != nil && !errors.As(err, new(prometheus.AlreadyRegisteredError)) {
			return nil, err
		}
	}
	if reg != nil {
		for _, g := range []prometheus.Collector{
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "fris_explorer_results_streams",
				Help: "Explorer results streams (Server-Sent Events) open."},
				func() float64 { n, _ := app.ResultsStreams(); return float64(n) }),
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "fris_explorer_results_watches",
				Help: "Broker watches the open results streams share (one per inquiry, user and language)."},
				func() float64 { _, n := app.ResultsStreams(); return float64(n) }),
		} {
			if err := reg.Register(g); err != nil && !errors.As(err, new(prometheus.AlreadyRegisteredError)) {
				return nil, err
			}
		}
	}
	if ec.ClientID == "" {
		log.Info("the Explorer's sign-in is not configured (-explorer-client-id); the registry can be browsed anonymously")
	}
	app.Register(mux)
	return app.SignedIn, nil
}

// Handler builds the gateway's whole HTTP handler.
func Handler(ctx context.Context, cfg Config, up Upstreams, verifier authn.Verifier, log *slog.Logger, reg *prometheus.Registry) (http.Handler, error) {
	if verifier == nil {
		verifier = authn.None{}
	}
	mux := http.NewServeMux()
	signedIn, err := routeTable(ctx, mux, mux, cfg, up, verifier, log, reg)
	if err != nil {
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
	bodies := httpx.NewBodyMemory(cfg.BodyMemory, 2*time.Second, httpx.FreeMemory)
	if reg != nil {
		g := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "fris_gateway_body_memory_bytes",
			Help: "Bytes of request bodies held or reserved by the gateway (bounded by -body-memory)."},
			func() float64 { return float64(bodies.Held()) })
		if err := reg.Register(g); err != nil && !errors.As(err, new(prometheus.AlreadyRegisteredError)) {
			return nil, err
		}
	}
	h = bodies.Limit(h)
	// Forms and JSON whose text is not UTF-8 are a 400, never a 500
	// (httpx/bodytext.go).
	h = httpx.CheckBodyText(textErrors, h)
	h = httpx.LimitSegments(cfg.MaxPathSegment, textErrors, h)
	h = httpx.CleanTarget(textErrors, h)
	// The connector encodes patient ids in ISO-8859-1 (docs/decisions.md).
	h = httpx.Latin1Segments(func(p string) bool { return httpx.Under(p, strings.TrimRight(cfg.UploadPrefix, "/")+"/sites") }, h)
	h = httpx.ETag(h)
	h = httpx.LimitBodyLate(cfg.MaxBody, explorer.LateBody, h)
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
	// Outside the layers that wrap the ResponseWriter: the body's pace is
	// kept with the connection's read deadline.
	h = httpx.BodyRate{MinRate: cfg.MinBodyRate, Window: cfg.BodyRateWindow, Whole: cfg.ReadTimeout}.Limit(h)
	if cfg.MaxInFlightPerAddr > 0 || cfg.MaxInFlightPerSubject > 0 {
		h = httpx.LimitInFlight(addrlimit.NewCounter(cfg.MaxInFlightPerAddr), addrlimit.NewCounter(cfg.MaxInFlightPerSubject), clientAddrOf, subjectOf, func(w http.ResponseWriter, r *http.Request, code int, msg string) {
			if textErrors(r.URL.Path) {
				apierr.WriteText(w, code, msg)
				return
			}
			apierr.WriteJSON(w, code, msg)
		}, h)
	}
	h = withSubject(func(r *http.Request) string {
		if s := authn.Subject(r, verifier); s != "" {
			return s
		}
		if signedIn != nil {
			return signedIn(r)
		}
		return ""
	}, h)
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

// incomingHeaders forwards no header as it is: what services need
// (Accept-Language) is added by newGatewayMux's metadata function, checked,
// and in particular no client can send identity metadata of its own.
func incomingHeaders(string) (string, bool) { return "", false }

// jsonMarshaler names the charset, as every text response does.
type jsonMarshaler struct{ *runtime.JSONPb }

func (jsonMarshaler) ContentType(any) string { return "application/json; charset=utf-8" }

// NewDecoder reads a request message the routes built already (an OAuth
// form) as it is, and JSON otherwise.
func (m jsonMarshaler) NewDecoder(r io.Reader) runtime.Decoder {
	if b := protobody.Decoder(r); b != nil {
		return b
	}
	return m.JSONPb.NewDecoder(r)
}
