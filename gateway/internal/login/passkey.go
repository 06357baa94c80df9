package login

import (
	_ "embed"
	"encoding/json"
	"net/http"
	"net/url"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"fris.dev/gateway/internal/apierr"
	"fris.dev/gateway/internal/httpx"
	authv1 "fris.dev/proto/auth/v1"
)

// Signing in with a passkey (WebAuthn): the login page's script asks
// PasskeyPath for the ceremony's options (a POST of the page's form: its
// CSRF token and the authorization request), lets the browser's
// authenticator answer, and posts the answer with the same form to the
// authorize path, which ends as a password sign-in does: a code and the
// redirect, or the page again with the message.
const (
	PasskeyPath   = "/passkey"
	PasskeyScript = "/passkey.js"
	// The login form's fields that carry the ceremony and its answer.
	PasskeyCeremonyField = "passkey_ceremony"
	PasskeyAnswerField   = "passkey_credential"
	// WrongPasskey never says why: unknown, of a disabled account, or a
	// signature that does not verify.
	WrongPasskey = "The passkey was not accepted."
)

//go:embed static/passkey.js
var passkeyJS []byte

// passkeyScript serves the login page's script (the page's CSP allows
// scripts of this origin only).
func (h *Handler) passkeyScript(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		apierr.WriteJSON(w, http.StatusMethodNotAllowed, "method "+r.Method+" not allowed here")
		return
	}
	hd := w.Header()
	hd.Set("Content-Type", "text/javascript; charset=utf-8")
	hd.Set("Cache-Control", "no-cache")
	_, _ = w.Write(passkeyJS)
}

// passkeyBegin answers the page's script with the ceremony's options, as
// JSON: {"ceremony": ..., "options": {...}}.
func (h *Handler) passkeyBegin(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		apierr.WriteJSON(w, http.StatusMethodNotAllowed, "method "+r.Method+" not allowed here")
		return
	}
	vals, ok := h.readForm(w, r)
	if !ok {
		return
	}
	ctx, cancel := h.callContext(r)
	defer cancel()
	res, err := h.cfg.Client.BeginPasskeyLogin(ctx, &authv1.BeginPasskeyLoginRequest{Request: authorizeRequest(vals)})
	if err != nil {
		code, msg := apierr.FromGRPC(err)
		apierr.SetRetryAfter(w.Header(), err)
		if code >= 500 && status.Code(err) != codes.Unimplemented {
			h.cfg.Log.ErrorContext(r.Context(), "auth service call failed", "err", err, "request_id", httpx.RequestID(r.Context()))
			msg = "Signing in is temporarily not possible. Try again later."
		}
		apierr.WriteJSON(w, code, sentence(msg))
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	_ = json.NewEncoder(w).Encode(struct {
		Ceremony string          `json:"ceremony"`
		Options  json.RawMessage `json:"options"`
	}{res.GetCeremony(), json.RawMessage(res.GetOptions())})
}

// passkeySubmit finishes a passkey sign-in posted with the login form.
func (h *Handler) passkeySubmit(w http.ResponseWriter, r *http.Request, vals url.Values) {
	areq := authorizeRequest(vals)
	ctx, cancel := h.callContext(r)
	defer cancel()
	res, err := h.cfg.Client.FinishPasskeyLogin(ctx, &authv1.FinishPasskeyLoginRequest{Request: areq,
		Ceremony: vals.Get(PasskeyCeremonyField), Credential: vals.Get(PasskeyAnswerField), Device: h.device(r)})
	switch status.Code(err) {
	case codes.OK:
	case codes.Unauthenticated:
		h.again(w, r, http.StatusUnauthorized, vals, areq, "", WrongPasskey)
		return
	case codes.InvalidArgument:
		h.again(w, r, http.StatusBadRequest, vals, areq, "", sentence(status.Convert(err).Message()))
		return
	default:
		h.failRPC(w, r, err)
		return
	}
	h.proceed(w, r, vals, res)
}
