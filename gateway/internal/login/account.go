package login

import (
	"context"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"fris.dev/gateway/internal/httpx"
	"fris.dev/gateway/internal/i18n"
	"fris.dev/pkg/identity"
	authv1 "fris.dev/proto/auth/v1"
)

// The self-service pages beside the authorize page, below the same prefix
// (so they share its CSRF cookie): asking for a password-reset link, and
// the page the mailed link opens. The auth service decides everything
// (whether an account exists, whether a link is live, the password policy);
// these pages render, protect the forms and never say whether an address
// has an account.
const (
	ForgotPath = "/forgot"
	ResetPath  = "/reset"
	VerifyPath = "/verify"
)

// Messages of the self-service pages.
const (
	MissingEmail     = "Enter your email address."
	InvalidEmail     = "Enter a valid email address."
	MissingPasswords = "Enter the new password twice."
	PasswordsDiffer  = "The two passwords differ."
	DeadLink         = "This link has expired or has been used already."
	LinkSent         = "If an account has this address, we have sent it a link to set a new password. The link works once, for a short time."
	PasswordSet      = "Your password has been changed, and you have been signed out everywhere. Sign in with your new password."
	EmailVerified    = "Your email address is confirmed. Thank you."
	// CredentialsRemoved heads the list of what the owner's proof of the
	// address removed (docs/security.md, Credential lifecycle).
	CredentialsRemoved = "Nobody had proven these ways to sign in to your account, so they have been removed, and every sign-in made with them has ended:"
)

type forgotPage struct {
	base
	Title, Nonce, Action, CSRF, Email, Error, Back string
	Hidden                                         []hidden
}

type resetPage struct {
	base
	Title, Nonce, Action, CSRF, Email, Token, Error string
	// Rule is the password policy in the page's language, MinLength its
	// least length (password_policy.go); "" and 0 when unknown.
	Rule      string
	MinLength int
}

// noticePage says what happened, with one link onwards (none when Link is
// empty).
type noticePage struct {
	base
	Title, Nonce, Message, Link, LinkText string
	Alert                                 bool
	// Removed: the credentials the owner's reset or verification removed,
	// under RemovedIntro.
	Removed      []removedCredential
	RemovedIntro string
	// Codes: a new second factor's recovery codes, shown once (a sign-in
	// that enrolled one and then stopped for a required action).
	Codes []string
}

// removedCredential is a removed credential as the notice names it.
type removedCredential struct {
	Kind, ID, Description, Added, AddedBy string
}

func removedCredentials(cs []*authv1.Credential) []removedCredential {
	var out []removedCredential
	for _, c := range cs {
		r := removedCredential{Kind: c.GetKind(), ID: c.GetId(), Description: c.GetDescription(), AddedBy: c.GetAddedBy()}
		if c.GetCreated() != 0 {
			r.Added = time.Unix(int64(c.GetCreated()), 0).UTC().Format("2006-01-02 15:04 UTC")
		}
		out = append(out, r)
	}
	return out
}

// forgot serves GET and POST of the forgot-password page. The authorize
// request's parameters ride along, so "back to sign in" returns to it.
func (h *Handler) forgot(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		vals, msg := single(r.URL.Query())
		if msg != "" {
			h.fail(w, r, http.StatusBadRequest, msg, "")
			return
		}
		h.forgotForm(w, r, http.StatusOK, vals, "", "")
		return
	}
	vals, ok := h.readForm(w, r)
	if !ok {
		return
	}
	email := strings.TrimSpace(vals.Get("email"))
	if email == "" {
		h.forgotForm(w, r, http.StatusBadRequest, vals, email, MissingEmail)
		return
	}
	lang, _ := i18n.Choose(r)
	ctx, cancel := h.accountContext(r)
	defer cancel()
	_, err := h.cfg.Client.RequestPasswordReset(ctx, &authv1.RequestPasswordResetRequest{Email: email, Lang: string(lang), Device: h.device(r)})
	if status.Code(err) == codes.InvalidArgument {
		h.forgotForm(w, r, http.StatusBadRequest, vals, email, InvalidEmail)
		return
	}
	if err != nil {
		h.failRPC(w, r, err)
		return
	}
	h.notice(w, r, http.StatusOK, noticePage{Title: "Check your mail", Message: LinkSent, Link: h.restart(vals), LinkText: "Back to sign in"})
}

func (h *Handler) forgotForm(w http.ResponseWriter, r *http.Request, code int, vals url.Values, email, msg string) {
	again := h.cfg.Prefix + ForgotPath
	if q := authorizeQuery(vals); q != "" {
		again += "?" + q
	}
	p := forgotPage{base: newBase(w, r, again), Title: "Forgot your password?", Nonce: token(16), Action: h.cfg.Prefix + ForgotPath,
		Email: email, Error: msg, Back: h.restart(vals)}
	for _, name := range params {
		if v := vals.Get(name); v != "" {
			p.Hidden = append(p.Hidden, hidden{name, v})
		}
	}
	p.CSRF = h.csrfToken(r)
	h.setCSRF(w, r, p.CSRF, h.cfg.CSRFMaxAge)
	h.render(w, code, "forgot.html", p.Nonce, p, "")
}

// reset serves the mailed link: GET shows the form while the link is live,
// POST sets the password and spends the link.
func (h *Handler) reset(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		vals, msg := single(r.URL.Query())
		if msg != "" {
			h.fail(w, r, http.StatusBadRequest, msg, "")
			return
		}
		h.resetForm(w, r, http.StatusOK, vals.Get("token"), "")
		return
	}
	vals, ok := h.readForm(w, r)
	if !ok {
		return
	}
	tok, pw, again := vals.Get("token"), vals.Get("password"), vals.Get("password2")
	switch {
	case pw == "" || again == "":
		h.resetForm(w, r, http.StatusBadRequest, tok, MissingPasswords)
		return
	case pw != again:
		h.resetForm(w, r, http.StatusBadRequest, tok, PasswordsDiffer)
		return
	}
	ctx, cancel := h.accountContext(r)
	defer cancel()
	res, err := h.cfg.Client.ResetPassword(ctx, &authv1.ResetPasswordRequest{Token: tok, Password: pw})
	switch status.Code(err) {
	case codes.OK:
	case codes.InvalidArgument: // the password policy: the link is not spent
		msg, args := policyRefusal(err)
		h.resetForm(w, r, http.StatusBadRequest, tok, msg, args...)
		return
	case codes.NotFound:
		h.deadLink(w, r)
		return
	default:
		h.failRPC(w, r, err)
		return
	}
	h.setCSRF(w, r, "", -1)
	h.notice(w, r, http.StatusOK, noticePage{Title: "Password changed", Message: PasswordSet, Removed: removedCredentials(res.GetRemoved())})
}

// resetForm shows the reset form while the link is live, with the message
// msg (a key of the catalogue, formatted with args when there are any).
func (h *Handler) resetForm(w http.ResponseWriter, r *http.Request, code int, tok, msg string, args ...any) {
	ctx, cancel := h.accountContext(r)
	defer cancel()
	res, err := h.cfg.Client.CheckAccountToken(ctx, &authv1.CheckAccountTokenRequest{Token: tok, Purpose: authv1.AccountTokenPurpose_ACCOUNT_TOKEN_PURPOSE_PASSWORD_RESET})
	if status.Code(err) == codes.NotFound || (err == nil && tok == "") {
		h.deadLink(w, r)
		return
	}
	if err != nil {
		h.failRPC(w, r, err)
		return
	}
	p := resetPage{base: newBase(w, r, h.cfg.Prefix+ResetPath+"?"+url.Values{"token": {tok}}.Encode()), Title: "Set a new password", Nonce: token(16),
		Action: h.cfg.Prefix + ResetPath, Email: res.GetEmail(), Token: tok, Error: msg}
	if len(args) > 0 {
		p.Error = fmt.Sprintf(p.T(msg), args...)
	}
	p.Rule, p.MinLength = h.passwordRule(ctx, r, p.base)
	p.CSRF = h.csrfToken(r)
	h.setCSRF(w, r, p.CSRF, h.cfg.CSRFMaxAge)
	h.render(w, code, "reset.html", p.Nonce, p, "")
}

func (h *Handler) deadLink(w http.ResponseWriter, r *http.Request) {
	h.notice(w, r, http.StatusNotFound, noticePage{Title: "This link cannot be used", Message: DeadLink, Alert: true,
		Link: h.cfg.Prefix + ForgotPath, LinkText: "Ask for a new link"})
}

func (h *Handler) notice(w http.ResponseWriter, r *http.Request, code int, p noticePage) {
	p.base, p.Nonce = newBase(w, r, ""), token(16)
	if len(p.Removed) > 0 {
		p.RemovedIntro = CredentialsRemoved
	}
	h.render(w, code, "notice.html", p.Nonce, p, "")
}

// readForm is what every form POST of these pages passes first: sent from
// this origin, as a form, within the size limit, each field once, with
// the CSRF token of the page. ok false: the answer is written.
func (h *Handler) readForm(w http.ResponseWriter, r *http.Request) (url.Values, bool) {
	// The forms only ever post to their own origin. Browsers say where a
	// request comes from; refuse anything from another site outright.
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" && site != "none" {
		h.fail(w, r, http.StatusForbidden, "The sign-in form was sent from another site.", "")
		return nil, false
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/x-www-form-urlencoded" {
		h.fail(w, r, http.StatusUnsupportedMediaType, "The sign-in form must be sent as a form.", "")
		return nil, false
	}
	r.Body = http.MaxBytesReader(w, r.Body, h.cfg.MaxForm)
	if err := r.ParseForm(); err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			h.fail(w, r, http.StatusRequestEntityTooLarge, "The sign-in form is too large.", "")
			return nil, false
		}
		// Text that is not UTF-8 (httpx.CheckBodyText) cannot reach the
		// auth service: it is the sender's mistake, a 400.
		if errors.Is(err, httpx.ErrNotUTF8) {
			h.fail(w, r, http.StatusBadRequest, NotUTF8, "")
			return nil, false
		}
		h.fail(w, r, http.StatusBadRequest, "The sign-in form could not be read.", "")
		return nil, false
	}
	vals, msg := single(r.PostForm)
	if msg != "" {
		h.fail(w, r, http.StatusBadRequest, msg, "")
		return nil, false
	}
	if !h.csrfOK(r, vals.Get(CSRFField)) {
		h.fail(w, r, http.StatusBadRequest, "This sign-in form has expired or was not sent from this page.", h.restart(vals))
		return nil, false
	}
	return vals, true
}

// accountContext is callContext with the prefix the mailed links are to
// use (the auth service builds them from its issuer and this prefix).
func (h *Handler) accountContext(r *http.Request) (context.Context, context.CancelFunc) {
	ctx, cancel := h.callContext(r)
	if h.cfg.Prefix == "" {
		return ctx, cancel
	}
	return metadata.AppendToOutgoingContext(ctx, identity.KeyAuthPrefix, h.cfg.Prefix), cancel
}

// authorizeQuery is the authorize request's parameters as a query, ""
// without a client.
func authorizeQuery(vals url.Values) string {
	q := url.Values{}
	for _, name := range params {
		if v := vals.Get(name); v != "" {
			q.Set(name, v)
		}
	}
	if q.Get("client_id") == "" {
		return ""
	}
	return q.Encode()
}

type verifyPage struct {
	base
	Title, Nonce, Action, CSRF, Email, Token string
}

// verify serves the mailed verification link. GET only shows a button:
// mail scanners follow links, and only the person confirms; POST spends
// the link.
func (h *Handler) verify(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		vals, msg := single(r.URL.Query())
		if msg != "" {
			h.fail(w, r, http.StatusBadRequest, msg, "")
			return
		}
		tok := vals.Get("token")
		ctx, cancel := h.accountContext(r)
		defer cancel()
		res, err := h.cfg.Client.CheckAccountToken(ctx, &authv1.CheckAccountTokenRequest{Token: tok, Purpose: authv1.AccountTokenPurpose_ACCOUNT_TOKEN_PURPOSE_EMAIL_VERIFICATION})
		if status.Code(err) == codes.NotFound || (err == nil && tok == "") {
			h.deadVerifyLink(w, r)
			return
		}
		if err != nil {
			h.failRPC(w, r, err)
			return
		}
		p := verifyPage{base: newBase(w, r, h.cfg.Prefix+VerifyPath+"?"+url.Values{"token": {tok}}.Encode()), Title: "Confirm your email address",
			Nonce: token(16), Action: h.cfg.Prefix + VerifyPath, Email: res.GetEmail(), Token: tok}
		p.CSRF = h.csrfToken(r)
		h.setCSRF(w, r, p.CSRF, h.cfg.CSRFMaxAge)
		h.render(w, http.StatusOK, "verify.html", p.Nonce, p, "")
		return
	}
	vals, ok := h.readForm(w, r)
	if !ok {
		return
	}
	ctx, cancel := h.accountContext(r)
	defer cancel()
	res, err := h.cfg.Client.VerifyEmail(ctx, &authv1.VerifyEmailRequest{Token: vals.Get("token")})
	switch status.Code(err) {
	case codes.OK:
		h.notice(w, r, http.StatusOK, noticePage{Title: "Email address confirmed", Message: EmailVerified, Removed: removedCredentials(res.GetRemoved())})
	case codes.NotFound:
		h.deadVerifyLink(w, r)
	default:
		h.failRPC(w, r, err)
	}
}

// deadVerifyLink: a new verification link is an operator's to send (or
// comes with the next change of address); there is no form to ask for one.
func (h *Handler) deadVerifyLink(w http.ResponseWriter, r *http.Request) {
	h.notice(w, r, http.StatusNotFound, noticePage{Title: "This link cannot be used", Message: DeadLink, Alert: true})
}
