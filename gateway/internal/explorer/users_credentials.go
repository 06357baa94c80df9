package explorer

import (
	"crypto/subtle"
	"net/http"
	"net/url"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	authv1 "fris.dev/proto/auth/v1"
)

// A user's credentials in the users view: every way to sign in to the
// account, how and when each was added, whether anyone has proven it and
// when it was last used, and what the owner's proof of the address
// removed; a key or passkey can be removed (auth ends the user's tokens
// with it, and audits it with the operator as actor).
const (
	UserCredentialsPath = UsersPath + "/credentials"
	UserCredRemovePath  = UserCredentialsPath + "/remove"
)

func (a *App) userCredentialRoutes() []route {
	return []route{
		{pattern: "GET " + UserCredentialsPath, access: userAdmin, page: a.userCredentials},
		{pattern: "POST " + UserCredRemovePath, access: userAdmin, page: a.userCredentialRemove},
	}
}

type userCredentialsData struct {
	Email   string
	List    []credentialLine
	Removed []credentialLine
	Done    bool
	Back    string
}

func (a *App) userCredentials(q *req) error {
	if a.cfg.Users == nil {
		return fail(http.StatusServiceUnavailable, "op.error.noauth")
	}
	email := strings.TrimSpace(q.r.URL.Query().Get("email"))
	if email == "" || len(email) > 254 {
		return fail(http.StatusBadRequest, "op.users.error.email")
	}
	res, err := a.cfg.Users.ListUserCredentials(q.ctx, &authv1.ListUserCredentialsRequest{Email: email})
	if err != nil {
		if status.Code(err) == codes.PermissionDenied {
			return fail(http.StatusForbidden, "op.error.refused", status.Convert(err).Message())
		}
		return a.actionFailed(err)
	}
	v := a.opView(q, "op.users.creds.title", "users")
	v.Crumbs = []crumb{{v.T("op.title"), OperatorPath}, {v.T("op.users.title"), UsersPath}, {v.Title, ""}}
	v.Data = userCredentialsData{Email: email, List: a.credentialLines(res.GetCredentials(), "ucred-"), Removed: a.credentialLines(res.GetRemoved(), "ugone-"),
		Done: q.r.URL.Query().Get("done") == "removed", Back: UsersPath + "?" + url.Values{"q": {email}}.Encode()}
	a.render(q, http.StatusOK, "operator-user-credentials", v)
	return nil
}

// userCredentialRemove removes a user's key or passkey after the row's
// confirmation.
func (a *App) userCredentialRemove(q *req) error {
	if !sameOrigin(q.r) {
		return fail(http.StatusForbidden, "error.crosssite")
	}
	q.r.Body = http.MaxBytesReader(q.w, q.r.Body, 16<<10)
	if err := q.r.ParseForm(); err != nil {
		return formError(err)
	}
	if subtle.ConstantTimeCompare([]byte(q.r.PostForm.Get(CSRFField)), []byte(q.sess.CSRF)) != 1 {
		return fail(http.StatusForbidden, "error.csrf")
	}
	if a.cfg.Users == nil {
		return fail(http.StatusServiceUnavailable, "op.error.noauth")
	}
	f := q.r.PostForm
	email := strings.TrimSpace(f.Get("email"))
	if email == "" || len(email) > 254 {
		return fail(http.StatusBadRequest, "op.users.error.email")
	}
	if f.Get("confirm") != "yes" {
		return fail(http.StatusBadRequest, "op.users.error.confirm")
	}
	_, err := a.cfg.Users.RemoveUserCredential(q.ctx, &authv1.RemoveUserCredentialRequest{Email: email, Kind: f.Get("kind"), Id: f.Get("id")})
	if err != nil {
		if status.Code(err) == codes.PermissionDenied {
			return fail(http.StatusForbidden, "op.error.refused", status.Convert(err).Message())
		}
		return a.actionFailed(err)
	}
	http.Redirect(q.w, q.r, UserCredentialsPath+"?"+url.Values{"email": {email}, "done": {"removed"}}.Encode(), http.StatusSeeOther)
	return nil
}

// CredentialsLink is the credentials page of the user with email.
func (v *view) CredentialsLink(email string) string {
	return UserCredentialsPath + "?" + url.Values{"email": {email}}.Encode()
}

// grantConfirmData is the page that asks an operator to confirm a grant
// to an account whose address is unverified or which has unproven
// credentials: auth's reason, and the same form again with confirm.
type grantConfirmData struct {
	Email, Reason, Other string
	Roles                []string
}
