// Package explorer is the FRIS Explorer, the web app the gateway serves
// for researchers and operators: server-rendered pages (html/template,
// with htmx for the few live parts), signed in as an OAuth client of
// FRIS's own identity provider with the gateway as its backend
// (docs/decisions.md, "Explorer"). It reaches the services through the
// gRPC clients the gateway's routes use, and the identity provider through
// the gateway's own auth routes, in process.
//
// Each part lists its paths with the access each needs (registryRoutes,
// operatorRoutes, inquiryRoutes; access.go): a new page is a line there,
// and the gate in front of it checks sign-in and role, not the page. The
// query builder's form and its translation are package querybuild; the
// templates are named in lower-case words joined by hyphens.
package explorer

import (
	"bytes"
	"context"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"path"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc/metadata"

	"fris.dev/gateway/internal/apierr"
	"fris.dev/gateway/internal/authn"
	"fris.dev/gateway/internal/httpx"
	"fris.dev/gateway/internal/i18n"
	"fris.dev/gateway/internal/routes"
	"fris.dev/pkg/audit"
	"fris.dev/pkg/identity"
	authv1 "fris.dev/proto/auth/v1"
	brokerv1 "fris.dev/proto/broker/v1"
	mdrv1 "fris.dev/proto/mdr/v1"
	uploadv1 "fris.dev/proto/upload/v1"
)

// Paths the Explorer serves; every one is in the gateway's route table and
// docs/interface.md.
const (
	Prefix       = "/explorer"
	Home         = Prefix + "/"
	LoginPath    = Prefix + "/login"
	CallbackPath = Prefix + "/callback"
	LogoutPath   = Prefix + "/logout"
	StaticPath   = Prefix + "/static/"
)

// SessionCookie carries the session id, and nothing else.
const SessionCookie = "fris_explorer"

// CSRFField is the form field of state-changing forms.
const CSRFField = "csrf_token"

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Config configures the Explorer.
type Config struct {
	MDR mdrv1.MdrServiceClient
	// Broker is the broker's researcher API (nil: the inquiry pages answer
	// 503).
	Broker brokerv1.ResearcherServiceClient
	// MaxUpload bounds an inquiry form's body, the expose PDF included
	// (default 10 MiB, the gateway's -max-body).
	MaxUpload int64
	// Verifier checks the session's access token on every request (it may
	// have been revoked) and names the identity the services see.
	Verifier authn.Verifier
	// ClientID and ClientSecret are the Explorer's OAuth client; without
	// them (or without Loopback) sign-in shows a "not configured" page and
	// the registry is browsed anonymously.
	ClientID, ClientSecret string
	// PublicURL is the gateway's origin as browsers reach it, for the
	// redirect URI; empty: the origin of each request (its Host), which
	// the identity provider checks against the client's registered URIs.
	PublicURL string
	// AuthPrefix is group A's prefix (/oauth2).
	AuthPrefix string
	// Loopback serves the gateway's own auth routes (token, userinfo,
	// revoke), called in process: never over the network to an address a
	// request's Host could name.
	Loopback http.Handler
	// Store keeps sessions (default: in memory, MaxSessions at most).
	Store       Store
	MaxSessions int
	// SessionTTL is a signed-in session's lifetime (default 12 h); a
	// sign-in in progress, its cookie, lives FlowTTL (default 15 min).
	SessionTTL time.Duration
	FlowTTL    time.Duration
	// CookieKeys seal the sign-in cookies (KeySize bytes each; the first
	// seals, all open, so a key can rotate). None: a random key of this
	// process, so a sign-in must finish on the replica that began it.
	CookieKeys [][]byte
	// SessionCheck is how often an open event stream checks that its
	// session is still signed in and its token not revoked (default 1 s,
	// the gateway's -revocation-poll).
	SessionCheck time.Duration
	// RefreshMargin: tokens expiring sooner are refreshed first (default 1 min).
	RefreshMargin time.Duration
	// Done, closed when the gateway begins to shut down, ends the open
	// event streams (browsers reconnect) so they do not hold the shutdown.
	Done <-chan struct{}
	// Timeout bounds each call to a service (default 30 s).
	Timeout time.Duration
	Log     *slog.Logger
	Now     func() time.Time
	// Operator views (operator.go): the admin APIs the gateway may call
	// for a user with the operator scope; nil: that view is unavailable.
	Banks    brokerv1.BrokerAdminClient
	Uploads  uploadv1.UploadAdminClient
	Registry mdrv1.MdrAdminClient
	Users    authv1.AuthAdminClient
	// UnsharedStreams gives each results stream a broker watch and
	// renderings of its own (fanout.go), for a benchmark's baseline.
	UnsharedStreams bool
	// StaleAfter: the sites view highlights teilers without an upload for
	// longer (default DefaultStaleAfter).
	StaleAfter time.Duration
	// Audit are the services' AuditAdmin APIs, in the order the audit and
	// settings views show them (audit.go, settings.go); none: those views
	// answer 503 or show the gateway's settings only.
	Audit []AuditService
	// Throttles are the services' ThrottleAdmin APIs (throttles.go); none:
	// the throttles view answers 503.
	Throttles []ThrottleService
	// Settings are the gateway's own, for the settings view.
	Settings []audit.Setting
	// Auth is the identity provider's API, for the account page
	// (account.go); nil: changing a password answers 503.
	Auth authv1.AuthServiceClient
}

// App serves the Explorer's pages.
type App struct {
	cfg    Config
	pages  *template.Template
	static fs.FS
	// refreshing serialises token refreshes per session (by a stripe of its
	// id): the identity provider rotates refresh tokens and treats a reused
	// one as theft.
	refreshing [64]sync.Mutex
	http       *http.Client
	// flows seals and opens the sign-in cookies.
	flows *sealer
	// hub shares the results streams' broker watches (fanout.go).
	hub resultsHub
}

// New checks cfg and parses the templates.
func New(cfg Config) (*App, error) {
	if cfg.MDR == nil {
		return nil, errors.New("explorer: no registry client")
	}
	if cfg.Verifier == nil {
		cfg.Verifier = authn.None{}
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.MaxSessions <= 0 {
		cfg.MaxSessions = 10000
	}
	if cfg.Store == nil {
		cfg.Store = NewMemory(cfg.MaxSessions, cfg.Now)
	}
	if cfg.SessionTTL <= 0 {
		cfg.SessionTTL = 12 * time.Hour
	}
	if cfg.FlowTTL <= 0 {
		cfg.FlowTTL = 15 * time.Minute
	}
	if cfg.SessionCheck <= 0 {
		cfg.SessionCheck = time.Second
	}
	if cfg.RefreshMargin <= 0 {
		cfg.RefreshMargin = time.Minute
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 30 * time.Second
	}
	if cfg.MaxUpload <= 0 {
		cfg.MaxUpload = 10 << 20
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.StaleAfter <= 0 {
		cfg.StaleAfter = DefaultStaleAfter
	}
	if cfg.AuthPrefix == "" {
		cfg.AuthPrefix = routes.CanonicalAuthPrefix
	}
	cfg.AuthPrefix = strings.TrimRight(cfg.AuthPrefix, "/")
	cfg.PublicURL = strings.TrimRight(cfg.PublicURL, "/")
	pages, err := template.ParseFS(templateFS, "templates/*.html")
	if err != nil {
		return nil, err
	}
	static, err := fs.Sub(staticFS, "static")
	if err != nil {
		return nil, err
	}
	// Spent states are remembered as long as a flow lives; a legitimate
	// browser finishes a few sign-ins in that time, so a cap of the
	// sessions' is ample.
	flows, err := newSealer(cfg.CookieKeys, cfg.MaxSessions)
	if err != nil {
		return nil, fmt.Errorf("explorer: %w", err)
	}
	a := &App{cfg: cfg, pages: pages, static: static, flows: flows}
	if cfg.Loopback != nil {
		a.http = &http.Client{Transport: loopback{cfg.Loopback}, Timeout: cfg.Timeout,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	return a, nil
}

// Sessions is the number of sessions the store holds, when it can say
// (the in-memory store can).
func (a *App) Sessions() (int, bool) {
	if l, ok := a.cfg.Store.(interface{ Len() int }); ok {
		return l.Len(), true
	}
	return 0, false
}

// Configured reports whether sign-in works.
func (a *App) Configured() bool {
	return a.cfg.ClientID != "" && a.cfg.ClientSecret != "" && a.http != nil
}

// registryRoutes are the registry's pages, sign-in and the landing page:
// all public (a signed-in user's registry pages show their name, nothing
// more).
func (a *App) registryRoutes() []route {
	return []route{
		{pattern: "GET /{$}", access: public, page: a.landing},
		{pattern: "GET " + Prefix, access: public, handler: http.RedirectHandler(Home, http.StatusMovedPermanently)},
		{pattern: "GET " + Home + "{$}", access: public, page: a.home},
		// Any other GET below /explorer/ is a page that does not exist: a
		// page says so, rather than the JSON 404 of the API paths.
		{pattern: "GET " + Home, access: public, page: func(*req) error { return fail(http.StatusNotFound, "error.nopage") }},
		{pattern: "GET " + StaticPath, access: public, handler: http.HandlerFunc(a.asset)},
		{pattern: "GET " + LoginPath, access: public, page: a.login},
		{pattern: "GET " + CallbackPath, access: public, page: a.callback},
		// Signing out checks its session and CSRF token itself: without a
		// session it only clears the cookie.
		{pattern: "POST " + LogoutPath, access: public, page: a.logout},
		{pattern: "GET " + Prefix + "/namespaces/{namespace}", access: public, page: a.namespace},
		{pattern: "GET " + Prefix + "/namespaces/{namespace}/search", access: public, page: a.search},
		{pattern: "GET " + Prefix + "/groups/{urn}", access: public, page: a.group},
		{pattern: "GET " + Prefix + "/records/{urn}", access: public, page: a.record},
		{pattern: "GET " + Prefix + "/dataelements/{urn}", access: public, page: a.dataElement},
	}
}

// req is one page request: its language, its session (nil: none) and the
// context for service calls, which carries the language and the signed-in
// identity.
type req struct {
	w    http.ResponseWriter
	r    *http.Request
	lang i18n.Lang
	sess *Session
	id   identity.Identity
	ctx  context.Context
}

// page wraps a page handler: security headers, language, session.
func (a *App) page(fn func(*req) error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		securityHeaders(w.Header())
		lang, explicit := i18n.Choose(r)
		if explicit {
			i18n.Remember(w, r, lang)
		}
		q := &req{w: w, r: r, lang: lang}
		var unchecked bool
		q.sess, q.id, unchecked = a.session(r)
		ctx, cancel := context.WithTimeout(r.Context(), a.cfg.Timeout)
		defer cancel()
		if unchecked {
			w.Header().Set("Retry-After", authn.StaleRetryAfter)
			a.fail(q, fail(http.StatusServiceUnavailable, "error.unavailable"))
			return
		}
		md := metadata.Pairs("x-request-id", httpx.RequestID(r.Context()), "accept-language", string(lang))
		q.ctx = metadata.NewOutgoingContext(ctx, metadata.Join(md, metadata.Pairs(q.id.Pairs()...)))
		if err := fn(q); err != nil {
			a.fail(q, err)
		}
	})
}

// pageError is a failure with the status and message key the user sees.
type pageError struct {
	status int
	key    string
	args   []any
}

func (e pageError) Error() string { return fmt.Sprintf("%d %s", e.status, e.key) }

func fail(status int, key string, args ...any) error { return pageError{status, key, args} }

// formError is the page for a form that could not be read: 400, saying so
// when its text is not UTF-8 (httpx.CheckBodyText fails the body's read;
// no service is called with it).
func formError(err error) error {
	if errors.Is(err, httpx.ErrNotUTF8) {
		return fail(http.StatusBadRequest, "error.notutf8")
	}
	return fail(http.StatusBadRequest, "error.badrequest")
}

// fail renders an error page: a pageError as it says, a service's error
// with the gateway's one status mapping.
func (a *App) fail(q *req, err error) {
	var pe pageError
	if !errors.As(err, &pe) {
		code, _ := apierr.FromGRPC(err)
		pe = pageError{status: code, key: "error.service"}
		switch {
		case code == http.StatusNotFound:
			pe.key = "error.notfound"
		case code == http.StatusForbidden || code == http.StatusUnauthorized:
			pe.key = "error.forbidden"
		case code == http.StatusBadRequest:
			pe.key = "error.badrequest"
		case code == http.StatusServiceUnavailable || code == http.StatusGatewayTimeout:
			pe.key = "error.unavailable"
		}
		if code >= 500 {
			a.cfg.Log.ErrorContext(q.r.Context(), "explorer: service call failed", "err", err, "request_id", httpx.RequestID(q.r.Context()))
		}
	}
	v := a.view(q, "error.title")
	v.Data = errorData{Status: pe.status, Message: v.T(pe.key, pe.args...), Hint: hintFor(v, pe)}
	a.render(q, pe.status, "error", v)
}

type errorData struct {
	Status  int
	Message string
	// Hint is the way forward, when the message does not say it.
	Hint string
}

// render executes a template into a buffer first, so a template error is a
// clean 500.
func (a *App) render(q *req, status int, name string, data any) {
	var buf bytes.Buffer
	if err := a.pages.ExecuteTemplate(&buf, name, data); err != nil {
		a.cfg.Log.Error("explorer: rendering", "page", name, "err", err)
		apierr.WriteText(q.w, http.StatusInternalServerError, "internal error")
		return
	}
	h := q.w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	// Pages differ by language, session and htmx's partial requests.
	h.Set("Vary", "Accept-Language, Cookie, HX-Request")
	q.w.WriteHeader(status)
	_, _ = q.w.Write(buf.Bytes())
}

// securityHeaders: only this origin's scripts and styles (no inline ones),
// no framing, no referrer to other sites, pages never cached (they show
// the signed-in user).
func securityHeaders(h http.Header) {
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "same-origin")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
}

// asset serves the embedded static files.
func (a *App) asset(w http.ResponseWriter, r *http.Request) {
	name := strings.TrimPrefix(r.URL.Path, StaticPath)
	if name == "" || strings.Contains(name, "/") || !fs.ValidPath(name) {
		apierr.WriteJSON(w, http.StatusNotFound, "no such path")
		return
	}
	b, err := fs.ReadFile(a.static, name)
	if err != nil {
		apierr.WriteJSON(w, http.StatusNotFound, "no such path")
		return
	}
	switch path.Ext(name) {
	case ".css":
		w.Header().Set("Content-Type", "text/css; charset=utf-8")
	case ".js":
		w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
	default:
		w.Header().Set("Content-Type", "application/octet-stream")
	}
	w.Header().Set("X-Content-Type-Options", "nosniff")
	// Assets change only with the binary; an hour keeps a deployment's
	// new assets from waiting long.
	w.Header().Set("Cache-Control", "public, max-age=3600")
	_, _ = w.Write(b)
}

// view is what every page's template gets.
type view struct {
	Lang    i18n.Lang
	Title   string
	Switch  []langLink
	User    *User
	CSRF    string
	SignIn  string // sign-in link; "" when not configured
	Section string
	// Operator: the user may see the operator views (the nav shows them);
	// Tab is the operator view shown.
	Operator bool
	// Researcher: the user may write inquiries (the nav offers them).
	Researcher bool
	// UserAdmin: the user may see the users view (an operator, or a user
	// administrator, for whom the nav shows only that view).
	UserAdmin bool
	Tab       string
	// Partial: only a part of the page is sent (an htmx request).
	Partial bool
	Crumbs  []crumb
	Data    any
}

type langLink struct {
	Lang i18n.Lang
	Href string
}

type crumb struct{ Label, Href string }

// T is a message in the page's language.
func (v *view) T(key string, args ...any) string {
	s := messages.Text(v.Lang, key)
	if len(args) > 0 {
		return fmt.Sprintf(s, args...)
	}
	return s
}

func (a *App) view(q *req, titleKey string) *view {
	v := &view{Lang: q.lang}
	v.Title = v.T(titleKey)
	for _, l := range i18n.Supported {
		if l != q.lang {
			v.Switch = append(v.Switch, langLink{l, i18n.SwitchURL(q.r, l)})
		}
	}
	if q.sess != nil && q.sess.User != nil {
		v.User, v.CSRF = q.sess.User, q.sess.CSRF
		v.Operator, v.UserAdmin, v.Researcher = q.isOperator(), q.isUserAdmin(), q.isResearcher()
	}
	if a.Configured() {
		v.SignIn = LoginPath + "?" + url.Values{"return": {returnTarget(q.r)}}.Encode()
	}
	return v
}

// returnTarget is where to come back to after signing in: this page,
// unless it is one of the sign-in pages themselves.
func returnTarget(r *http.Request) string {
	switch r.URL.Path {
	case LoginPath, CallbackPath, LogoutPath, "/":
		return Home
	}
	q := r.URL.Query()
	q.Del(i18n.Param)
	if len(q) == 0 {
		return r.URL.EscapedPath()
	}
	return r.URL.EscapedPath() + "?" + q.Encode()
}

func (a *App) landing(q *req) error {
	v := a.view(q, "landing.title")
	a.render(q, http.StatusOK, "landing", v)
	return nil
}
