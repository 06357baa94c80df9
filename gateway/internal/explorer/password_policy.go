package explorer

import (
	"google.golang.org/grpc/status"

	"fris.dev/pkg/errinfo"
	authv1 "fris.dev/proto/auth/v1"
)

// passwordRule is the password policy as the account page's form shows
// it: the rule in the page's language and the least length for the
// field's minlength, from the auth service (GetPasswordPolicy); zero when
// it cannot say (the form works without: the service still checks).
type passwordRule struct {
	Text      string
	MinLength int
}

func (a *App) passwordRule(q *req, v *view) passwordRule {
	if a.cfg.Auth == nil {
		return passwordRule{}
	}
	p, err := a.cfg.Auth.GetPasswordPolicy(q.ctx, &authv1.GetPasswordPolicyRequest{})
	if err != nil {
		a.cfg.Log.WarnContext(q.r.Context(), "explorer: account page: password policy", "err", err)
		return passwordRule{}
	}
	also := "acct.pw.rule.email"
	if p.GetRefuseCommon() {
		also = "acct.pw.rule.common"
	}
	n := int(p.GetMinLength())
	return passwordRule{Text: v.T("acct.pw.rule.length", n) + " " + v.T(also), MinLength: n}
}

// policyRefusal is the message key and arguments of a refused new
// password: the policy's rule by its reason, or the service's own words.
func policyRefusal(err error) (string, []any) {
	st := status.Convert(err)
	switch errinfo.Reason(st) {
	case errinfo.PasswordTooShort:
		return "acct.pw.short", []any{errinfo.PasswordMinLength(st)}
	case errinfo.PasswordCommon:
		return "acct.pw.common", nil
	case errinfo.PasswordIsEmail:
		return "acct.pw.isemail", nil
	}
	return "acct.pw.refused", []any{st.Message()}
}
