package login

import (
	"context"
	"fmt"
	"net/http"

	"google.golang.org/grpc/status"

	"fris.dev/pkg/errinfo"
	authv1 "fris.dev/proto/auth/v1"
)

// The password policy as the reset page shows it: the rule beside the
// field, from the auth service (GetPasswordPolicy, its
// -password-min-length and -password-common-list), and a refusal in the
// page's language by its reason.
const (
	RuleLength      = "At least %d characters."
	RuleCommonEmail = "Not one of the most common passwords, and not your email address."
	RuleEmail       = "Not your email address."
	TooShort        = "A password needs at least %d characters."
	CommonPassword  = "This password is one of the most common ones, which are guessed first. Choose another."
	EmailPassword   = "A password must not be your email address or its part before the @."
)

// passwordRule is the rule the reset page shows, in the page's language,
// and the least length for the field's minlength; "" and 0 when the auth
// service cannot say (the page works without: the service still checks).
func (h *Handler) passwordRule(ctx context.Context, r *http.Request, b base) (string, int) {
	p, err := h.cfg.Client.GetPasswordPolicy(ctx, &authv1.GetPasswordPolicyRequest{})
	if err != nil {
		h.cfg.Log.WarnContext(r.Context(), "reset page: password policy", "err", err)
		return "", 0
	}
	n := int(p.GetMinLength())
	also := RuleEmail
	if p.GetRefuseCommon() {
		also = RuleCommonEmail
	}
	return fmt.Sprintf(b.T(RuleLength), n) + " " + b.T(also), n
}

// policyRefusal is the message key and arguments of a refused new password:
// the policy's rule by its reason, or the service's own sentence.
func policyRefusal(err error) (string, []any) {
	st := status.Convert(err)
	switch errinfo.Reason(st) {
	case errinfo.PasswordTooShort:
		return TooShort, []any{errinfo.PasswordMinLength(st)}
	case errinfo.PasswordCommon:
		return CommonPassword, nil
	case errinfo.PasswordIsEmail:
		return EmailPassword, nil
	}
	return sentence(st.Message()), nil
}
