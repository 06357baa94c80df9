package explorer

import (
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"

	"golang.org/x/oauth2"

	"fris.dev/gateway/internal/i18n"
)

// oauth is the Explorer's client configuration. The authorize endpoint is
// a path on this origin (the browser goes there); the token endpoint is
// reached through the loopback transport, whatever its host says.
func (a *App) oauth(redirect string) *oauth2.Config {
	return &oauth2.Config{
		ClientID:     a.cfg.ClientID,
		ClientSecret: a.cfg.ClientSecret,
		Endpoint: oauth2.Endpoint{
			AuthURL:   a.cfg.AuthPrefix + "/authorize",
			TokenURL:  loopbackOrigin + a.cfg.AuthPrefix + "/token",
			AuthStyle: oauth2.AuthStyleInHeader,
		},
		RedirectURL: redirect,
		Scopes:      []string{"openid"},
	}
}

func (a *App) loopbackContext(ctx context.Context) context.Context {
	return context.WithValue(ctx, oauth2.HTTPClient, a.http)
}

// redirectURI is the callback as the browser reaches it.
func (a *App) redirectURI(r *http.Request) (string, bool) {
	if a.cfg.PublicURL != "" {
		return a.cfg.PublicURL + CallbackPath, true
	}
	if !validHost(r.Host) {
		return "", false
	}
	scheme := "http"
	if i18n.TLS(r) {
		scheme = "https"
	}
	return scheme + "://" + r.Host + CallbackPath, true
}

// validHost is a Host header fit for a URL: a name or address and a port.
func validHost(h string) bool {
	if h == "" || len(h) > 255 {
		return false
	}
	for _, c := range h {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '.', c == '-', c == ':', c == '[', c == ']':
		default:
			return false
		}
	}
	return true
}

// cleanReturn accepts only a path of the Explorer, so the sign-in can
// never send the browser elsewhere.
func cleanReturn(s string) string {
	u, err := url.Parse(s)
	if err != nil || s == "" || u.IsAbs() || u.Host != "" || u.Opaque != "" || u.User != nil ||
		strings.HasPrefix(s, "//") || strings.ContainsAny(s, "\\\r\n\t") ||
		!strings.HasPrefix(u.Path, Home) || !strings.HasPrefix(u.EscapedPath(), Home) || strings.Contains(u.Path, "..") ||
		u.Path == LoginPath || u.Path == CallbackPath || u.Path == LogoutPath {
		return Home
	}
	u.Fragment, u.RawFragment = "", ""
	return u.String()
}

// login begins the authorization code flow with PKCE: the pending flow
// goes to the browser in a sealed cookie of its own, then the browser to
// the identity provider's login page. Nothing is stored on the server.
func (a *App) login(q *req) error {
	if !a.Configured() {
		return fail(http.StatusServiceUnavailable, "error.notconfigured")
	}
	redirect, ok := a.redirectURI(q.r)
	if !ok {
		return fail(http.StatusBadRequest, "error.badrequest")
	}
	ret := cleanReturn(q.r.URL.Query().Get("return"))
	if len(ret) > maxReturn {
		ret = Home
	}
	now := a.cfg.Now()
	f := Flow{State: randomID(), Verifier: oauth2.GenerateVerifier(), RedirectURI: redirect, ReturnTo: ret,
		Expires: now.Add(a.cfg.FlowTTL).Unix()}
	value, err := a.flows.seal(f)
	if err == nil && len(value) > maxFlowCookie {
		// A return path of characters JSON escapes: home rather than a
		// cookie the browser would drop.
		f.ReturnTo = Home
		value, err = a.flows.seal(f)
	}
	if err != nil {
		return err
	}
	a.pruneFlows(q, now)
	http.SetCookie(q.w, a.flowCookie(q.r, flowCookieName(f.State), value, a.cfg.FlowTTL))
	target := a.oauth(redirect).AuthCodeURL(f.State, oauth2.S256ChallengeOption(f.Verifier),
		oauth2.SetAuthURLParam(i18n.Param, string(q.lang)))
	http.Redirect(q.w, q.r, target, http.StatusFound)
	return nil
}

// pruneFlows deletes the browser's sign-in cookies that are spoilt or
// expired, and the oldest beyond maxFlows-1, making room for a new one.
func (a *App) pruneFlows(q *req, now time.Time) {
	type kept struct {
		name    string
		expires int64
	}
	var live []kept
	for _, c := range flowCookies(q.r) {
		f, err := a.flows.open(c.Name, c.Value, now.Unix())
		if err != nil {
			http.SetCookie(q.w, a.flowCookie(q.r, c.Name, "", 0))
			continue
		}
		live = append(live, kept{c.Name, f.Expires})
	}
	sort.Slice(live, func(i, j int) bool { return live[i].expires < live[j].expires })
	for len(live) > maxFlows-1 {
		http.SetCookie(q.w, a.flowCookie(q.r, live[0].name, "", 0))
		live = live[1:]
	}
}

// callback finishes the flow: the state must name a sign-in cookie of
// this browser, which opens under the gateway's key, names the whole
// state and has not expired; it is spent at once (deleted in the browser
// and remembered here, so a replayed callback is refused); the code is
// exchanged with the flow's verifier; the signed-in session is new.
func (a *App) callback(q *req) error {
	if !a.Configured() {
		return fail(http.StatusServiceUnavailable, "error.notconfigured")
	}
	vals := q.r.URL.Query()
	state := vals.Get("state")
	if !wellFormedID(state) {
		return fail(http.StatusBadRequest, "error.state")
	}
	name := flowCookieName(state)
	c, err := q.r.Cookie(name)
	if err != nil {
		return fail(http.StatusBadRequest, "error.nosignin")
	}
	// Spent whatever happens next: the cookie goes.
	http.SetCookie(q.w, a.flowCookie(q.r, name, "", 0))
	now := a.cfg.Now()
	flow, err := a.flows.open(name, c.Value, now.Unix())
	switch {
	case errors.Is(err, errFlowExpired):
		return fail(http.StatusBadRequest, "error.nosignin")
	case err != nil || subtle.ConstantTimeCompare([]byte(flow.State), []byte(state)) != 1:
		return fail(http.StatusBadRequest, "error.state")
	case !a.flows.spend(flow, now.Unix()):
		return fail(http.StatusBadRequest, "error.state")
	}
	if e := vals.Get("error"); e != "" {
		return fail(http.StatusBadRequest, "error.denied")
	}
	code := vals.Get("code")
	if code == "" {
		return fail(http.StatusBadRequest, "error.nocode")
	}
	ctx := a.loopbackContext(q.r.Context())
	tok, err := a.oauth(flow.RedirectURI).Exchange(ctx, code, oauth2.VerifierOption(flow.Verifier))
	if err != nil {
		a.cfg.Log.InfoContext(q.r.Context(), "explorer: code exchange failed", "err", err)
		return fail(http.StatusBadGateway, "error.exchange")
	}
	tok = a.stamp(tok)
	user, err := a.userInfo(ctx, tok)
	if err != nil {
		a.cfg.Log.WarnContext(q.r.Context(), "explorer: userinfo failed", "err", err)
		return fail(http.StatusBadGateway, "error.exchange")
	}
	now = a.cfg.Now()
	// Always a new id: one planted before sign-in is worth nothing after.
	signed := &Session{ID: randomID(), CSRF: randomID(), Created: now, Expires: now.Add(a.cfg.SessionTTL), User: user, Token: tok}
	if err := a.cfg.Store.Put(q.r.Context(), signed); err != nil {
		return err
	}
	if q.sess != nil {
		_ = a.cfg.Store.Delete(q.r.Context(), q.sess.ID)
	}
	a.setCookie(q, signed.ID)
	http.Redirect(q.w, q.r, flow.ReturnTo, http.StatusSeeOther)
	return nil
}

// stamp dates the token's expiry by the Explorer's clock (the library uses
// the wall clock), from expires_in; an answer without it (the spec's answer
// shape, -auth-answers spec) leaves the access token's own exp, without
// which every request would refresh.
func (a *App) stamp(tok *oauth2.Token) *oauth2.Token {
	if tok.ExpiresIn > 0 {
		tok.Expiry = a.cfg.Now().Add(time.Duration(tok.ExpiresIn) * time.Second)
	} else if exp := accessExpiry(tok.AccessToken); exp > 0 {
		tok.Expiry = time.Unix(exp, 0)
	}
	return tok
}

// accessExpiry is the exp claim of a JWT, unverified (0 when it has none):
// only a date to refresh by; the token is verified where it is used.
func accessExpiry(jwt string) int64 {
	parts := strings.Split(jwt, ".")
	if len(parts) != 3 {
		return 0
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return 0
	}
	var c struct{ Exp int64 }
	_ = json.Unmarshal(b, &c)
	return c.Exp
}

// userInfo asks the identity provider who the token's user is.
func (a *App) userInfo(ctx context.Context, tok *oauth2.Token) (*User, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, loopbackOrigin+a.cfg.AuthPrefix+"/userinfo", nil)
	if err != nil {
		return nil, err
	}
	tok.SetAuthHeader(req)
	res, err := a.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(res.Body, 64<<10))
	if res.StatusCode != http.StatusOK {
		return nil, errors.New("userinfo: " + res.Status)
	}
	var ui struct {
		Sub, Name, RealName, Email string
	}
	var raw map[string]any
	if err := json.Unmarshal(body, &raw); err != nil {
		return nil, err
	}
	str := func(k string) string { s, _ := raw[k].(string); return s }
	ui.Sub, ui.Name, ui.RealName, ui.Email = str("sub"), str("name"), str("real_name"), str("email")
	// The answer's names follow -auth-answers: sub (both), id (samply,
	// the same value), or neither (spec): then the token's own subject.
	if ui.Sub == "" {
		ui.Sub = str("id")
	}
	if ui.Sub == "" {
		id, err := a.cfg.Verifier.Verify(ctx, tok.AccessToken)
		if err != nil {
			return nil, fmt.Errorf("userinfo without a subject, and the token: %w", err)
		}
		ui.Sub = id.Subject
	}
	u := &User{Subject: ui.Sub, Name: ui.Name, Email: ui.Email}
	if u.Name == "" {
		u.Name = ui.RealName
	}
	if u.Name == "" {
		u.Name = u.Email
	}
	return u, nil
}

// logout revokes the refresh token (RFC 7009; the access token dies with
// it at the identity provider) and forgets the session.
func (a *App) logout(q *req) error {
	if !sameOrigin(q.r) {
		return fail(http.StatusForbidden, "error.crosssite")
	}
	q.r.Body = http.MaxBytesReader(q.w, q.r.Body, 8<<10)
	if err := q.r.ParseForm(); err != nil {
		return formError(err)
	}
	if q.sess == nil {
		http.SetCookie(q.w, a.cookie(q.r, ""))
		http.Redirect(q.w, q.r, Home, http.StatusSeeOther)
		return nil
	}
	if subtle.ConstantTimeCompare([]byte(q.r.PostForm.Get(CSRFField)), []byte(q.sess.CSRF)) != 1 {
		return fail(http.StatusForbidden, "error.csrf")
	}
	if q.sess.Token != nil && a.Configured() {
		for _, t := range []struct{ tok, hint string }{{q.sess.Token.RefreshToken, "refresh_token"}, {q.sess.Token.AccessToken, "access_token"}} {
			if t.tok == "" {
				continue
			}
			if err := a.revoke(q.r.Context(), t.tok, t.hint); err != nil {
				a.cfg.Log.WarnContext(q.r.Context(), "explorer: revoking a token failed", "hint", t.hint, "err", err)
			}
		}
	}
	_ = a.cfg.Store.Delete(q.r.Context(), q.sess.ID)
	http.SetCookie(q.w, a.cookie(q.r, ""))
	http.Redirect(q.w, q.r, Home, http.StatusSeeOther)
	return nil
}

func (a *App) revoke(ctx context.Context, token, hint string) error {
	form := url.Values{"token": {token}, "token_type_hint": {hint}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, loopbackOrigin+a.cfg.AuthPrefix+"/revoke", strings.NewReader(form.Encode()))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(url.QueryEscape(a.cfg.ClientID), url.QueryEscape(a.cfg.ClientSecret))
	res, err := a.http.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(res.Body, 1<<10))
		return errors.New("revoke: " + res.Status + ": " + string(bytes.TrimSpace(b)))
	}
	return nil
}

// sameOrigin: state-changing requests must come from the Explorer's own
// pages. Browsers send Sec-Fetch-Site and Origin on every POST; the form's
// CSRF token covers browsers that send neither.
func sameOrigin(r *http.Request) bool {
	if s := r.Header.Get("Sec-Fetch-Site"); s != "" && s != "same-origin" {
		return false
	}
	if o := r.Header.Get("Origin"); o != "" {
		u, err := url.Parse(o)
		if err != nil || u.Host != r.Host {
			return false
		}
	}
	return true
}

func (a *App) setCookie(q *req, id string) { http.SetCookie(q.w, a.cookie(q.r, id)) }

// cookie is the session cookie: HttpOnly, SameSite=Lax (the callback is a
// top-level navigation from the login page), Secure over TLS, only for
// the Explorer's paths, gone when the browser closes. An empty id deletes it.
func (a *App) cookie(r *http.Request, id string) *http.Cookie {
	c := &http.Cookie{Name: SessionCookie, Value: id, Path: Prefix, HttpOnly: true, SameSite: http.SameSiteLaxMode,
		Secure: i18n.TLS(r) || strings.HasPrefix(a.cfg.PublicURL, "https://")}
	if id == "" {
		c.MaxAge = -1
	}
	return c
}

// loopbackOrigin is the origin of in-process requests; its host is never
// dialled.
const loopbackOrigin = "http://gateway.loopback"

// loopback hands a request to the gateway's own handler in process.
type loopback struct{ h http.Handler }

func (l loopback) RoundTrip(req *http.Request) (*http.Response, error) {
	r := req.Clone(req.Context())
	if r.Body == nil {
		r.Body = http.NoBody
	}
	r.RequestURI = r.URL.RequestURI()
	r.RemoteAddr = "127.0.0.1:0"
	rec := &recorder{header: http.Header{}}
	l.h.ServeHTTP(rec, r)
	if rec.status == 0 {
		rec.status = http.StatusOK
	}
	return &http.Response{
		Status: http.StatusText(rec.status), StatusCode: rec.status, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: rec.header, Body: io.NopCloser(bytes.NewReader(rec.body.Bytes())), ContentLength: int64(rec.body.Len()), Request: req,
	}, nil
}

type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header { return r.header }
func (r *recorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
}
func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.body.Write(b)
}
