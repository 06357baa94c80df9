package service

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strconv"

	"fris.dev/pkg/audit"
	"fris.dev/pkg/inputlimit"
	authv1 "fris.dev/proto/auth/v1"
	"fris.dev/services/auth/internal/storage"
	"fris.dev/services/auth/internal/tokens"
)

// Required actions (docs/security.md, Required actions): an operator
// requires a user to verify the address, change the password or add a
// second factor; the next interactive sign-in leads through them, after
// its password and second factor, before any code is issued. They ride
// on the pending sign-in of the second factor (totp.go): add_second_factor
// is its enrolment, change_password a pending sign-in of its own kind,
// and verify_email stops the sign-in with a mailed link.

// grantChangePassword: a pending sign-in waiting for the new password an
// operator requires (LoginChangePassword).
const grantChangePassword = "change-password"

// requiredStep decides, once u has signed in with method, whether a
// required action holds the code back: when one does it answers the
// pending sign-in (nil when none). A second factor the account has (TOTP
// or a passkey) fulfils add_second_factor.
func (p Public) requiredStep(ctx context.Context, c storage.Client, redirect string, u storage.User, ar *authv1.AuthorizeRequest, method string) (*authv1.LoginResponse, error) {
	if u.Requires(storage.ActionAddSecondFactor) {
		// secondStep leads here with a second factor (TOTP, or a passkey:
		// this sign-in's or one the account holds); one the operator
		// required since this sign-in began waits for the next.
		has := u.TOTP != nil || method == storage.MethodPasskey
		if !has {
			ps, err := p.store.Passkeys(ctx, u.ID)
			if err != nil {
				return nil, err
			}
			has = len(ps) > 0
		}
		if has {
			if err := p.store.UpdateUser(ctx, u.ID, func(cur *storage.User) error { cur.Clear(storage.ActionAddSecondFactor); return nil }); err != nil {
				return nil, err
			}
			u.Clear(storage.ActionAddSecondFactor)
		}
	}
	switch {
	case u.Requires(storage.ActionVerifyEmail):
		// The sign-in ends here: the mailed link proves the address and
		// clears the action (VerifyEmail); the next sign-in goes on.
		p.sendVerification(ctx, u)
		return &authv1.LoginResponse{RedirectUri: redirect, VerifyEmailSent: true}, nil
	case u.Requires(storage.ActionChangePassword):
		pending := tokens.RandomString(32)
		g := storage.Grant{Kind: grantChangePassword, ClientID: c.ID, UserID: u.ID, RedirectURI: redirect, Challenge: ar.GetCodeChallenge(),
			ChallengeMeth: ar.GetCodeChallengeMethod(), Scope: ar.GetScope(), Nonce: ar.GetNonce(), Expires: p.now().Add(pendingTTL).Unix(), Method: method}
		if err := p.store.PutGrant(ctx, pending, g); err != nil {
			return nil, err
		}
		return &authv1.LoginResponse{RedirectUri: redirect, Pending: pending, ChangePassword: true}, nil
	}
	return nil, nil
}

// LoginChangePassword completes a sign-in held back for the new password
// an operator requires: the policy applies, as to every new password, and
// the old one may not be kept. The pending sign-in is taken while the
// password is set and put back after a refusal until it expires.
func (p Public) LoginChangePassword(ctx context.Context, r *authv1.LoginChangePasswordRequest) (res *authv1.LoginResponse, err error) {
	var user int32
	defer func() {
		ev := audit.Event{Action: "auth.login_change_password", Err: err, Attrs: []slog.Attr{slog.String("client_id", r.GetRequest().GetClientId())}}
		if user != 0 {
			ev.Target = strconv.Itoa(int(user))
		}
		if err == nil {
			ev.Actor, ev.Class = strconv.Itoa(int(user)), audit.ClassSignedIn
		}
		p.cfg.Audit.Record(ctx, ev)
	}()
	if err := inputlimit.Check(inputlimit.F("new_password", r.GetNewPassword(), inputlimit.Password), inputlimit.F("pending", r.GetPending(), 256)); err != nil {
		return nil, p.err(ctx, err)
	}
	c, redirect, err := p.authorize(ctx, r.GetRequest())
	if err != nil {
		return nil, p.err(ctx, err)
	}
	expired := unauth("the sign-in has expired: enter your password again")
	g, err := p.store.TakeGrant(ctx, r.GetPending())
	if errors.Is(err, storage.ErrNotFound) {
		return nil, p.err(ctx, expired)
	} else if err != nil {
		return nil, p.err(ctx, err)
	}
	ar := r.GetRequest()
	if g.Expires < p.now().Unix() || g.Kind != grantChangePassword || g.ClientID != c.ID || g.RedirectURI != redirect || g.Challenge != ar.GetCodeChallenge() ||
		g.ChallengeMeth != ar.GetCodeChallengeMethod() || g.Scope != ar.GetScope() || g.Nonce != ar.GetNonce() {
		return nil, p.err(ctx, expired) // another flow's: spent, as it was shown elsewhere
	}
	user = g.UserID
	u, err := p.store.GetUser(ctx, g.UserID)
	if err != nil {
		return nil, p.err(ctx, err)
	}
	if u.Disabled {
		return nil, p.err(ctx, expired)
	}
	putBack := func() {
		if perr := p.store.PutGrant(ctx, r.GetPending(), g); perr != nil && g.Expires > p.now().Unix() {
			p.log.WarnContext(ctx, "putting back a pending sign-in", "err", perr)
		}
	}
	if err := p.checkNewPassword(r.GetNewPassword(), u.Email); err != nil {
		putBack()
		return nil, p.err(ctx, err)
	}
	// The password an operator made someone change is not chosen again.
	if u.PasswordHash != "" && p.hash.Verify(ctx, u.PasswordHash, r.GetNewPassword(), nil) == nil {
		putBack()
		return nil, p.err(ctx, invalid("choose a password other than the current one"))
	}
	h, err := p.hash.Hash(ctx, r.GetNewPassword())
	if err != nil {
		putBack()
		return nil, p.err(ctx, err)
	}
	// A new password ends every session of the old one, as every change
	// does; the code issued below is for a token issued later.
	var updated storage.User
	if err := p.store.UpdateUser(ctx, u.ID, func(cur *storage.User) error {
		cur.PasswordHash, cur.RevokedBefore = h, p.revokeNow(cur.RevokedBefore)
		cur.PasswordSet, cur.PasswordBy = p.now().Unix(), storage.AddedHolder
		cur.Clear(storage.ActionChangePassword)
		updated = *cur
		return nil
	}); err != nil {
		return nil, p.err(ctx, err)
	}
	u = updated
	if res, err := p.requiredStep(ctx, c, redirect, u, ar, g.Method); err != nil {
		return nil, p.err(ctx, err)
	} else if res != nil {
		return res, nil
	}
	code, err := p.authorizationCode(ctx, c, redirect, u, ar, g.Method)
	if err != nil {
		return nil, p.err(ctx, err)
	}
	return &authv1.LoginResponse{Code: code, RedirectUri: redirect}, nil
}

// SetRequiredActions replaces a user's required actions; a user
// administrator may not set them on a privileged user (updateUser).
func (a Admin) SetRequiredActions(ctx context.Context, r *authv1.SetRequiredActionsRequest) (*authv1.SetRequiredActionsResponse, error) {
	if err := inputlimit.Check(inputlimit.F("email", r.GetEmail(), inputlimit.Email)); err != nil {
		return nil, a.err(ctx, err)
	}
	actions, err := requiredActions(r.GetActions())
	if err != nil {
		return nil, a.err(ctx, err)
	}
	if err := a.updateUser(ctx, r.GetEmail(), func(u *storage.User) error { u.RequiredActions = actions; return nil }); err != nil {
		return nil, a.err(ctx, err)
	}
	return &authv1.SetRequiredActionsResponse{}, nil
}

// requiredActions checks actions and puts them in the order a sign-in
// takes them, without repeats.
func requiredActions(actions []string) ([]string, error) {
	if len(actions) > len(storage.Actions()) {
		return nil, invalid("at most %d actions", len(storage.Actions()))
	}
	var out []string
	for _, a := range storage.Actions() {
		if slices.Contains(actions, a) {
			out = append(out, a)
		}
	}
	for _, a := range actions {
		if !slices.Contains(out, a) {
			return nil, invalid("unknown required action %q (known: verify_email, change_password, add_second_factor)", a)
		}
	}
	return out, nil
}

// tempPasswordBytes: a temporary password is 18 random bytes (24
// characters of base64url), far beyond any policy's length and guessing.
const tempPasswordBytes = 18

// SetTemporaryPassword generates a password for a user, sets it, ends the
// user's sessions and, unless keep_optional, requires a change at the next
// sign-in. The password is in the answer only: the audit records the call
// without it (pkg/audit logs requests, never answers).
func (a Admin) SetTemporaryPassword(ctx context.Context, r *authv1.SetTemporaryPasswordRequest) (*authv1.SetTemporaryPasswordResponse, error) {
	if err := inputlimit.Check(inputlimit.F("email", r.GetEmail(), inputlimit.Email)); err != nil {
		return nil, a.err(ctx, err)
	}
	pw := tokens.RandomString(tempPasswordBytes)
	if err := a.checkNewPassword(pw, r.GetEmail()); err != nil {
		return nil, a.err(ctx, err) // a policy no random password meets
	}
	h, err := a.hash.Hash(ctx, pw)
	if err != nil {
		return nil, a.err(ctx, err)
	}
	if err := a.updateUser(ctx, r.GetEmail(), func(u *storage.User) error {
		if u.Disabled {
			return invalid("the user is disabled: enable them first")
		}
		u.PasswordHash, u.RevokedBefore = h, a.revokeNow(u.RevokedBefore)
		u.PasswordSet, u.PasswordBy = a.now().Unix(), storage.AddedOperator
		if !r.GetKeepOptional() && !u.Requires(storage.ActionChangePassword) {
			acts, _ := requiredActions(append(slices.Clone(u.RequiredActions), storage.ActionChangePassword))
			u.RequiredActions = acts
		}
		return nil
	}); err != nil {
		return nil, a.err(ctx, err)
	}
	return &authv1.SetTemporaryPasswordResponse{Password: pw}, nil
}
