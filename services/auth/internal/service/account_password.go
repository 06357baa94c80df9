package service

import (
	"context"
	"errors"
	"strconv"

	"fris.dev/pkg/audit"
	"fris.dev/pkg/identity"
	"fris.dev/pkg/password"
	"fris.dev/pkg/ratelimit"
	authv1 "fris.dev/proto/auth/v1"
	"fris.dev/services/auth/internal/storage"
)

// ChangePassword: a signed-in user sets a new password with the current
// one. Every session of the user ends (whoever learnt the old password may
// hold tokens); the session that asked goes on with the tokens of the
// answer, a new chain for the same client.
func (p Public) ChangePassword(ctx context.Context, r *authv1.ChangePasswordRequest) (_ *authv1.ChangePasswordResponse, err error) {
	var actor string
	defer func() {
		p.cfg.Audit.Record(ctx, audit.Event{Action: "auth.password_change", Actor: actor, Target: actor, Err: err, Class: signedIn(actor != "")})
	}()
	u, t, err := p.bearer(ctx)
	if err != nil {
		return nil, p.err(ctx, err)
	}
	if t.IsClient() {
		return nil, p.err(ctx, denied("the access token is a client's own: it has no user"))
	}
	actor = strconv.Itoa(int(u.ID))
	if err := p.checkNewPassword(r.GetNewPassword(), u.Email); err != nil {
		return nil, p.err(ctx, err)
	}
	// The current password is a credential like the login form's, under
	// its limits; the holder of a live token is a known holder.
	wrong := unauth("the current password is wrong")
	if u.PasswordHash == "" {
		return nil, p.err(ctx, wrong)
	}
	if err := p.hash.Verify(ctx, u.PasswordHash, r.GetCurrentPassword(), p.cfg.Guards.Login.Gate(loginAccount(u.Email), true)); err != nil {
		if ratelimit.IsThrottled(err) || ctx.Err() != nil || !errors.Is(err, password.ErrMismatch) {
			return nil, p.err(ctx, err)
		}
		return nil, p.err(ctx, wrong)
	}
	h, err := p.hash.Hash(ctx, r.GetNewPassword())
	if err != nil {
		return nil, p.err(ctx, err)
	}
	var changed storage.User
	err = p.store.UpdateUser(ctx, u.ID, func(cur *storage.User) error {
		if cur.PasswordHash != u.PasswordHash {
			return invalid("the password was changed meanwhile; sign in again")
		}
		cur.PasswordHash, cur.RevokedBefore = h, p.revokeNow(cur.RevokedBefore)
		cur.Clear(storage.ActionChangePassword) // the holder chose this one
		cur.PasswordSet, cur.PasswordBy = p.now().Unix(), storage.AddedHolder
		changed = *cur
		return nil
	})
	if err != nil {
		return nil, p.err(ctx, err)
	}
	var c storage.Client
	if id := t.ClientID(); id != "" {
		if c, err = p.store.GetClient(ctx, id); err != nil {
			return nil, p.err(ctx, err)
		}
	}
	set, err := p.signIn(ctx, changed, c, "", identity.Incoming(ctx, identity.KeyClientAddr))
	if err != nil {
		return nil, p.err(ctx, err)
	}
	return &authv1.ChangePasswordResponse{AccessToken: set.Access, RefreshToken: set.Refresh, ExpiresIn: uint32(set.ExpiresIn.Seconds())}, nil
}
