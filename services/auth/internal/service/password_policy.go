package service

import (
	"context"
	"errors"

	"fris.dev/pkg/errinfo"
	"fris.dev/pkg/inputlimit"
	authv1 "fris.dev/proto/auth/v1"
	"fris.dev/services/auth/internal/pwpolicy"
)

// The password policy (pwpolicy, -password-min-length and
// -password-common-list) is checked here, the one place every way of
// setting a password goes through: a reset, a change, an operator's
// create-user and set-password. A password set before stays valid.

// checkNewPassword refuses a new password of the account with the given
// email address that the policy does not admit, or that is too large to
// hash: InvalidArgument with the rule as the reason and the least length
// (pkg/errinfo), so the pages say which rule in their language. A status
// error, which rpcerr.From passes as it is.
func (s *Service) checkNewPassword(pw, email string) error {
	if err := inputlimit.Check(inputlimit.F("password", pw, inputlimit.Password)); err != nil {
		return err
	}
	err := s.cfg.Passwords.Check(pw, email)
	var r *pwpolicy.Refusal
	if !errors.As(err, &r) {
		return err
	}
	reason := map[pwpolicy.Rule]string{
		pwpolicy.TooShort: errinfo.PasswordTooShort,
		pwpolicy.Common:   errinfo.PasswordCommon,
		pwpolicy.IsEmail:  errinfo.PasswordIsEmail,
	}[r.Rule]
	return errinfo.PasswordRefusal(r.Error(), reason, r.MinLength).Err()
}

// GetPasswordPolicy tells the pages that set a password what it must meet,
// so they say so before it is sent.
func (p Public) GetPasswordPolicy(context.Context, *authv1.GetPasswordPolicyRequest) (*authv1.PasswordPolicy, error) {
	return &authv1.PasswordPolicy{MinLength: uint32(p.cfg.Passwords.MinLength()), RefuseCommon: p.cfg.Passwords.RefusesCommon()}, nil
}
