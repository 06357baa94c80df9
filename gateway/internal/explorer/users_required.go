package explorer

import (
	"crypto/subtle"
	"net/http"
	"net/url"
	"strings"

	authv1 "fris.dev/proto/auth/v1"
)

// Required actions and temporary passwords on a user's page
// (docs/security.md, Required actions): the operator requires the next
// sign-in to verify the address, change the password or add a second
// factor; or has auth generate a password, shown once on the answer to
// the POST (never in a URL; every page is no-store), for the operator to
// pass on. auth keeps a user administrator off privileged users for both.

// requiredActions are the actions offered, in the order a sign-in takes
// them (auth's names).
var requiredActions = []string{"verify_email", "change_password", "add_second_factor"}

// actionBox is one required action's checkbox.
type actionBox struct {
	Name    string
	Checked bool
}

func actionBoxes(have []string) []actionBox {
	out := make([]actionBox, 0, len(requiredActions))
	for _, a := range requiredActions {
		out = append(out, actionBox{Name: a, Checked: contains(have, a)})
	}
	return out
}

// formActions are the form's checked actions; false for an unknown one.
func formActions(f url.Values) ([]string, bool) {
	var out []string
	for _, a := range f["action"] {
		if !contains(requiredActions, a) {
			return nil, false
		}
		if !contains(out, a) {
			out = append(out, a)
		}
	}
	return out, true
}

// tempPasswordData is the page that shows a temporary password once.
type tempPasswordData struct {
	Email, Password string
	ChangeRequired  bool
}

// tempPassword has auth set a generated password for the user and shows
// it; the same checks as the other forms, and a confirmation.
func (a *App) tempPassword(q *req) error {
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
	optional := f.Get("keep_optional") == "yes"
	res, err := a.cfg.Users.SetTemporaryPassword(q.ctx, &authv1.SetTemporaryPasswordRequest{Email: email, KeepOptional: optional})
	if err != nil {
		return a.actionFailed(err)
	}
	v := a.opView(q, "op.users.temp.title", "users")
	v.Crumbs = []crumb{{v.T("op.title"), OperatorPath}, {v.T("op.users.title"), UsersPath}, {email, v.UserLink(email)}, {v.T("op.users.temp.title"), ""}}
	v.Data = tempPasswordData{Email: email, Password: res.GetPassword(), ChangeRequired: !optional}
	a.render(q, http.StatusOK, "operator-user-temppw", v)
	return nil
}
