// Package login is the browser side of the authorization code flow: the
// page behind GET /oauth2/authorize that asks for email and password, and
// the form POST that signs in and sends the browser back to the client with
// a code; beside it the forgot-password and reset pages (account.go). The auth service decides everything (client, redirect URI, PKCE,
// credentials); this package renders, protects the form and redirects only
// to the URI the service returned.
package login

import (
	"bytes"
	"context"
	"embed"
	"errors"
	"html/template"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"fris.dev/gateway/internal/apierr"
	"fris.dev/gateway/internal/httpx"
	"fris.dev/gateway/internal/i18n"
	authv1 "fris.dev/proto/auth/v1"
)

//go:embed templates/*.html
var templateFS embed.FS

var pages = template.Must(template.ParseFS(templateFS, "templates/*.html"))

// Messages users see. WrongCredentials never says which of the two was
// wrong, nor whether the email is known.
const (
	WrongCredentials = "Email or password is wrong."
	MissingFields    = "Enter your email address and password."
	// NotUTF8: a field of the form is not valid UTF-8 text.
	NotUTF8 = "The form holds text that is not valid UTF-8."
)

// params are the authorization request parameters the page carries from
// the GET to the POST in hidden fields, in this order.
var params = []string{"response_type", "client_id", "redirect_uri", "scope", "state", "nonce", "code_challenge", "code_challenge_method"}

// Config configures the handler.
type Config struct {
	Client authv1.AuthServiceClient
	// Prefix is the auth prefix (/oauth2): the form posts to
	// Prefix+"/authorize" and the CSRF cookie is scoped to Prefix.
	Prefix string
	// Timeout bounds each call to the auth service (default 30 s).
	Timeout time.Duration
	// MaxForm bounds the POST body (default 64 KiB).
	MaxForm int64
	// CSRFMaxAge is the CSRF cookie's lifetime (default 1 h).
	CSRFMaxAge time.Duration
	Log        *slog.Logger
}

// Handler serves GET and POST of the authorize path.
type Handler struct {
	cfg    Config
	action string
}

// New returns the login handler.
func New(cfg Config) *Handler {
	if cfg.Timeout <= 0 {
		cfg.Timeout = 30 * time.Second
	}
	if cfg.MaxForm <= 0 {
		cfg.MaxForm = 64 << 10
	}
	if cfg.CSRFMaxAge <= 0 {
		cfg.CSRFMaxAge = time.Hour
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	cfg.Prefix = strings.TrimRight(cfg.Prefix, "/")
	return &Handler{cfg: cfg, action: cfg.Prefix + "/authorize"}
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// Every response, the redirect included; pages refine the CSP.
	securityHeaders(w.Header(), "", "")
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodPost:
	default:
		w.Header().Set("Allow", "GET, HEAD, POST")
		apierr.WriteJSON(w, http.StatusMethodNotAllowed, "method "+r.Method+" not allowed here")
		return
	}
	switch strings.TrimPrefix(r.URL.Path, h.cfg.Prefix) {
	case ForgotPath:
		h.forgot(w, r)
	case ResetPath:
		h.reset(w, r)
	case VerifyPath:
		h.verify(w, r)
	case PasskeyPath:
		h.passkeyBegin(w, r)
	case PasskeyScript:
		h.passkeyScript(w, r)
	default:
		if r.Method == http.MethodPost {
			h.submit(w, r)
		} else {
			h.show(w, r)
		}
	}
}

// show validates the authorization request with the auth service and
// renders the login page.
func (h *Handler) show(w http.ResponseWriter, r *http.Request) {
	vals, msg := single(r.URL.Query())
	if msg != "" {
		h.fail(w, r, http.StatusBadRequest, msg, "")
		return
	}
	if rt := vals.Get("response_type"); rt != "" && rt != "code" {
		h.fail(w, r, http.StatusBadRequest, "Only response_type=code is supported.", "")
		return
	}
	areq := authorizeRequest(vals)
	res, err := h.authorize(r, areq)
	if err != nil {
		h.failRPC(w, r, err)
		return
	}
	h.page(w, r, http.StatusOK, vals, res, "", "")
}

// submit checks the form and signs in.
func (h *Handler) submit(w http.ResponseWriter, r *http.Request) {
	vals, ok := h.readForm(w, r)
	if !ok {
		return
	}
	if vals.Get(PasskeyAnswerField) != "" {
		h.passkeySubmit(w, r, vals)
		return
	}
	if vals.Has(SecondFactorField) {
		h.secondSubmit(w, r, vals)
		return
	}
	if vals.Has(NewPasswordField) {
		h.changeSubmit(w, r, vals)
		return
	}
	areq := authorizeRequest(vals)
	email, password := strings.TrimSpace(vals.Get("email")), vals.Get("password")
	if email == "" || password == "" {
		h.again(w, r, http.StatusBadRequest, vals, areq, email, MissingFields)
		return
	}
	ctx, cancel := h.callContext(r)
	defer cancel()
	res, err := h.cfg.Client.Login(ctx, &authv1.LoginRequest{Request: areq, Email: email, Password: password, Device: h.device(r)})
	if status.Code(err) == codes.Unauthenticated {
		h.again(w, r, http.StatusUnauthorized, vals, areq, email, WrongCredentials)
		return
	}
	if err != nil {
		h.failRPC(w, r, err)
		return
	}
	h.proceed(w, r, vals, res)
}

// signedIn sends the browser back to the client with the code of a
// sign-in (the password's or a passkey's).
func (h *Handler) signedIn(w http.ResponseWriter, r *http.Request, vals url.Values, res *authv1.LoginResponse) {
	loc, err := Redirect(res.GetRedirectUri(), res.GetCode(), vals.Get("state"))
	if err != nil || res.GetCode() == "" {
		h.cfg.Log.ErrorContext(r.Context(), "auth service returned an unusable login result",
			"redirect_uri", res.GetRedirectUri(), "err", err, "request_id", httpx.RequestID(r.Context()))
		h.fail(w, r, http.StatusBadGateway, "Signing in failed. Try again later.", "")
		return
	}
	// The form's token is spent: a new page gets a new one.
	h.setCSRF(w, r, "", -1)
	h.setDevice(w, r, res.GetDevice())
	w.Header().Set("Location", loc)
	w.WriteHeader(http.StatusFound)
}

// again shows the login page once more after a failed attempt, keeping the
// email but never the password. The client's name comes from the auth
// service again rather than from the form.
func (h *Handler) again(w http.ResponseWriter, r *http.Request, code int, vals url.Values, areq *authv1.AuthorizeRequest, email, msg string) {
	res, err := h.authorize(r, areq)
	if err != nil {
		h.failRPC(w, r, err)
		return
	}
	h.page(w, r, code, vals, res, email, msg)
}

func (h *Handler) authorize(r *http.Request, areq *authv1.AuthorizeRequest) (*authv1.AuthorizeResponse, error) {
	ctx, cancel := h.callContext(r)
	defer cancel()
	return h.cfg.Client.Authorize(ctx, areq)
}

func (h *Handler) callContext(r *http.Request) (context.Context, context.CancelFunc) {
	ctx := metadata.AppendToOutgoingContext(r.Context(), "x-request-id", httpx.RequestID(r.Context()))
	return context.WithTimeout(ctx, h.cfg.Timeout)
}

func authorizeRequest(v url.Values) *authv1.AuthorizeRequest {
	return &authv1.AuthorizeRequest{
		ClientId:            v.Get("client_id"),
		RedirectUri:         v.Get("redirect_uri"),
		CodeChallenge:       v.Get("code_challenge"),
		CodeChallengeMethod: v.Get("code_challenge_method"),
		Scope:               v.Get("scope"),
		Nonce:               v.Get("nonce"),
	}
}

// single refuses a request parameter sent more than once (RFC 6749 3.1).
func single(v url.Values) (url.Values, string) {
	for _, name := range append(params, CSRFField, "email", "password", "password2", "token", PasskeyCeremonyField, PasskeyAnswerField, SecondFactorField) {
		if len(v[name]) > 1 {
			return nil, "The parameter " + name + " was sent more than once."
		}
	}
	return v, ""
}

type hidden struct{ Name, Value string }

// base is what every page carries: its language, the texts in it and the
// link that switches to the other language.
type base struct {
	Lang   i18n.Lang
	Switch []langLink
}

type langLink struct {
	Lang i18n.Lang
	Href string
}

// T is a message in the page's language. Messages are keyed by their
// English text, so a service's own message (not in the catalogue) shows
// as it came.
func (b base) T(key string) string { return messages.Text(b.Lang, key) }

// newBase chooses the page's language. again is the GET URL that shows the
// same page (the authorize request's parameters on this origin), to which
// the language switch adds lang; "" when there is none (no switch then).
func newBase(w http.ResponseWriter, r *http.Request, again string) base {
	l, explicit := i18n.Choose(r)
	if explicit {
		i18n.Remember(w, r, l)
	}
	b := base{Lang: l}
	if again == "" {
		return b
	}
	u, err := url.Parse(again)
	if err != nil {
		return b
	}
	for _, o := range i18n.Supported {
		if o != l {
			q := u.Query()
			q.Set(i18n.Param, string(o))
			b.Switch = append(b.Switch, langLink{o, u.EscapedPath() + "?" + q.Encode()})
		}
	}
	return b
}

type loginPage struct {
	base
	Title, Nonce, ClientName, Action, CSRF, Email, Error, Forgot string
	Hidden                                                       []hidden
	// Passkey and PasskeyScript: where the page's script begins a passkey
	// sign-in, and the script (passkey.go).
	Passkey, PasskeyScript string
}

type errorPage struct {
	base
	Title, Nonce, Message, Retry string
}

// page renders the login form.
func (h *Handler) page(w http.ResponseWriter, r *http.Request, code int, vals url.Values, res *authv1.AuthorizeResponse, email, msg string) {
	p := loginPage{base: newBase(w, r, h.restart(vals)), Title: "Sign in", Nonce: token(16), ClientName: res.GetClientName(), Action: h.action, Email: email, Error: msg,
		Forgot: h.cfg.Prefix + ForgotPath, Passkey: h.cfg.Prefix + PasskeyPath, PasskeyScript: h.cfg.Prefix + PasskeyScript}
	if q := authorizeQuery(vals); q != "" {
		p.Forgot += "?" + q
	}
	if p.ClientName == "" {
		p.ClientName = vals.Get("client_id")
	}
	for _, name := range params {
		if v := vals.Get(name); v != "" {
			p.Hidden = append(p.Hidden, hidden{name, v})
		}
	}
	p.CSRF = h.csrfToken(r)
	h.setCSRF(w, r, p.CSRF, h.cfg.CSRFMaxAge)
	// The form posts here and is then redirected to the client: browsers
	// apply form-action to that redirect too, so the client's origin is
	// allowed alongside ours.
	h.render(w, code, "login.html", p.Nonce, p, formTarget(res.GetRedirectUri()))
}

// fail renders an error page. It never links or redirects anywhere but
// this page (retry, when set, is the authorize path on this origin).
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, code int, msg, retry string) {
	title := "Signing in is not possible"
	if code >= 500 {
		title = "Something went wrong"
	}
	again := ""
	if r.Method != http.MethodPost && strings.HasPrefix(r.URL.Path, "/") && !strings.HasPrefix(r.URL.Path, "//") {
		again = r.URL.RequestURI()
	}
	p := errorPage{base: newBase(w, r, again), Title: title, Nonce: token(16), Message: msg, Retry: retry}
	h.render(w, code, "error.html", p.Nonce, p, "")
}

// failRPC shows an auth service error with the gateway's one status
// mapping; 5xx descriptions are generic.
func (h *Handler) failRPC(w http.ResponseWriter, r *http.Request, err error) {
	code, msg := apierr.FromGRPC(err)
	apierr.SetRetryAfter(w.Header(), err)
	if code >= 500 {
		h.cfg.Log.ErrorContext(r.Context(), "auth service call failed", "err", err, "request_id", httpx.RequestID(r.Context()))
		msg = "Signing in is temporarily not possible. Try again later."
	} else {
		msg = sentence(msg)
	}
	h.fail(w, r, code, msg, "")
}

// render writes a page with the security headers every response of this
// handler carries. It renders into a buffer first so a template error is a
// clean 500.
func (h *Handler) render(w http.ResponseWriter, code int, name, nonce string, data any, formSrc string) {
	var buf bytes.Buffer
	if err := pages.ExecuteTemplate(&buf, name, data); err != nil {
		h.cfg.Log.Error("rendering login page", "page", name, "err", err)
		securityHeaders(w.Header(), "", "")
		apierr.WriteText(w, http.StatusInternalServerError, "internal error")
		return
	}
	hd := w.Header()
	securityHeaders(hd, nonce, formSrc)
	hd.Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(code)
	_, _ = w.Write(buf.Bytes())
}

// securityHeaders: no external resources, inline style only with the
// page's nonce, no framing, no referrer (the URL carries the request), no
// caching (the page carries a one-time token).
func securityHeaders(hd http.Header, nonce, formSrc string) {
	style := "'none'"
	if nonce != "" {
		style = "'nonce-" + nonce + "'"
	}
	action := "'self'"
	if formSrc != "" {
		action += " " + formSrc
	}
	// Scripts and fetches of this origin only: the passkey script.
	hd.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; connect-src 'self'; style-src "+style+"; form-action "+action+"; frame-ancestors 'none'; base-uri 'none'")
	hd.Set("X-Frame-Options", "DENY")
	hd.Set("Referrer-Policy", "no-referrer")
	hd.Set("Cache-Control", "no-store")
	hd.Set("Pragma", "no-cache")
	hd.Set("X-Content-Type-Options", "nosniff")
}

// formTarget is the CSP source of a redirect URI's origin ("" when it
// cannot be expressed safely).
func formTarget(redirect string) string {
	u, err := url.Parse(redirect)
	if err != nil || !u.IsAbs() || !cspSafe(u.Scheme) || !cspSafe(u.Host) {
		return ""
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
		if u.Host == "" {
			return ""
		}
		return strings.ToLower(u.Scheme) + "://" + u.Host
	}
	return strings.ToLower(u.Scheme) + ":" // an app's own scheme
}

func cspSafe(s string) bool {
	return !strings.ContainsAny(s, " \t\r\n;,'\"")
}

// Redirect is where the browser goes after signing in: the redirect URI the
// auth service returned, with code and state added to its query (RFC 6749
// 4.1.2). The existing query is kept as it is, except for code and state
// parameters of its own, which would be ambiguous; a fragment is dropped.
func Redirect(redirectURI, code, state string) (string, error) {
	u, err := url.Parse(redirectURI)
	if err != nil {
		return "", err
	}
	if !u.IsAbs() || u.Opaque != "" {
		return "", errors.New("redirect URI is not absolute")
	}
	switch strings.ToLower(u.Scheme) {
	case "javascript", "data", "vbscript", "file", "blob":
		return "", errors.New("redirect URI scheme not allowed")
	case "http", "https":
		if u.Host == "" {
			return "", errors.New("redirect URI has no host")
		}
	}
	var kept []string
	for _, pair := range strings.Split(u.RawQuery, "&") {
		if pair == "" {
			continue
		}
		k, _, _ := strings.Cut(pair, "=")
		if key, err := url.QueryUnescape(k); err == nil && (key == "code" || key == "state") {
			continue
		}
		kept = append(kept, pair)
	}
	add := url.Values{"code": {code}}
	if state != "" {
		add.Set("state", state)
	}
	u.RawQuery = strings.Join(append(kept, add.Encode()), "&")
	u.ForceQuery = false
	u.Fragment, u.RawFragment = "", ""
	return u.String(), nil
}

// restart is a link that starts the flow again with the same parameters,
// on this origin.
func (h *Handler) restart(vals url.Values) string {
	q := url.Values{}
	for _, name := range params {
		if v := vals.Get(name); v != "" {
			q.Set(name, v)
		}
	}
	if q.Get("client_id") == "" {
		return ""
	}
	return h.action + "?" + q.Encode()
}

// sentence makes a service message presentable: capitalised, with a full
// stop.
func sentence(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return "The sign-in request is not valid."
	}
	r, n := utf8.DecodeRuneInString(s)
	s = string(unicode.ToUpper(r)) + s[n:]
	if !strings.HasSuffix(s, ".") {
		s += "."
	}
	return s
}
