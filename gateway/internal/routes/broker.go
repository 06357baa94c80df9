package routes

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"path"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"fris.dev/gateway/internal/apierr"
	"fris.dev/gateway/internal/authn"
	"fris.dev/gateway/internal/httpx"
	"fris.dev/pkg/identity"
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
// (XML, text and PDF, plain-text errors), the researchers' JSON API under
// <prefix>/searchbroker/researcher, and <prefix>/health. Every response
// names the broker in its Server header. Paths are registered for every
// method so that a wrong method is answered here (405, text) rather than
// by the generic JSON 405.
func Broker(mux Mux, c BrokerConfig) {
	prefix := strings.TrimRight(c.Prefix, "/")
	base := prefix + "/searchbroker"
	name := &brokerName{client: c.Client, log: c.Log}
	h := &bankHandlers{client: c.Client, timeout: c.Timeout, name: name}
	handle := func(path string, m methods) {
		mux.Handle(path, serverHeader(name, m))
	}
	if c.Client == nil {
		off := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			apierr.WriteText(w, http.StatusServiceUnavailable, "the search broker is not configured")
		})
		mux.Handle(prefix+"/health", serverHeader(name, off))
		mux.Handle(base+"/", serverHeader(name, off))
		return
	}
	handle(prefix+"/health", methods{http.MethodGet: http.HandlerFunc(h.health)})
	handle(base+"/", methods{}) // unknown paths: 404 in text, with the Server header
	handle(base+"/name", methods{http.MethodGet: http.HandlerFunc(h.getName)})
	handle(base+"/banks/{email}", methods{http.MethodPut: http.HandlerFunc(h.register), http.MethodDelete: http.HandlerFunc(h.deleteBank)})
	handle(base+"/banks/{email}/status", methods{http.MethodGet: http.HandlerFunc(h.status)})
	handle(base+"/inquiries", methods{http.MethodGet: http.HandlerFunc(h.list)})
	for path, part := range map[string]brokerv1.InquiryPart{
		"": brokerv1.InquiryPart_WHOLE, "/query": brokerv1.InquiryPart_QUERY, "/contact": brokerv1.InquiryPart_CONTACT,
		"/info": brokerv1.InquiryPart_INFO, "/expose": brokerv1.InquiryPart_EXPOSE,
	} {
		handle(base+"/inquiries/{id}"+path, methods{http.MethodGet: h.part(part)})
	}
	handle(base+"/exposes/{id}", methods{http.MethodGet: http.HandlerFunc(h.expose)})
	handle(base+"/inquiries/{id}/replies/{email}", methods{http.MethodPut: http.HandlerFunc(h.reply)})

	// What the deployed connector (share-client's BrokerConnector) calls
	// besides the spec's paths; docs/decisions.md says what each answers.
	// Its broker address is the parent of the prefix (".../broker/"), which
	// it GETs to check that the broker is reachable.
	if root := path.Dir(prefix); root != "/" && root != "." {
		handle(root+"/{$}", methods{http.MethodGet: http.HandlerFunc(h.root)})
	}
	handle(base+"/inquiries/{id}/hasexpose", methods{http.MethodGet: http.HandlerFunc(h.hasExpose)})
	handle(base+"/banks/{email}/site/{name}", methods{http.MethodPut: http.HandlerFunc(h.siteName)})
	handle(base+"/siteNames", methods{http.MethodGet: http.HandlerFunc(h.siteNames)})
	handle(base+"/siteNames/{$}", methods{http.MethodGet: http.HandlerFunc(h.siteNames)})
	handle(prefix+"/test/inquiries/{id}", methods{http.MethodGet: http.HandlerFunc(h.testInquiry)})
	handle(prefix+"/monitoring", methods{http.MethodPut: http.HandlerFunc(h.monitoring)})
	handle(prefix+"/monitoring/referencequery", methods{http.MethodGet: http.HandlerFunc(h.referenceQuery)})

	gw := c.Researcher
	if prefix != CanonicalBrokerPrefix {
		gw = rewritePrefix(prefix, CanonicalBrokerPrefix, gw)
	}
	// Asking every site a question is a role an operator grants, not
	// something any signed-in (or self-registered) user may do.
	researcher := func(h http.Handler) http.Handler {
		return researcherAuth(c.Verifier, authn.Scope(identity.ScopeResearcher, "fris", h))
	}
	read := researcher(gw)
	write := researcher(requestBody(jsonOnly, gw))
	r := ResearcherPath(prefix) + "/inquiries"
	handle(r, methods{http.MethodGet: read, http.MethodPost: write})
	handle(r+"/{id}", methods{http.MethodGet: read, http.MethodPut: write})
	handle(r+"/{id}/release", methods{http.MethodPost: write})
	handle(r+"/{id}/close", methods{http.MethodPost: write})
	handle(r+"/{id}/replies", methods{http.MethodGet: read})
}

// ResearcherPath is where the researcher API (JSON, bearer tokens) lives
// under the broker's prefix; everything else there is the banks' text API.
func ResearcherPath(prefix string) string {
	return strings.TrimRight(prefix, "/") + "/searchbroker/researcher"
}

// methods dispatches by method: HEAD is served as GET; a method the path
// does not serve is 405 with Allow; an empty set is an unknown path (404).
type methods map[string]http.Handler

func (m methods) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if len(m) == 0 {
		apierr.WriteText(w, http.StatusNotFound, "no such path")
		return
	}
	h, ok := m[r.Method]
	if !ok && r.Method == http.MethodHead {
		h, ok = m[http.MethodGet]
	}
	if !ok {
		allow := make([]string, 0, len(m)+1)
		for k := range m {
			allow = append(allow, k)
			if k == http.MethodGet {
				allow = append(allow, http.MethodHead)
			}
		}
		sort.Strings(allow)
		w.Header().Set("Allow", strings.Join(allow, ", "))
		apierr.WriteText(w, http.StatusMethodNotAllowed, "method "+r.Method+" not allowed here")
		return
	}
	h.ServeHTTP(w, r)
}

func serverHeader(n *brokerName, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Server", n.get(r.Context()))
		next.ServeHTTP(w, r)
	})
}

// researcherAuth admits a request only with a bearer access token the
// verifier accepts and passes its identity on (the token itself is not
// forwarded). Without one: 401 with a Bearer challenge, what JSON clients
// expect of an API (RFC 6750). The researcher scope is checked after it
// (authn.Scope): a valid token without it is 403.
func researcherAuth(v authn.Verifier, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok := authn.BearerToken(r)
		if tok == "" {
			w.Header().Set("WWW-Authenticate", `Bearer realm="fris"`)
			apierr.WriteJSON(w, http.StatusUnauthorized, "a bearer access token is required")
			return
		}
		id, err := v.Verify(r.Context(), tok)
		if err != nil || id.Anonymous() {
			w.Header().Set("WWW-Authenticate", `Bearer realm="fris", error="invalid_token"`)
			apierr.WriteJSON(w, http.StatusUnauthorized, "the access token is not valid")
			return
		}
		next.ServeHTTP(w, r.WithContext(authn.With(r.Context(), id)))
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

// forwardingCtx is the context of a call for a client whose credentials
// the service checks itself (banks' tokens, sites' Basic credentials): the
// Authorization header travels unchanged, with the request id, under the
// gateway's deadline. A header gRPC metadata cannot carry (bytes outside
// printable ASCII) cannot hold a credential FRIS issued, so it is dropped
// and the service answers as for a missing one, instead of the call failing
// with a 500.
func forwardingCtx(r *http.Request, timeout time.Duration) (context.Context, context.CancelFunc) {
	md := metadata.Pairs("x-request-id", httpx.RequestID(r.Context()))
	if a := r.Header.Get("Authorization"); a != "" && printableASCII(a) {
		md.Set("authorization", a)
	}
	ctx, cancel := context.WithTimeout(r.Context(), timeout)
	return metadata.NewOutgoingContext(ctx, md), cancel
}

func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
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

// health answers OK while the broker answers.
func (h *bankHandlers) health(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := h.ctx(r)
	defer cancel()
	if _, err := h.client.GetName(ctx, &brokerv1.GetNameRequest{}); err != nil {
		apierr.WriteText(w, http.StatusServiceUnavailable, "the search broker does not answer")
		return
	}
	writeText(w, http.StatusOK, "OK")
}

func (h *bankHandlers) getName(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := h.ctx(r)
	defer cancel()
	res, err := h.client.GetName(ctx, &brokerv1.GetNameRequest{})
	if err != nil {
		writeError(w, err)
		return
	}
	h.name.cur.Store(&nameAt{name: res.GetName(), at: time.Now()})
	w.Header().Set("Server", res.GetName())
	writeText(w, http.StatusOK, res.GetName())
}

func (h *bankHandlers) register(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := h.ctx(r)
	defer cancel()
	res, err := h.client.RegisterBank(ctx, &brokerv1.RegisterBankRequest{Email: r.PathValue("email")})
	challenge := func() { w.Header().Set("WWW-Authenticate", "SamplyRegistration AuthCode") }
	switch {
	case status.Code(err) == codes.Unauthenticated:
		challenge()
		writeError(w, err)
	case err != nil:
		writeError(w, err)
	case res.GetActivationRequired():
		challenge()
		apierr.WriteText(w, http.StatusUnauthorized, "an activation code was sent to the bank's email address; repeat the request with Authorization: SamplyRegistration <code>")
	default:
		w.Header().Set("Cache-Control", "no-store")
		writeText(w, http.StatusCreated, res.GetToken())
	}
}

func (h *bankHandlers) deleteBank(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := h.ctx(r)
	defer cancel()
	if _, err := h.client.DeleteBank(ctx, &brokerv1.DeleteBankRequest{Email: r.PathValue("email")}); err != nil {
		writeError(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (h *bankHandlers) status(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := h.ctx(r)
	defer cancel()
	res, err := h.client.GetBankStatus(ctx, &brokerv1.GetBankStatusRequest{Email: r.PathValue("email")})
	if err != nil {
		writeError(w, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	if res.GetStatus() == brokerv1.BankStatus_ACTIVE {
		writeText(w, http.StatusOK, "active")
		return
	}
	writeText(w, http.StatusAccepted, "pending")
}

func (h *bankHandlers) list(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := h.ctx(r)
	defer cancel()
	d, err := h.client.ListInquiries(ctx, &brokerv1.ListInquiriesRequest{})
	if err != nil {
		writeError(w, err)
		return
	}
	writeDoc(w, d)
}

func (h *bankHandlers) part(p brokerv1.InquiryPart) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := h.ctx(r)
		defer cancel()
		d, err := h.client.GetInquiryPart(ctx, &brokerv1.GetInquiryPartRequest{InquiryId: r.PathValue("id"), Part: p})
		if err != nil {
			writeError(w, err)
			return
		}
		writeDoc(w, d)
	})
}

func (h *bankHandlers) expose(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := h.ctx(r)
	defer cancel()
	d, err := h.client.GetExpose(ctx, &brokerv1.GetExposeRequest{ExposeId: r.PathValue("id")})
	if err != nil {
		writeError(w, err)
		return
	}
	writeDoc(w, d)
}

// readBody reads a request body whole (a bank's, an upload's), within the
// gateway's limit; on failure it has answered.
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			apierr.WriteText(w, http.StatusRequestEntityTooLarge, "request body larger than "+strconv.FormatInt(tooBig.Limit, 10)+" bytes")
			return nil, false
		}
		apierr.WriteText(w, http.StatusBadRequest, "reading the request body failed")
		return nil, false
	}
	return body, true
}

func (h *bankHandlers) reply(w http.ResponseWriter, r *http.Request) {
	body, ok := readBody(w, r)
	if !ok {
		return
	}
	ctx, cancel := h.ctx(r)
	defer cancel()
	res, err := h.client.PutReply(ctx, &brokerv1.PutReplyRequest{
		InquiryId: r.PathValue("id"), BankEmail: r.PathValue("email"), Body: body, ContentType: r.Header.Get("Content-Type"),
	})
	if err != nil {
		writeError(w, err)
		return
	}
	writeText(w, http.StatusOK, res.GetMessage())
}

// root answers the connector's reachability check (any 2xx or 3xx passes)
// with the broker's name.
func (h *bankHandlers) root(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	writeText(w, http.StatusOK, h.name.get(r.Context()))
}

// exposeUnavailable is the exact body with which the connector's
// inquiryHasExpose reads a 404 as "no expose"; a 404 with any other body it
// reads as "has one".
const exposeUnavailable = "unavailable"

func (h *bankHandlers) hasExpose(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := h.ctx(r)
	defer cancel()
	res, err := h.client.HasExpose(ctx, &brokerv1.HasExposeRequest{InquiryId: r.PathValue("id")})
	switch {
	case err != nil:
		writeError(w, err)
	case res.GetHasExpose():
		writeText(w, http.StatusOK, "available")
	default:
		writeText(w, http.StatusNotFound, exposeUnavailable)
	}
}

func (h *bankHandlers) siteName(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := h.ctx(r)
	defer cancel()
	res, err := h.client.SetBankSiteName(ctx, &brokerv1.SetBankSiteNameRequest{Email: r.PathValue("email"), SiteName: r.PathValue("name")})
	if err != nil {
		writeError(w, err)
		return
	}
	writeText(w, http.StatusOK, res.GetMessage())
}

func (h *bankHandlers) siteNames(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := h.ctx(r)
	defer cancel()
	d, err := h.client.ListSiteNames(ctx, &brokerv1.ListSiteNamesRequest{})
	if err != nil {
		writeError(w, err)
		return
	}
	writeDoc(w, d)
}

// queryLanguage reads the connector's "query-language" header (QUERY when
// absent, as the original broker defaults it).
func queryLanguage(r *http.Request) (brokerv1.QueryLanguage, bool) {
	switch v := strings.TrimSpace(r.Header.Get("query-language")); {
	case v == "" || strings.EqualFold(v, "QUERY"):
		return brokerv1.QueryLanguage_QUERY_LANGUAGE_QUERY, true
	case strings.EqualFold(v, "CQL"):
		return brokerv1.QueryLanguage_QUERY_LANGUAGE_CQL, true
	}
	return 0, false
}

func (h *bankHandlers) testInquiry(w http.ResponseWriter, r *http.Request) {
	h.queryDoc(w, r, func(ctx context.Context, lang brokerv1.QueryLanguage) (*brokerv1.Document, error) {
		return h.client.GetTestInquiry(ctx, &brokerv1.GetTestInquiryRequest{Language: lang})
	})
}

func (h *bankHandlers) referenceQuery(w http.ResponseWriter, r *http.Request) {
	h.queryDoc(w, r, func(ctx context.Context, lang brokerv1.QueryLanguage) (*brokerv1.Document, error) {
		return h.client.GetReferenceQuery(ctx, &brokerv1.GetReferenceQueryRequest{Language: lang})
	})
}

// queryDoc answers with the document get returns in the query language
// the request asks for.
func (h *bankHandlers) queryDoc(w http.ResponseWriter, r *http.Request, get func(context.Context, brokerv1.QueryLanguage) (*brokerv1.Document, error)) {
	lang, ok := queryLanguage(r)
	if !ok {
		apierr.WriteText(w, http.StatusBadRequest, "query-language must be QUERY or CQL")
		return
	}
	ctx, cancel := h.ctx(r)
	defer cancel()
	d, err := get(ctx, lang)
	if err != nil {
		writeError(w, err)
		return
	}
	writeDoc(w, d)
}

func (h *bankHandlers) monitoring(w http.ResponseWriter, r *http.Request) {
	body, ok := readBody(w, r)
	if !ok {
		return
	}
	ctx, cancel := h.ctx(r)
	defer cancel()
	res, err := h.client.PutMonitoring(ctx, &brokerv1.PutMonitoringRequest{Body: body})
	if err != nil {
		writeError(w, err)
		return
	}
	writeText(w, http.StatusOK, res.GetMessage())
}
