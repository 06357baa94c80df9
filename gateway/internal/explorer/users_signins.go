package explorer

import (
	"net/http"
	"net/url"
	"strings"

	authv1 "fris.dev/proto/auth/v1"
)

// signInLine is one sign-in as the page shows it.
type signInLine struct {
	At     when
	Method string // the message key's suffix: password, passkey, key
	Client string
	Addr   string
}

type signInsData struct {
	Email   string
	SignIns []signInLine
	Back    string
}

// userSignIns shows a user's recent sign-ins (auth keeps the last ten, in
// its volatile store: a convenience, not the audit log).
func (a *App) userSignIns(q *req) error {
	if a.cfg.Users == nil {
		return fail(http.StatusServiceUnavailable, "op.error.noauth")
	}
	email := strings.TrimSpace(q.r.URL.Query().Get("email"))
	if email == "" || len(email) > 254 {
		return fail(http.StatusBadRequest, "op.users.error.email")
	}
	res, err := a.cfg.Users.ListUserSignIns(q.ctx, &authv1.ListUserSignInsRequest{Email: email})
	if err != nil {
		return a.actionFailed(err)
	}
	v := a.opView(q, "op.users.signins.title", "users")
	v.Crumbs = []crumb{{v.T("op.title"), OperatorPath}, {v.T("op.users.title"), UsersPath}, {v.Title, ""}}
	d := signInsData{Email: email, Back: UsersPath + "?" + url.Values{"q": {email}}.Encode()}
	for _, s := range res.GetSignIns() {
		m := s.GetMethod()
		switch m {
		case "password", "passkey", "key", "password+totp":
		default:
			m = "other"
		}
		d.SignIns = append(d.SignIns, signInLine{At: a.whenUnix(s.GetAt()), Method: m, Client: s.GetClientId(), Addr: s.GetAddr()})
	}
	v.Data = d
	a.render(q, http.StatusOK, "operator-user-signins", v)
	return nil
}

// SignInsLink is the sign-ins page of the user with email.
func (v *view) SignInsLink(email string) string {
	return UserSignInsPath + "?" + url.Values{"email": {email}}.Encode()
}
