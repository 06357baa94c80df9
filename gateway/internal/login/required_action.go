package login

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	authv1 "fris.dev/proto/auth/v1"
)

// Required actions (docs/security.md, Required actions): an operator
// required this account to change its password or verify its address, so
// the sign-in's answer (the password's, the second factor's or a
// passkey's) holds no code. A new password is asked for on a page of its
// own, with the pending sign-in in the second step's cookie (PendingCookie)
// and the authorization request in the form, as the second step does; a
// verification stops the sign-in with a page saying a link was mailed.
const (
	// NewPasswordField is the new password's form field; its presence
	// marks the form as the required change.
	NewPasswordField = "required_new_password"
	// NewPasswordAgain is the field that repeats it.
	NewPasswordAgain = "required_new_password2"
)

// Messages of the required actions.
const (
	ChangeRequired   = "Your administrator requires a new password before you continue."
	VerifyRequired   = "Your administrator requires you to confirm your email address before you continue. We have sent you a link: follow it, then sign in again."
	ChangeTitle      = "Choose a new password"
	VerifyTitle      = "Confirm your email address" // in messages_account.go
	SameAsOldRefused = "Choose a password other than the current one."
)

type changePasswordPage struct {
	base
	Title, Nonce, ClientName, Action, CSRF, Error, Restart, Rule string
	MinLength                                                    int
	Hidden                                                       []hidden
	// Codes: the recovery codes of a second factor enrolled just before,
	// shown once here since the sign-in goes on.
	Codes []string
}

// proceed answers a sign-in step's result: a code goes to the client (with
// a new factor's recovery codes first), a required action to its page.
func (h *Handler) proceed(w http.ResponseWriter, r *http.Request, vals url.Values, res *authv1.LoginResponse) {
	switch {
	case res.GetVerifyEmailSent():
		h.setPending(w, r, "", -1)
		h.setCSRF(w, r, "", -1)
		h.setDevice(w, r, res.GetDevice())
		h.notice(w, r, http.StatusOK, noticePage{Title: VerifyTitle, Message: VerifyRequired, Codes: res.GetRecoveryCodes()})
	case res.GetChangePassword() && res.GetPending() != "":
		h.setPending(w, r, res.GetPending(), pendingMaxAge)
		h.setDevice(w, r, res.GetDevice())
		h.changePage(w, r, http.StatusOK, vals, res.GetRecoveryCodes(), "")
	case res.GetPending() != "":
		h.askSecondFactor(w, r, vals, res)
	case len(res.GetRecoveryCodes()) > 0:
		h.showRecoveryCodes(w, r, vals, res)
	default:
		h.signedIn(w, r, vals, res)
	}
}

func (h *Handler) changePage(w http.ResponseWriter, r *http.Request, code int, vals url.Values, recovery []string, msg string, args ...any) {
	ar, err := h.authorize(r, authorizeRequest(vals))
	if err != nil {
		h.failRPC(w, r, err)
		return
	}
	p := changePasswordPage{base: newBase(w, r, ""), Title: ChangeTitle, Nonce: token(16), ClientName: ar.GetClientName(), Action: h.action,
		Restart: h.restart(vals), Codes: recovery}
	if msg != "" {
		p.Error = p.T(msg)
		if len(args) > 0 {
			p.Error = fmt.Sprintf(p.T(msg), args...)
		}
	}
	if p.ClientName == "" {
		p.ClientName = vals.Get("client_id")
	}
	ctx, cancel := h.callContext(r)
	defer cancel()
	p.Rule, p.MinLength = h.passwordRule(ctx, r, p.base)
	for _, name := range params {
		if v := vals.Get(name); v != "" {
			p.Hidden = append(p.Hidden, hidden{name, v})
		}
	}
	p.CSRF = h.csrfToken(r)
	h.setCSRF(w, r, p.CSRF, h.cfg.CSRFMaxAge)
	h.render(w, code, "change_password.html", p.Nonce, p, formTarget(ar.GetRedirectUri()))
}

// changeSubmit sets the required new password and goes on with the
// sign-in.
func (h *Handler) changeSubmit(w http.ResponseWriter, r *http.Request, vals url.Values) {
	pending := h.pending(r)
	if pending == "" {
		h.again(w, r, http.StatusUnauthorized, vals, authorizeRequest(vals), "", PendingExpired)
		return
	}
	pw, again := vals.Get(NewPasswordField), vals.Get(NewPasswordAgain)
	switch {
	case pw == "" || again == "":
		h.changePage(w, r, http.StatusBadRequest, vals, nil, MissingPasswords)
		return
	case pw != again:
		h.changePage(w, r, http.StatusBadRequest, vals, nil, PasswordsDiffer)
		return
	}
	ctx, cancel := h.callContext(r)
	defer cancel()
	res, err := h.cfg.Client.LoginChangePassword(ctx, &authv1.LoginChangePasswordRequest{Request: authorizeRequest(vals), Pending: pending, NewPassword: pw, Device: h.device(r)})
	switch status.Code(err) {
	case codes.OK:
	case codes.Unauthenticated:
		h.setPending(w, r, "", -1)
		h.again(w, r, http.StatusUnauthorized, vals, authorizeRequest(vals), "", PendingExpired)
		return
	case codes.InvalidArgument: // the policy, or the old password: the sign-in stands
		msg, args := policyRefusal(err)
		if strings.Contains(status.Convert(err).Message(), "other than the current") {
			msg, args = SameAsOldRefused, nil
		}
		h.changePage(w, r, http.StatusBadRequest, vals, nil, msg, args...)
		return
	default:
		h.failRPC(w, r, err)
		return
	}
	if res.GetPending() == "" {
		h.setPending(w, r, "", -1)
	}
	h.proceed(w, r, vals, res)
}
