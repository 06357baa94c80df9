// Package httpx holds the gateway's HTTP middleware.
package httpx

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"fris.dev/gateway/internal/apierr"
)

type ridKey struct{}

type routeKey struct{}

// WithRoute matches the request's route once and keeps it for the layers
// below (metrics, logs, span names), which would otherwise match it again.
func WithRoute(route func(*http.Request) string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), routeKey{}, route(r))))
	})
}

// Route returns the route WithRoute found, or "unmatched".
func Route(r *http.Request) string {
	if rt, ok := r.Context().Value(routeKey{}).(string); ok {
		return rt
	}
	return "unmatched"
}

// RequestID returns the request id set by the RequestID middleware.
func RequestID(ctx context.Context) string {
	id, _ := ctx.Value(ridKey{}).(string)
	return id
}

// WithRequestID keeps a sane client-sent X-Request-Id or makes one, and
// echoes it in the response.
func WithRequestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get("X-Request-Id")
		if !saneID(id) {
			var b [12]byte
			_, _ = rand.Read(b[:])
			id = hex.EncodeToString(b[:])
		}
		w.Header().Set("X-Request-Id", id)
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), ridKey{}, id)))
	})
}

func saneID(s string) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= ' ' || c > '~' {
			return false
		}
	}
	return true
}

// Recover turns a handler panic into a 500 so one request cannot take the
// gateway down.
func Recover(log *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				log.ErrorContext(r.Context(), "panic in handler", "panic", fmt.Sprint(p), "path", r.URL.Path, "stack", string(debug.Stack()))
				apierr.WriteText(w, http.StatusInternalServerError, "internal error")
			}
		}()
		next.ServeHTTP(w, r)
	})
}

type recorder struct {
	http.ResponseWriter
	status int
	bytes  int
}

func (r *recorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	n, err := r.ResponseWriter.Write(b)
	r.bytes += n
	return n, err
}

func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// Metrics are the gateway's request metrics.
type Metrics struct {
	count   *prometheus.CounterVec
	latency *prometheus.HistogramVec
}

// NewMetrics registers the request metrics in reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		count: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "fris_http_requests_total", Help: "HTTP requests by route and status class.",
		}, []string{"route", "method", "code"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "fris_http_request_duration_seconds", Help: "HTTP request latency by route.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5},
		}, []string{"route"}),
	}
	reg.MustRegister(m.count, m.latency)
	return m
}

// Observe logs and measures every request. Route labels are patterns, never
// raw paths, so the metric's cardinality stays bounded.
func Observe(log *slog.Logger, m *Metrics, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &recorder{ResponseWriter: w}
		next.ServeHTTP(rec, r)
		if rec.status == 0 {
			rec.status = http.StatusOK
		}
		d := time.Since(start)
		rt := Route(r)
		m.count.WithLabelValues(rt, r.Method, strconv.Itoa(rec.status)).Inc()
		m.latency.WithLabelValues(rt).Observe(d.Seconds())
		level := slog.LevelDebug
		if rec.status >= 500 {
			level = slog.LevelError
		}
		log.Log(r.Context(), level, "request", "method", r.Method, "route", rt, "status", rec.status,
			"bytes", rec.bytes, "duration_ms", float64(d.Microseconds())/1000, "request_id", RequestID(r.Context()))
	})
}

// LimitBody caps request bodies; handlers see an error past the limit and
// answer 413.
func LimitBody(max int64, next http.Handler) http.Handler { return LimitBodyLate(max, nil, next) }

// LimitBodyLate is LimitBody, but a request that late names is not refused
// for its declared length: its handler reads up to the limit and answers
// itself (the Explorer's forms come back with what was typed). Its
// declared length is then dropped, so that nothing below reserves it.
func LimitBodyLate(max int64, late func(*http.Request) bool, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > max && late != nil && late(r) {
			r.ContentLength = -1
		}
		if r.ContentLength > max {
			apierr.WriteText(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("request body larger than %d bytes", max))
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, max)
		next.ServeHTTP(w, r)
	})
}

// etagWriter buffers a GET response so its ETag can be computed, unless the
// handler already set one (a cached response carries its tag): then the body
// streams through, or is dropped for a 304.
type etagWriter struct {
	w           http.ResponseWriter
	ifNoneMatch string
	status      int
	decided     bool
	buffer      bool
	notModified bool
	buf         bytes.Buffer
}

func (e *etagWriter) Header() http.Header { return e.w.Header() }

// Unwrap lets http.ResponseController flush a response that streams
// through (the Explorer's event stream, marked no-store).
func (e *etagWriter) Unwrap() http.ResponseWriter { return e.w }

func (e *etagWriter) WriteHeader(code int) {
	if e.decided {
		return
	}
	e.decided, e.status = true, code
	tag := e.w.Header().Get("ETag")
	switch {
	case code != http.StatusOK || noStore(e.w.Header()):
		e.w.WriteHeader(code)
	case tag == "":
		e.buffer = true
	default:
		setCacheHeaders(e.w.Header())
		if matches(e.ifNoneMatch, tag) {
			e.notModified = true
			notModified(e.w)
			return
		}
		e.w.WriteHeader(code)
	}
}

func (e *etagWriter) Write(b []byte) (int, error) {
	if !e.decided {
		e.WriteHeader(http.StatusOK)
	}
	switch {
	case e.buffer:
		return e.buf.Write(b)
	case e.notModified:
		return len(b), nil
	}
	return e.w.Write(b)
}

// finish computes the tag of a buffered response and sends it.
func (e *etagWriter) finish() {
	if !e.decided {
		e.WriteHeader(http.StatusOK)
	}
	if !e.buffer {
		return
	}
	h := e.w.Header()
	tag := Tag(e.buf.Bytes())
	h.Set("ETag", tag)
	setCacheHeaders(h)
	if matches(e.ifNoneMatch, tag) {
		notModified(e.w)
		return
	}
	h.Set("Content-Length", strconv.Itoa(e.buf.Len()))
	e.w.WriteHeader(http.StatusOK)
	_, _ = e.w.Write(e.buf.Bytes())
}

// Tag is the strong ETag of a body.
func Tag(body []byte) string {
	sum := sha256.Sum256(body)
	return `"` + base64.RawURLEncoding.EncodeToString(sum[:18]) + `"`
}

// noStore reports a response that must not be stored (tokens, personal
// data, pages with one-time tokens): it gets no ETag either.
func noStore(h http.Header) bool {
	for _, d := range strings.Split(h.Get("Cache-Control"), ",") {
		if strings.EqualFold(strings.TrimSpace(d), "no-store") {
			return true
		}
	}
	return false
}

func setCacheHeaders(h http.Header) {
	h.Set("Vary", "Accept-Language, Authorization")
	if h.Get("Cache-Control") == "" {
		h.Set("Cache-Control", "no-cache")
	}
}

func notModified(w http.ResponseWriter) {
	h := w.Header()
	h.Del("Content-Length")
	h.Del("Content-Type")
	w.WriteHeader(http.StatusNotModified)
}

// ETag gives successful GET responses a strong ETag over the body and answers
// a matching If-None-Match with 304. Responses marked Cache-Control: no-store
// pass through untouched. The body depends on the language asked
// for and on the caller's token (private namespaces), hence the Vary header.
func ETag(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			next.ServeHTTP(w, r)
			return
		}
		ew := &etagWriter{w: w, ifNoneMatch: r.Header.Get("If-None-Match")}
		next.ServeHTTP(ew, r)
		ew.finish()
	})
}

// matches implements If-None-Match's weak comparison over a list of tags.
func matches(header, tag string) bool {
	if header == "" {
		return false
	}
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimSpace(t)
		if t == "*" || strings.TrimPrefix(t, "W/") == tag {
			return true
		}
	}
	return false
}
