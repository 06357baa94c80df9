package explorer

import (
	"crypto/subtle"
	"net/http"
	"time"

	"golang.org/x/oauth2"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	authv1 "fris.dev/proto/auth/v1"
)

// The account page: a signed-in user's own account. It lives in the
// Explorer because this is where a person is signed in (the login pages
// hold no session, only the code flow), so the page has the session's
// token to act with and its CSRF token to protect the forms.
const (
	AccountPath  = Prefix + "/account"
	PasswordPath = AccountPath + "/password"
)

func (a *App) accountRoutes() []route {
	return []route{
		{pattern: "GET " + AccountPath, access: signedIn, page: a.account},
		{pattern: "POST " + PasswordPath, access: signedIn, page: a.changePassword},
	}
}

type accountData struct {
	// Done names what just succeeded ("password"); Error is a message key
	// of the password form, Args its arguments, Message the two in the
	// page's language.
	Done    string
	Error   string
	Args    []any
	Message string
}

func (a *App) account(q *req) error {
	d := accountData{}
	if q.r.URL.Query().Get("done") == "password" {
		d.Done = "password"
	}
	a.accountPage(q, http.StatusOK, d)
	return nil
}

func (a *App) accountPage(q *req, code int, d accountData) {
	v := a.view(q, "acct.title")
	v.Section = "account"
	if d.Error != "" {
		d.Message = v.T(d.Error, d.Args...)
	}
	v.Data = d
	a.render(q, code, "account", v)
}

// changePassword sets a new password with the current one. The auth
// service ends every session of the user; this one goes on with the
// tokens it answers.
func (a *App) changePassword(q *req) error {
	if !sameOrigin(q.r) {
		return fail(http.StatusForbidden, "error.crosssite")
	}
	q.r.Body = http.MaxBytesReader(q.w, q.r.Body, 8<<10)
	if err := q.r.ParseForm(); err != nil {
		return fail(http.StatusBadRequest, "error.badrequest")
	}
	if subtle.ConstantTimeCompare([]byte(q.r.PostForm.Get(CSRFField)), []byte(q.sess.CSRF)) != 1 {
		return fail(http.StatusForbidden, "error.csrf")
	}
	if a.cfg.Auth == nil || q.sess.Token == nil {
		return fail(http.StatusServiceUnavailable, "error.notconfigured")
	}
	cur, next, again := q.r.PostForm.Get("current"), q.r.PostForm.Get("new"), q.r.PostForm.Get("new2")
	switch {
	case cur == "" || next == "" || again == "":
		a.accountPage(q, http.StatusBadRequest, accountData{Error: "acct.pw.missing"})
		return nil
	case next != again:
		a.accountPage(q, http.StatusBadRequest, accountData{Error: "acct.pw.differ"})
		return nil
	}
	ctx := metadata.AppendToOutgoingContext(q.ctx, "authorization", "Bearer "+q.sess.Token.AccessToken)
	res, err := a.cfg.Auth.ChangePassword(ctx, &authv1.ChangePasswordRequest{CurrentPassword: cur, NewPassword: next})
	switch status.Code(err) {
	case codes.OK:
	case codes.Unauthenticated:
		a.accountPage(q, http.StatusBadRequest, accountData{Error: "acct.pw.wrong"})
		return nil
	case codes.InvalidArgument:
		a.accountPage(q, http.StatusBadRequest, accountData{Error: "acct.pw.refused", Args: []any{status.Convert(err).Message()}})
		return nil
	default:
		return err
	}
	// The session's tokens were revoked with every other: it keeps the new
	// ones, or it would be signed out by its own change.
	s := q.sess
	s.Token = &oauth2.Token{AccessToken: res.GetAccessToken(), RefreshToken: res.GetRefreshToken(), TokenType: "Bearer",
		Expiry: a.cfg.Now().Add(time.Duration(res.GetExpiresIn()) * time.Second)}
	if err := a.cfg.Store.Put(q.r.Context(), s); err != nil {
		return err
	}
	http.Redirect(q.w, q.r, AccountPath+"?done=password", http.StatusSeeOther)
	return nil
}
