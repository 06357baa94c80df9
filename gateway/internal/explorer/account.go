package explorer

import (
	"context"
	"crypto/subtle"
	"net/http"
	"time"

	"golang.org/x/oauth2"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"

	authv1 "fris.dev/proto/auth/v1"
)

// The account page: a signed-in user's own account. It lives in the
// Explorer because this is where a person is signed in (the login pages
// hold no session, only the code flow), so the page has the session's
// token to act with and its CSRF token to protect the forms.
const (
	AccountPath  = Prefix + "/account"
	PasswordPath = AccountPath + "/password"
	SignOutAll   = AccountPath + "/signout-everywhere"
)

func (a *App) accountRoutes() []route {
	return []route{
		{pattern: "GET " + AccountPath, access: signedIn, page: a.account},
		{pattern: "POST " + PasswordPath, access: signedIn, page: a.changePassword},
		{pattern: "POST " + SignOutAll, access: signedIn, page: a.signOutEverywhere},
	}
}

// sessionLine is a sign-in as the account page lists it.
type sessionLine struct {
	Client  string
	Address string
	Created when
	Current bool
}

type accountData struct {
	// Profile is what the identity provider holds of the user (nil: it
	// could not say); Sessions the sign-ins that stand, newest first.
	Profile  *authv1.UserInfo
	Sessions []sessionLine
	// Done names what just succeeded ("password"); Error is a message key
	// of the password form, Args its arguments, Message the two in the
	// page's language.
	Done    string
	Error   string
	Args    []any
	Message string
	// Passkeys is the passkey section (passkeys.go); passkeyError and
	// passkeyArgs its form's message key and arguments.
	Passkeys     passkeyData
	passkeyError string
	passkeyArgs  []any
	// Rule is the password policy the form shows (password_policy.go).
	Rule passwordRule
	// Credentials is the credential section (credentials.go);
	// credentialError its form's message key.
	Credentials     credentialData
	credentialError string
	// TOTP is the second-factor section (totp.go).
	TOTP totpData
}

func (a *App) account(q *req) error {
	d := accountData{}
	if q.r.URL.Query().Get("done") == "password" {
		d.Done = "password"
	}
	a.accountPage(q, http.StatusOK, d)
	return nil
}

// bearer is the page's context with the session's token, for the calls
// the identity provider answers about the token's own user.
func (q *req) bearer() context.Context {
	return metadata.AppendToOutgoingContext(q.ctx, "authorization", "Bearer "+q.sess.Token.AccessToken)
}

// profile fills in what the identity provider knows of the user. A
// failure leaves the page with what the session knows: the password form
// and signing out everywhere work on their own.
func (a *App) profile(q *req, d *accountData) {
	if a.cfg.Auth == nil || q.sess.Token == nil {
		return
	}
	info, err := a.cfg.Auth.GetUserInfo(q.bearer(), &authv1.GetUserInfoRequest{})
	if err != nil {
		a.cfg.Log.WarnContext(q.r.Context(), "explorer: account page: userinfo", "err", err)
		return
	}
	d.Profile = info
	res, err := a.cfg.Auth.ListSessions(q.bearer(), &authv1.ListSessionsRequest{})
	if err != nil {
		a.cfg.Log.WarnContext(q.r.Context(), "explorer: account page: sessions", "err", err)
		return
	}
	for _, s := range res.GetSessions() {
		client := s.GetClientName()
		if client == "" {
			client = s.GetClientId()
		}
		d.Sessions = append(d.Sessions, sessionLine{Client: client, Address: s.GetAddress(),
			Created: a.when(timestamppb.New(time.Unix(int64(s.GetCreated()), 0))), Current: s.GetCurrent()})
	}
}

func (a *App) accountPage(q *req, code int, d accountData) {
	a.profile(q, &d)
	v := a.view(q, "acct.title")
	v.Section = "account"
	if d.Error != "" {
		d.Message = v.T(d.Error, d.Args...)
	}
	d.Passkeys = a.passkeys(q)
	d.Rule = a.passwordRule(q, v)
	d.Credentials = a.credentials(q)
	for _, c := range d.Credentials.List {
		d.TOTP.Has = d.TOTP.Has || c.Kind == "totp"
	}
	if d.credentialError != "" {
		d.Credentials.Error = v.T(d.credentialError)
	}
	if d.passkeyError != "" {
		d.Passkeys.Error = v.T(d.passkeyError, d.passkeyArgs...)
	}
	v.Data = d
	a.render(q, code, "account", v)
}

// formOK: a state-changing form of the account page, from this origin,
// with the session's CSRF token; nil when it may go on.
func formOK(q *req) error {
	if !sameOrigin(q.r) {
		return fail(http.StatusForbidden, "error.crosssite")
	}
	q.r.Body = http.MaxBytesReader(q.w, q.r.Body, 8<<10)
	if err := q.r.ParseForm(); err != nil {
		return formError(err)
	}
	if subtle.ConstantTimeCompare([]byte(q.r.PostForm.Get(CSRFField)), []byte(q.sess.CSRF)) != 1 {
		return fail(http.StatusForbidden, "error.csrf")
	}
	return nil
}

// signOutEverywhere ends every session of the user at the identity
// provider (every token revoked), this one's included, and signs this
// browser out.
func (a *App) signOutEverywhere(q *req) error {
	if err := formOK(q); err != nil {
		return err
	}
	if a.cfg.Auth == nil || q.sess.Token == nil {
		return fail(http.StatusServiceUnavailable, "error.notconfigured")
	}
	if _, err := a.cfg.Auth.SignOutEverywhere(q.bearer(), &authv1.SignOutEverywhereRequest{}); err != nil {
		return err
	}
	_ = a.cfg.Store.Delete(q.r.Context(), q.sess.ID)
	http.SetCookie(q.w, a.cookie(q.r, ""))
	http.Redirect(q.w, q.r, Home, http.StatusSeeOther)
	return nil
}

// changePassword sets a new password with the current one. The auth
// service ends every session of the user; this one goes on with the
// tokens it answers.
func (a *App) changePassword(q *req) error {
	if err := formOK(q); err != nil {
		return err
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
	res, err := a.cfg.Auth.ChangePassword(q.bearer(), &authv1.ChangePasswordRequest{CurrentPassword: cur, NewPassword: next})
	switch status.Code(err) {
	case codes.OK:
	case codes.Unauthenticated:
		a.accountPage(q, http.StatusBadRequest, accountData{Error: "acct.pw.wrong"})
		return nil
	case codes.InvalidArgument:
		key, args := policyRefusal(err)
		a.accountPage(q, http.StatusBadRequest, accountData{Error: key, Args: args})
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
