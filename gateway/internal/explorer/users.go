package explorer

import (
	"cmp"
	"crypto/subtle"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"

	"fris.dev/pkg/identity"
	authv1 "fris.dev/proto/auth/v1"
)

// The users view: the identity provider's users for operators and user
// administrators (identity.ScopeUserAdmin), through auth's admin API with
// their identity (auth admits the gateway to exactly the user methods, for
// such a token, and keeps a user administrator off privileged users and
// roles; docs/security.md). Passwords are never set here: a new user sets
// one through the reset link.
const (
	UsersPath        = OperatorPath + "users"
	UserCreatePath   = UsersPath + "/create"
	UserDisablePath  = UsersPath + "/disable"
	UserEnablePath   = UsersPath + "/enable"
	UserScopesPath   = UsersPath + "/scopes"
	UserSessionsPath = UsersPath + "/end-sessions"
	UserResetPath    = UsersPath + "/send-reset"
	UserSignInsPath  = UsersPath + "/sign-ins"
	// UserActionsPath sets a user's required actions, UserTempPasswordPath
	// a temporary password (users_required.go).
	UserActionsPath      = UsersPath + "/required-actions"
	UserTempPasswordPath = UsersPath + "/temporary-password"
	// UserPath is one user's page: the facts and the forms of the list's
	// row (the list is a table, too narrow for forms).
	UserPath = UsersPath + "/user"
)

// usersPerPage is the list's page size.
const usersPerPage = 25

// knownRoles are the scopes offered as checkboxes; any other (mdr:<ns>)
// is typed.
var knownRoles = []string{identity.ScopeResearcher, identity.ScopeUserSearch, identity.ScopeUserAdmin, identity.ScopeOperator}

func (a *App) userRoutes() []route {
	return []route{
		{pattern: "GET " + UsersPath, access: userAdmin, page: a.users},
		{pattern: "GET " + UserPath, access: userAdmin, page: a.userPage},
		{pattern: "POST " + UserCreatePath, access: userAdmin, page: a.userAction(userCreate)},
		{pattern: "POST " + UserDisablePath, access: userAdmin, page: a.userAction(userDisable)},
		{pattern: "POST " + UserEnablePath, access: userAdmin, page: a.userAction(userEnable)},
		{pattern: "POST " + UserScopesPath, access: userAdmin, page: a.userAction(userScopes)},
		{pattern: "POST " + UserSessionsPath, access: userAdmin, page: a.userAction(userEndSessions)},
		{pattern: "POST " + UserResetPath, access: userAdmin, page: a.userAction(userReset)},
		{pattern: "GET " + UserSignInsPath, access: userAdmin, page: a.userSignIns},
		{pattern: "POST " + UserActionsPath, access: userAdmin, page: a.userAction(userRequire)},
		{pattern: "POST " + UserTempPasswordPath, access: userAdmin, page: a.tempPassword},
	}
}

// roleBox is one role's checkbox.
type roleBox struct {
	Scope   string
	Checked bool
}

// userLine is a user as the list shows it.
type userLine struct {
	ID          string // the element id stem of its forms
	Email, Name string
	Disabled    bool
	Self        bool // the signed-in operator
	// Locked: the viewer is a user administrator and the user holds a
	// privileged role, which only an operator changes (auth refuses).
	Locked      bool
	HasPassword bool
	Verified    bool
	// Unproven: the account has a credential nobody proved.
	Unproven bool
	Passkey  bool
	// Scopes are all the user's scopes, as the table shows them.
	Scopes []string
	Roles  []roleBox
	// Other are the scopes that are no known role, space-separated.
	Other   string
	Created when
	// LastSignIn is the newest sign-in at the login form, from LastAddr.
	LastSignIn when
	LastAddr   string
	// Actions are the required actions as checkboxes.
	Actions []actionBox
}

type usersData struct {
	Query         string
	Users         []userLine
	Total         int
	Page, Pages   int
	Prev, Next    string
	NewRoles      []roleBox
	Done          string
	DoneKind      string
	ShowingFromTo string
	Sort, Dir     string
	// Cols are the table's headers: each a link sorting by it.
	Cols []sortCol
}

func (a *App) users(q *req) error {
	if a.cfg.Users == nil {
		return fail(http.StatusServiceUnavailable, "op.error.noauth")
	}
	res, err := a.cfg.Users.ListUsers(q.ctx, &authv1.ListUsersRequest{})
	if err != nil {
		return err
	}
	qs := q.r.URL.Query()
	query := strings.TrimSpace(qs.Get("q"))
	if len(query) > 254 {
		query = query[:254]
	}
	// An unknown column or direction is the default's: the link's
	// parameters are anyone's to write.
	sortBy, dir := qs.Get("sort"), qs.Get("dir")
	if _, ok := userSorts[sortBy]; !ok {
		sortBy = "email"
	}
	if dir != "desc" {
		dir = "asc"
	}
	// Auth lists every user; the search, the order and the paging are
	// here, which is fine for the thousands of users a network has.
	var found []*authv1.UserRecord
	needle := strings.ToLower(query)
	for _, u := range res.GetUsers() {
		if needle == "" || strings.Contains(strings.ToLower(u.GetEmail()), needle) || strings.Contains(strings.ToLower(u.GetRealName()), needle) {
			found = append(found, u)
		}
	}
	by := userSorts[sortBy]
	slices.SortStableFunc(found, func(x, y *authv1.UserRecord) int {
		c := by(x, y)
		if dir == "desc" {
			c = -c
		}
		return cmp.Or(c, strings.Compare(x.GetEmail(), y.GetEmail()))
	})
	v := a.opView(q, "op.users.title", "users")
	d := usersData{Query: query, Total: len(found), NewRoles: q.roleBoxes(nil), Sort: sortBy, Dir: dir}
	for _, c := range userCols {
		col := sortCol{Key: c, Label: v.T("op.users.col." + c), Href: usersLink(query, c, "asc", 1)}
		if c == sortBy {
			col.Sort = map[string]string{"asc": "ascending", "desc": "descending"}[dir]
			if dir == "asc" {
				col.Href = usersLink(query, c, "desc", 1)
			}
		}
		d.Cols = append(d.Cols, col)
	}
	d.Pages = max(1, (len(found)+usersPerPage-1)/usersPerPage)
	d.Page, _ = strconv.Atoi(qs.Get("page"))
	d.Page = min(max(d.Page, 1), d.Pages)
	from, to := (d.Page-1)*usersPerPage, min(d.Page*usersPerPage, len(found))
	for i, u := range found[from:to] {
		d.Users = append(d.Users, q.userLine(a, u, "user-"+strconv.Itoa(from+i)))
	}
	if len(found) > 0 {
		d.ShowingFromTo = v.T("op.users.showing", from+1, to, len(found))
	}
	if d.Page > 1 {
		d.Prev = usersLink(query, sortBy, dir, d.Page-1)
	}
	if d.Page < d.Pages {
		d.Next = usersLink(query, sortBy, dir, d.Page+1)
	}
	// The status line of the action just done, only where the list bears
	// it out: the link's parameters are anyone's to write.
	who, done := q.r.URL.Query().Get("user"), q.r.URL.Query().Get("done")
	for _, u := range res.GetUsers() {
		if who == "" || !strings.EqualFold(u.GetEmail(), who) {
			continue
		}
		switch {
		case done == "disabled" && u.GetDisabled(), done == "enabled" && !u.GetDisabled(),
			done == "created", done == "scopes", done == "sessions", done == "reset":
			d.Done, d.DoneKind = v.T("op.users.done."+done, u.GetEmail()), done
		}
	}
	v.Data = d
	a.render(q, http.StatusOK, "operator-users", v)
	return nil
}

// userLine is u as the list and the user's page show it.
func (q *req) userLine(a *App, u *authv1.UserRecord, id string) userLine {
	return userLine{ID: id, Email: u.GetEmail(), Self: q.sess.User != nil && strings.EqualFold(u.GetEmail(), q.sess.User.Email), Name: u.GetRealName(), Disabled: u.GetDisabled(),
		HasPassword: u.GetHasPassword(), Verified: u.GetEmailVerified(), Unproven: u.GetUnprovenCredentials(), Passkey: u.GetHasPasskey(),
		Scopes: u.GetScopes(), Roles: q.roleBoxes(u.GetScopes()), Other: otherScopes(u.GetScopes()),
		Created: a.whenUnix(u.GetCreated()), LastSignIn: a.whenUnix(u.GetLastSignIn()), LastAddr: u.GetLastSignInAddr(),
		Locked:  !q.isOperator() && slices.ContainsFunc(u.GetScopes(), identity.Privileged),
		Actions: actionBoxes(u.GetRequiredActions())}
}

// userPage is one user's facts and forms (the forms post to the list's
// routes, which answer with the list showing the user). A privileged user,
// to a user administrator: the address and the role, nothing else.
func (a *App) userPage(q *req) error {
	if a.cfg.Users == nil {
		return fail(http.StatusServiceUnavailable, "op.error.noauth")
	}
	email := strings.TrimSpace(q.r.URL.Query().Get("email"))
	if email == "" || len(email) > 254 {
		return fail(http.StatusBadRequest, "op.users.error.email")
	}
	res, err := a.cfg.Users.ListUsers(q.ctx, &authv1.ListUsersRequest{})
	if err != nil {
		return err
	}
	i := slices.IndexFunc(res.GetUsers(), func(u *authv1.UserRecord) bool { return strings.EqualFold(u.GetEmail(), email) })
	if i < 0 {
		return fail(http.StatusNotFound, "op.users.error.nouser")
	}
	l := q.userLine(a, res.GetUsers()[i], "user")
	v := a.opView(q, "op.users.user.title", "users")
	v.Title = l.Email
	v.Crumbs = []crumb{{v.T("op.title"), OperatorPath}, {v.T("op.users.title"), UsersPath}, {l.Email, ""}}
	v.Data = l
	a.render(q, http.StatusOK, "operator-user", v)
	return nil
}

// UserLink is the page of the user with email.
func (v *view) UserLink(email string) string {
	return UserPath + "?" + url.Values{"email": {email}}.Encode()
}

// UsersBack is the list showing the user with email.
func (v *view) UsersBack(email string) string {
	return UsersPath + "?" + url.Values{"q": {email}}.Encode()
}

// PrivilegedScopes are those of scopes only an operator grants.
func (v *view) PrivilegedScopes(scopes []string) []string {
	var out []string
	for _, s := range scopes {
		if identity.Privileged(s) {
			out = append(out, s)
		}
	}
	return out
}

// roleBoxes are the roles the viewer may grant, checked as in scopes: a
// user administrator is offered no privileged role.
func (q *req) roleBoxes(scopes []string) []roleBox {
	out := make([]roleBox, 0, len(knownRoles))
	for _, r := range knownRoles {
		if identity.Privileged(r) && !q.isOperator() {
			continue
		}
		out = append(out, roleBox{Scope: r, Checked: contains(scopes, r)})
	}
	return out
}

func otherScopes(scopes []string) string {
	var out []string
	for _, s := range scopes {
		if !contains(knownRoles, s) {
			out = append(out, s)
		}
	}
	return strings.Join(out, " ")
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

type userAct int

const (
	userCreate userAct = iota
	userDisable
	userEnable
	userScopes
	userEndSessions
	userReset
	userRequire
)

// userAction is one of the users view's forms: same origin, the session's
// CSRF token, a confirmation for the destructive ones, then back to the
// list showing the user.
func (a *App) userAction(act userAct) func(*req) error {
	return func(q *req) error {
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
		// An operator who disabled themselves would lock themselves out
		// mid-action; another operator (or bin/auth) can.
		if act == userDisable && q.sess.User != nil && strings.EqualFold(email, q.sess.User.Email) {
			return fail(http.StatusBadRequest, "op.users.error.self")
		}
		if (act == userDisable || act == userEndSessions) && f.Get("confirm") != "yes" {
			return fail(http.StatusBadRequest, "op.users.error.confirm")
		}
		var (
			err  error
			done string
		)
		switch act {
		case userCreate:
			scopes, ok := formScopes(f)
			name := strings.TrimSpace(f.Get("name"))
			if !ok || len(name) > 256 {
				return fail(http.StatusBadRequest, "op.users.error.scopes")
			}
			_, err = a.cfg.Users.CreateUser(q.ctx, &authv1.CreateUserRequest{Email: email, RealName: name, Scopes: scopes})
			done = "created"
		case userDisable, userEnable:
			_, err = a.cfg.Users.SetUserDisabled(q.ctx, &authv1.SetUserDisabledRequest{Email: email, Disabled: act == userDisable})
			done = map[bool]string{true: "disabled", false: "enabled"}[act == userDisable]
		case userScopes:
			scopes, ok := formScopes(f)
			if !ok {
				return fail(http.StatusBadRequest, "op.users.error.scopes")
			}
			confirmed := f.Get("confirm") == "yes"
			_, err = a.cfg.Users.SetUserScopes(q.ctx, &authv1.SetUserScopesRequest{Email: email, Scopes: scopes, Confirm: confirmed})
			// A grant to an account nobody has proven: the same form
			// again, to be confirmed knowingly.
			if status.Code(err) == codes.FailedPrecondition && !confirmed {
				v := a.opView(q, "op.users.grant.title", "users")
				v.Crumbs = []crumb{{v.T("op.title"), OperatorPath}, {v.T("op.users.title"), UsersPath}, {v.Title, ""}}
				v.Data = grantConfirmData{Email: email, Reason: status.Convert(err).Message(), Roles: f["role"], Other: f.Get("other")}
				a.render(q, http.StatusConflict, "operator-user-grant", v)
				return nil
			}
			done = "scopes"
		case userEndSessions:
			_, err = a.cfg.Users.RevokeUser(q.ctx, &authv1.RevokeUserRequest{Email: email})
			done = "sessions"
		case userReset:
			_, err = a.cfg.Users.SendPasswordReset(q.ctx, &authv1.SendPasswordResetRequest{Email: email, Lang: string(q.lang)})
			done = "reset"
		case userRequire:
			actions, ok := formActions(f)
			if !ok {
				return fail(http.StatusBadRequest, "op.users.error.actions")
			}
			_, err = a.cfg.Users.SetRequiredActions(q.ctx, &authv1.SetRequiredActionsRequest{Email: email, Actions: actions})
			done = "actions"
		}
		if err != nil {
			// A taken email is the operator's to fix, with auth's reason.
			if status.Code(err) == codes.AlreadyExists {
				return fail(http.StatusConflict, "op.error.refused", status.Convert(err).Message())
			}
			// A user administrator's change to a privileged user or role:
			// auth's reason.
			if status.Code(err) == codes.PermissionDenied {
				return fail(http.StatusForbidden, "op.error.refused", status.Convert(err).Message())
			}
			return a.actionFailed(err)
		}
		http.Redirect(q.w, q.r, UsersPath+"?"+url.Values{"q": {email}, "done": {done}, "user": {email}}.Encode(), http.StatusSeeOther)
		return nil
	}
}

// formScopes are the form's checked roles and its typed scopes (one word
// each, e.g. mdr:<namespace>); false when one is malformed.
func formScopes(f url.Values) ([]string, bool) {
	var out []string
	for _, s := range f["role"] {
		if !contains(knownRoles, s) {
			return nil, false
		}
		if !contains(out, s) {
			out = append(out, s)
		}
	}
	other := f.Get("other")
	if len(other) > 2048 {
		return nil, false
	}
	for _, s := range strings.Fields(other) {
		if len(s) > 128 || strings.ContainsAny(s, "\"'<>") {
			return nil, false
		}
		if !contains(out, s) {
			out = append(out, s)
		}
	}
	return out, true
}

// whenUnix is when for a record's Unix seconds (0: never).
func (a *App) whenUnix(sec uint32) when {
	if sec == 0 {
		return when{}
	}
	return a.when(timestamppb.New(time.Unix(int64(sec), 0)))
}

// scopeArgs are the "userscopes" template's: the page, the form's id stem,
// its checkboxes and typed scopes.
type scopeArgs struct {
	V     *view
	ID    string
	Roles []roleBox
	Other string
}

// ScopeArgs bundles a scopes fieldset's arguments (templates take one).
func (v *view) ScopeArgs(id string, roles []roleBox, other string) scopeArgs {
	return scopeArgs{V: v, ID: id, Roles: roles, Other: other}
}
