package explorer

import (
	"crypto/subtle"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strconv"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	authv1 "fris.dev/proto/auth/v1"
)

// Passkeys on the account page: the list (name, added, last used), adding
// one (the page's script static/passkeys.js runs the browser's side of the
// ceremony: it asks PasskeyBegin for the options, lets the authenticator
// create the credential and posts it with the add form), and removing one
// (a confirmed form). The auth service runs the ceremonies and keeps the
// credentials; this page only passes the browser's JSON through.
const (
	PasskeysPath   = AccountPath + "/passkeys"
	PasskeyBegin   = PasskeysPath + "/begin"
	PasskeyRemove  = PasskeysPath + "/remove"
	passkeyFormMax = 64 << 10 // the credential's JSON with its attestation
)

func (a *App) passkeyRoutes() []route {
	return []route{
		{pattern: "POST " + PasskeyBegin, access: signedIn, page: a.passkeyBegin},
		{pattern: "POST " + PasskeysPath, access: signedIn, page: a.passkeyAdd},
		{pattern: "POST " + PasskeyRemove, access: signedIn, page: a.passkeyRemove},
	}
}

// passkeyLine is a passkey as the account page lists it.
type passkeyLine struct {
	ID, Name      string
	Added, Used   when
	ConfirmFormID string
}

// passkeyData is the account page's passkey section: Off when the
// identity provider has passkeys off (or could not say), Done what just
// succeeded ("added", "removed"), Error a message in the page's language.
type passkeyData struct {
	Off   bool
	List  []passkeyLine
	Done  string
	Error string
}

// passkeys fills in the section from the identity provider.
func (a *App) passkeys(q *req) passkeyData {
	d := passkeyData{}
	switch q.r.URL.Query().Get("passkey") {
	case "added":
		d.Done = "added"
	case "removed":
		d.Done = "removed"
	}
	if a.cfg.Auth == nil || q.sess.Token == nil {
		d.Off = true
		return d
	}
	res, err := a.cfg.Auth.ListPasskeys(q.bearer(), &authv1.ListPasskeysRequest{})
	if err != nil {
		if status.Code(err) != codes.Unimplemented {
			a.cfg.Log.WarnContext(q.r.Context(), "explorer: account page: passkeys", "err", err)
		}
		d.Off = true
		return d
	}
	for i, p := range res.GetPasskeys() {
		d.List = append(d.List, passkeyLine{ID: p.GetId(), Name: p.GetName(), Added: a.whenUnix(p.GetCreated()), Used: a.whenUnix(p.GetLastUsed()),
			ConfirmFormID: "pk-remove-" + strconv.Itoa(i)})
	}
	return d
}

// passkeyForm: a state-changing request of the passkey section, from this
// origin, with the session's CSRF token (formOK's checks, with room for a
// credential's JSON).
func passkeyForm(q *req) error {
	if !sameOrigin(q.r) {
		return fail(http.StatusForbidden, "error.crosssite")
	}
	q.r.Body = http.MaxBytesReader(q.w, q.r.Body, passkeyFormMax)
	if err := q.r.ParseForm(); err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return fail(http.StatusRequestEntityTooLarge, "error.badrequest")
		}
		return formError(err)
	}
	if subtle.ConstantTimeCompare([]byte(q.r.PostForm.Get(CSRFField)), []byte(q.sess.CSRF)) != 1 {
		return fail(http.StatusForbidden, "error.csrf")
	}
	if q.sess.Token == nil {
		return fail(http.StatusServiceUnavailable, "error.notconfigured")
	}
	return nil
}

// passkeyBegin answers the page's script with the registration's options:
// {"ceremony": ..., "options": {"publicKey": ...}}.
func (a *App) passkeyBegin(q *req) error {
	if a.cfg.Auth == nil {
		return fail(http.StatusServiceUnavailable, "error.notconfigured")
	}
	if err := passkeyForm(q); err != nil {
		return err
	}
	res, err := a.cfg.Auth.BeginPasskeyRegistration(q.bearer(), &authv1.BeginPasskeyRegistrationRequest{})
	if err != nil {
		return err
	}
	q.w.Header().Set("Content-Type", "application/json; charset=utf-8")
	q.w.Header().Set("Cache-Control", "no-store")
	return json.NewEncoder(q.w).Encode(struct {
		Ceremony string          `json:"ceremony"`
		Options  json.RawMessage `json:"options"`
	}{res.GetCeremony(), json.RawMessage(res.GetOptions())})
}

// passkeyAdd keeps the credential the browser created under the name the
// user gave; a refusal shows the page again with the reason.
func (a *App) passkeyAdd(q *req) error {
	if a.cfg.Auth == nil {
		return fail(http.StatusServiceUnavailable, "error.notconfigured")
	}
	if err := passkeyForm(q); err != nil {
		return err
	}
	f := q.r.PostForm
	_, err := a.cfg.Auth.FinishPasskeyRegistration(q.bearer(), &authv1.FinishPasskeyRegistrationRequest{
		Ceremony: f.Get("ceremony"), Name: f.Get("name"), Credential: f.Get("credential")})
	switch status.Code(err) {
	case codes.OK:
	case codes.InvalidArgument:
		a.accountPage(q, http.StatusBadRequest, accountData{passkeyError: "acct.pk.refused", passkeyArgs: []any{status.Convert(err).Message()}})
		return nil
	default:
		return err
	}
	http.Redirect(q.w, q.r, AccountPath+"?passkey=added#passkeys-heading", http.StatusSeeOther)
	return nil
}

// passkeyRemove deletes one passkey after the confirmation in its row.
func (a *App) passkeyRemove(q *req) error {
	if a.cfg.Auth == nil {
		return fail(http.StatusServiceUnavailable, "error.notconfigured")
	}
	if err := passkeyForm(q); err != nil {
		return err
	}
	res, err := a.cfg.Auth.RemovePasskey(q.bearer(), &authv1.RemovePasskeyRequest{Id: q.r.PostForm.Get("id")})
	if err != nil {
		return err
	}
	// An unproven passkey's removal ended every session, this one's too.
	if res.GetSignedOut() {
		_ = a.cfg.Store.Delete(q.r.Context(), q.sess.ID)
		http.SetCookie(q.w, a.cookie(q.r, ""))
		http.Redirect(q.w, q.r, LoginPath+"?"+url.Values{"return": {AccountPath + "?passkey=removed#passkeys-heading"}}.Encode(), http.StatusSeeOther)
		return nil
	}
	http.Redirect(q.w, q.r, AccountPath+"?passkey=removed#passkeys-heading", http.StatusSeeOther)
	return nil
}
