package explorer

import (
	"html/template"
	"net/http"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	authv1 "fris.dev/proto/auth/v1"
)

// The second factor on the account page: the holder adds an authenticator
// app (TOTP, docs/security.md, Second factor). Begin shows a new secret as
// its otpauth:// link and as text (the page's content-security policy
// allows images of this origin only, so no data: QR code); the first code
// proves it, and the recovery codes are shown once. The factor is listed
// and removed with the other ways to sign in (credentials.go), its removal
// asking for a current code or the password.
const (
	TOTPBegin  = AccountPath + "/totp/begin"
	TOTPFinish = AccountPath + "/totp/finish"
)

func (a *App) totpRoutes() []route {
	return []route{
		{pattern: "POST " + TOTPBegin, access: signedIn, page: a.totpBegin},
		{pattern: "POST " + TOTPFinish, access: signedIn, page: a.totpFinish},
	}
}

// totpData is the account page's second-factor section: Has when the
// account has one; Secret and URI a begun enrolment's; Codes the recovery
// codes of one just finished; Error a message key.
type totpData struct {
	Has         bool
	Secret, URI string
	// Link is URI as a link's target: html/template refuses the otpauth
	// scheme unless told it is safe, which a URI of that scheme is.
	Link  template.URL
	Codes []string
	Error string
}

// maxTOTPField bounds the echoed secret and link and the code.
const maxTOTPField = 512

func (a *App) totpBegin(q *req) error {
	if err := formOK(q); err != nil {
		return err
	}
	if a.cfg.Auth == nil || q.sess.Token == nil {
		return fail(http.StatusServiceUnavailable, "error.notconfigured")
	}
	res, err := a.cfg.Auth.BeginTOTP(q.bearer(), &authv1.BeginTOTPRequest{Password: q.r.PostForm.Get("password")})
	switch status.Code(err) {
	case codes.OK:
	case codes.Unauthenticated:
		a.accountPage(q, http.StatusBadRequest, accountData{TOTP: totpData{Error: "acct.totp.pw.wrong"}})
		return nil
	case codes.FailedPrecondition:
		a.accountPage(q, http.StatusConflict, accountData{TOTP: totpData{Error: "acct.totp.already"}})
		return nil
	default:
		return err
	}
	a.accountPage(q, http.StatusOK, accountData{TOTP: totpData{Secret: res.GetSecret(), URI: res.GetUri(), Link: otpauthLink(res.GetUri())}})
	return nil
}

func (a *App) totpFinish(q *req) error {
	if err := formOK(q); err != nil {
		return err
	}
	if a.cfg.Auth == nil || q.sess.Token == nil {
		return fail(http.StatusServiceUnavailable, "error.notconfigured")
	}
	f := q.r.PostForm
	code, secret, uri := strings.TrimSpace(f.Get("code")), f.Get("secret"), f.Get("uri")
	if len(code) > maxTOTPField || len(secret) > maxTOTPField || len(uri) > maxTOTPField || !strings.HasPrefix(uri, "otpauth://") {
		secret, uri = "", ""
	}
	again := func(key string) error {
		a.accountPage(q, http.StatusBadRequest, accountData{TOTP: totpData{Secret: secret, URI: uri, Link: otpauthLink(uri), Error: key}})
		return nil
	}
	if code == "" {
		return again("acct.totp.missing")
	}
	res, err := a.cfg.Auth.FinishTOTP(q.bearer(), &authv1.FinishTOTPRequest{Code: code})
	switch status.Code(err) {
	case codes.OK:
	case codes.InvalidArgument, codes.Unauthenticated:
		return again("acct.totp.wrong")
	default:
		return err
	}
	a.accountPage(q, http.StatusOK, accountData{TOTP: totpData{Codes: res.GetRecoveryCodes()}})
	return nil
}

// otpauthLink is an otpauth://totp/ URI as a link target, "" for anything
// else (the finish form echoes the URI the browser sent).
func otpauthLink(uri string) template.URL {
	if !strings.HasPrefix(uri, "otpauth://totp/") || strings.ContainsAny(uri, "\"'<> \t\r\n") {
		return ""
	}
	return template.URL(uri) //nolint:gosec // checked just above: the otpauth scheme, no quoting characters
}
