package routes

import (
	"context"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"fris.dev/gateway/internal/apierr"
	"fris.dev/gateway/internal/authn"
	brokerv1 "fris.dev/proto/broker/v1"
)

// CanonicalBrokerPrefix is the prefix the researcher paths' HTTP rules are
// written for.
const CanonicalBrokerPrefix = "/broker/rest"

// DefaultBrokerName is the Server header until the broker has told its
// name (and while it is not configured or unreachable).
const DefaultBrokerName = "FRIS Search Broker"

// BrokerConfig is what group D needs.
type BrokerConfig struct {
	Prefix string
	// Client is the broker's banks API; nil means no broker is configured
	// and every group D path answers 503.
	Client brokerv1.BrokerServiceClient
	// Researcher is grpc-gateway's mux with the ResearcherService handlers
	// (rules under CanonicalBrokerPrefix), already bounded by a deadline.
	Researcher http.Handler
	Verifier   authn.Verifier
	Timeout    time.Duration
	Log        *slog.Logger
}

// Broker registers group D: the banks' API under <prefix>/searchbroker
// (XML, text and PDF, plain-text errors; broker_banks.go), what the
// deployed connector calls besides it (broker_connector.go), the
// researchers' JSON API under <prefix>/searchbroker/researcher
// (researcher.go), and <prefix>/health. Every response names the broker in
// its Server header. Paths are registered for every method so that a wrong
// method is answered here (405, text) rather than by the generic JSON 405.
func Broker(mux Mux, c BrokerConfig) {
	prefix := strings.TrimRight(c.Prefix, "/")
	name := &brokerName{client: c.Client, log: c.Log}
	if c.Client == nil {
		off := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			apierr.WriteText(w, http.StatusServiceUnavailable, "the search broker is not configured")
		})
		mux.Handle(prefix+"/health", serverHeader(name, off))
		mux.Handle(prefix+"/searchbroker/", serverHeader(name, off))
		return
	}
	handle := func(path string, m methods) {
		mux.Handle(path, serverHeader(name, m))
	}
	h := &bankHandlers{client: c.Client, timeout: c.Timeout, name: name}
	h.bankRoutes(handle, prefix)
	h.connectorRoutes(handle, prefix)
	researcherRoutes(handle, prefix, c)
}

func serverHeader(n *brokerName, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Server", n.get(r.Context()))
		next.ServeHTTP(w, r)
	})
}

// brokerName is the broker's name as it last told it, asked again in the
// background every minute.
type brokerName struct {
	client     brokerv1.BrokerServiceClient
	log        *slog.Logger
	cur        atomic.Pointer[nameAt]
	refreshing atomic.Bool
}

type nameAt struct {
	name string
	at   time.Time
}

func (n *brokerName) get(ctx context.Context) string {
	if n.client == nil {
		return DefaultBrokerName
	}
	cur := n.cur.Load()
	if cur == nil {
		// The first request asks at once, briefly; later ones never wait.
		c, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		if name, ok := n.fetch(c); ok {
			return name
		}
		return DefaultBrokerName
	}
	if time.Since(cur.at) > time.Minute && n.refreshing.CompareAndSwap(false, true) {
		go func() {
			defer n.refreshing.Store(false)
			c, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			n.fetch(c)
		}()
	}
	return cur.name
}

func (n *brokerName) fetch(ctx context.Context) (string, bool) {
	res, err := n.client.GetName(ctx, &brokerv1.GetNameRequest{})
	if err != nil || res.GetName() == "" {
		if n.log != nil {
			n.log.WarnContext(ctx, "asking the broker for its name failed", "err", err)
		}
		return "", false
	}
	n.cur.Store(&nameAt{name: res.GetName(), at: time.Now()})
	return res.GetName(), true
}

// bankHandlers serve the banks' API by calling the broker; the client's
// Authorization header travels unchanged, and the broker checks it.
type bankHandlers struct {
	client  brokerv1.BrokerServiceClient
	timeout time.Duration
	name    *brokerName
}

func (h *bankHandlers) ctx(r *http.Request) (context.Context, context.CancelFunc) {
	return forwardingCtx(r, h.timeout)
}

func writeText(w http.ResponseWriter, code int, body string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(code)
	_, _ = io.WriteString(w, body)
}

func writeError(w http.ResponseWriter, err error) {
	code, msg := apierr.FromGRPC(err)
	apierr.SetRetryAfter(w.Header(), err)
	apierr.WriteText(w, code, msg)
}

func writeDoc(w http.ResponseWriter, d *brokerv1.Document) {
	hd := w.Header()
	hd.Set("Content-Type", d.GetContentType())
	hd.Set("Content-Length", strconv.Itoa(len(d.GetBody())))
	if d.GetFilename() != "" {
		if v := mime.FormatMediaType("attachment", map[string]string{"filename": d.GetFilename()}); v != "" {
			hd.Set("Content-Disposition", v)
		} else {
			hd.Set("Content-Disposition", "attachment")
		}
	}
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(d.GetBody())
}
