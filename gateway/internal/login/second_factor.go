package login

import (
	"html/template"
	"net/http"
	"net/url"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	authv1 "fris.dev/proto/auth/v1"
)

// The second step of a sign-in whose account has a second factor (or
// whose role requires one it lacks): the password step answered a pending
// sign-in instead of a code. Its token goes into a cookie of this browser,
// scoped to the auth prefix, for as long as the auth service keeps it; the
// page asks for the authenticator app's code or a recovery code (or, for
// an enrolment, shows the new secret first) and posts it with the
// authorization request, which the auth service checks against the one
// the password was given for. docs/security.md, Second factor.
const (
	// PendingCookie carries the pending sign-in's token.
	PendingCookie = "fris_2fa"
	// SecondFactorField is the code's form field; its presence marks the
	// form as the second step.
	SecondFactorField = "second_factor_code"
	pendingMaxAge     = 5 * time.Minute
)

// Messages of the second step.
const (
	WrongSecondFactor = "The code is wrong. Enter the current code from your authenticator app, or one of your recovery codes."
	PendingExpired    = "The sign-in has expired. Sign in again with your password."
	MissingCode       = "Enter the code from your authenticator app."
)

type secondFactorPage struct {
	base
	Title, Nonce, ClientName, Action, CSRF, Error, Restart string
	Hidden                                                 []hidden
	// Enrol: the account's role requires a second factor; URI and Secret
	// are the new one to add to an authenticator app.
	Enrol       bool
	URI, Secret string
	// Link is URI as a link's target (html/template refuses the otpauth
	// scheme unless told it is safe; the URI is the auth service's).
	Link template.URL
}

type recoveryPage struct {
	base
	Title, Nonce, Continue string
	Codes                  []string
}

// pending is the browser's pending sign-in token.
func (h *Handler) pending(r *http.Request) string {
	if c, err := r.Cookie(PendingCookie); err == nil && wellFormed(c.Value) {
		return c.Value
	}
	return ""
}

func (h *Handler) setPending(w http.ResponseWriter, r *http.Request, value string, maxAge time.Duration) {
	path := h.cfg.Prefix
	if path == "" {
		path = "/"
	}
	c := &http.Cookie{Name: PendingCookie, Value: value, Path: path, HttpOnly: true, SameSite: http.SameSiteStrictMode,
		Secure: secureRequest(r), MaxAge: int(maxAge / time.Second)}
	if maxAge < 0 {
		c.MaxAge = -1
	}
	http.SetCookie(w, c)
}

// askSecondFactor renders the second step after the password step's
// pending answer (res), keeping the pending token in the cookie.
func (h *Handler) askSecondFactor(w http.ResponseWriter, r *http.Request, vals url.Values, res *authv1.LoginResponse) {
	h.setPending(w, r, res.GetPending(), pendingMaxAge)
	h.setDevice(w, r, res.GetDevice())
	h.secondPage(w, r, http.StatusOK, vals, res.GetEnrol(), res.GetTotpUri(), res.GetTotpSecret(), "")
}

func (h *Handler) secondPage(w http.ResponseWriter, r *http.Request, code int, vals url.Values, enrol bool, uri, secret, msg string) {
	ar, err := h.authorize(r, authorizeRequest(vals))
	if err != nil {
		h.failRPC(w, r, err)
		return
	}
	p := secondFactorPage{base: newBase(w, r, ""), Title: "Two-step sign-in", Nonce: token(16), ClientName: ar.GetClientName(), Action: h.action,
		Error: msg, Restart: h.restart(vals), Enrol: enrol, URI: uri, Secret: secret}
	if strings.HasPrefix(uri, "otpauth://totp/") && !strings.ContainsAny(uri, "\"'<> \t\r\n") {
		p.Link = template.URL(uri) //nolint:gosec // the auth service's otpauth URI, checked just above
	}
	if enrol {
		p.Title = "Add a second factor"
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
	h.render(w, code, "second_factor.html", p.Nonce, p, formTarget(ar.GetRedirectUri()))
}

// secondSubmit checks the second step's code.
func (h *Handler) secondSubmit(w http.ResponseWriter, r *http.Request, vals url.Values) {
	pending := h.pending(r)
	if pending == "" {
		h.again(w, r, http.StatusUnauthorized, vals, authorizeRequest(vals), "", PendingExpired)
		return
	}
	code := strings.TrimSpace(vals.Get(SecondFactorField))
	if code == "" {
		h.secondPage(w, r, http.StatusBadRequest, vals, false, "", "", MissingCode)
		return
	}
	ctx, cancel := h.callContext(r)
	defer cancel()
	res, err := h.cfg.Client.LoginSecondFactor(ctx, &authv1.LoginSecondFactorRequest{Request: authorizeRequest(vals), Pending: pending, Code: code, Device: h.device(r)})
	if status.Code(err) == codes.Unauthenticated {
		if strings.Contains(status.Convert(err).Message(), "expired") {
			h.setPending(w, r, "", -1)
			h.again(w, r, http.StatusUnauthorized, vals, authorizeRequest(vals), "", PendingExpired)
			return
		}
		h.secondPage(w, r, http.StatusUnauthorized, vals, false, "", "", WrongSecondFactor)
		return
	}
	if err != nil {
		h.failRPC(w, r, err)
		return
	}
	if res.GetPending() == "" {
		h.setPending(w, r, "", -1)
	}
	h.proceed(w, r, vals, res)
}

// showRecoveryCodes shows a new factor's recovery codes once, then the
// browser goes on to the client with the code.
func (h *Handler) showRecoveryCodes(w http.ResponseWriter, r *http.Request, vals url.Values, res *authv1.LoginResponse) {
	loc, err := Redirect(res.GetRedirectUri(), res.GetCode(), vals.Get("state"))
	if err != nil || res.GetCode() == "" {
		h.signedIn(w, r, vals, res) // reports the unusable result
		return
	}
	h.setCSRF(w, r, "", -1)
	p := recoveryPage{base: newBase(w, r, ""), Title: "Save your recovery codes", Nonce: token(16), Continue: loc, Codes: res.GetRecoveryCodes()}
	h.render(w, http.StatusOK, "recovery_codes.html", p.Nonce, p, "")
}
