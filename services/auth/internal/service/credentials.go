package service

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"fris.dev/pkg/audit"
	"fris.dev/pkg/rpcerr"
	authv1 "fris.dev/proto/auth/v1"
	"fris.dev/services/auth/internal/storage"
)

// Every credential of an account (its password, registered keys and
// passkeys) is listed with how it was added and when it was last used,
// to its holder and to operators, and each key or passkey can be removed.
// A credential nobody proved (a key registered anonymously while the
// address was unverified) is removed when the owner proves the address:
// see revokeUnproven and docs/security.md, Credential lifecycle.

// Credential kinds as the API names them.
const (
	kindPassword = "password"
	kindKey      = "key"
	kindPasskey  = "passkey"
)

// usedEvery is how often a credential's last use is written: a sign-in
// within it of the one recorded writes nothing.
const usedEvery = time.Minute

func keyCredential(k storage.UserKey) *authv1.Credential {
	return &authv1.Credential{Kind: kindKey, Id: strconv.Itoa(int(k.ID)), Description: k.Description, Created: uint32(k.Created),
		AddedBy: k.AddedBy, Proven: k.Proven, LastUsed: uint32(k.LastUsed)}
}

func passkeyCredential(p storage.Passkey) *authv1.Credential {
	return &authv1.Credential{Kind: kindPasskey, Id: p.ID, Description: p.Name, Created: uint32(p.Created),
		AddedBy: p.AddedBy, Proven: !p.Unproven, LastUsed: uint32(p.LastUsed)}
}

// passwordCredential: a password is set by an operator, a reset link or
// its holder who knew the one before, so it is always proven.
func passwordCredential(u storage.User) *authv1.Credential {
	return &authv1.Credential{Kind: kindPassword, Created: uint32(u.PasswordSet), AddedBy: u.PasswordBy, Proven: true, LastUsed: uint32(u.PasswordUsed)}
}

// credentialsOf lists u's credentials: the password first, then keys and
// passkeys, oldest first.
func (s *Service) credentialsOf(ctx context.Context, u storage.User) ([]*authv1.Credential, error) {
	var out []*authv1.Credential
	if u.PasswordHash != "" {
		out = append(out, passwordCredential(u))
	}
	ks, err := s.store.UserKeys(ctx, u.ID)
	if err != nil {
		return nil, err
	}
	for _, k := range ks {
		out = append(out, keyCredential(k))
	}
	ps, err := s.store.Passkeys(ctx, u.ID)
	if err != nil {
		return nil, err
	}
	for _, p := range ps {
		out = append(out, passkeyCredential(p))
	}
	if u.TOTP != nil {
		out = append(out, totpCredential(u.TOTP))
	}
	return out, nil
}

// removedRecords are the removed credentials as u.Removed keeps them:
// these first, then the ones before, at most storage.MaxRemoved.
func removedRecords(now int64, removed []*authv1.Credential, before []storage.RemovedCredential) []storage.RemovedCredential {
	var out []storage.RemovedCredential
	for _, c := range removed {
		out = append(out, storage.RemovedCredential{Kind: c.GetKind(), ID: c.GetId(), Description: c.GetDescription(), Created: int64(c.GetCreated()),
			AddedBy: c.GetAddedBy(), Removed: now})
	}
	out = append(out, before...)
	return out[:min(len(out), storage.MaxRemoved)]
}

// removedOf lists u's removed credentials, newest first.
func removedOf(u storage.User) []*authv1.Credential {
	var out []*authv1.Credential
	for _, r := range u.Removed {
		out = append(out, &authv1.Credential{Kind: r.Kind, Id: r.ID, Description: r.Description, Created: uint32(r.Created), AddedBy: r.AddedBy, Removed: uint32(r.Removed)})
	}
	return out
}

// unprovenUsers returns the users that hold an unproven credential, and
// those that hold a passkey (one scan of the passkeys serves both, so the
// users list costs no scan per user).
func (s *Service) unprovenUsers(ctx context.Context) (unproven, passkey map[int32]bool, err error) {
	out, withPasskey := map[int32]bool{}, map[int32]bool{}
	ks, err := s.store.AllUserKeys(ctx)
	if err != nil {
		return nil, nil, err
	}
	for _, k := range ks {
		if !k.Proven {
			out[k.UserID] = true
		}
	}
	ps, err := s.store.AllPasskeys(ctx)
	if err != nil {
		return nil, nil, err
	}
	for _, p := range ps {
		withPasskey[p.UserID] = true
		if p.Unproven {
			out[p.UserID] = true
		}
	}
	return out, withPasskey, nil
}

// hasUnproven reports whether u holds an unproven credential.
func (s *Service) hasUnproven(ctx context.Context, u storage.User) (bool, error) {
	cs, err := s.credentialsOf(ctx, u)
	if err != nil {
		return false, err
	}
	for _, c := range cs {
		if !c.Proven {
			return true, nil
		}
	}
	return false, nil
}

// revokeUnproven removes every unproven credential of u, because its
// owner has just proven the address (how: "reset" or "verify"), auditing
// each removal with the owner as actor. The caller revokes the tokens
// issued so far. A credential whose removal failed is still listed as
// unproven, and the error says so.
func (s *Service) revokeUnproven(ctx context.Context, u storage.User, how string) ([]*authv1.Credential, error) {
	actor := strconv.Itoa(int(u.ID))
	record := func(c *authv1.Credential, err error) {
		s.cfg.Audit.Record(ctx, audit.Event{Action: "auth.credential_revoke", Actor: actor, Target: actor, Err: err,
			Attrs: []slog.Attr{slog.String("kind", c.Kind), slog.String("id", auditEmail(c.Id)), slog.String("added_by", c.AddedBy),
				slog.String("reason", "address proven by "+how)}})
	}
	var removed []*authv1.Credential
	ks, err := s.store.UserKeys(ctx, u.ID)
	if err != nil {
		return nil, err
	}
	for _, k := range ks {
		if k.Proven {
			continue
		}
		c := keyCredential(k)
		_, err := s.store.DeleteUserKey(ctx, u.ID, k.ID)
		if errors.Is(err, storage.ErrNotFound) {
			continue // removed meanwhile
		}
		record(c, err)
		if err != nil {
			return removed, err
		}
		removed = append(removed, c)
	}
	ps, err := s.store.Passkeys(ctx, u.ID)
	if err != nil {
		return removed, err
	}
	for _, p := range ps {
		if !p.Unproven {
			continue
		}
		c := passkeyCredential(p)
		_, err := s.store.DeletePasskey(ctx, u.ID, p.ID)
		if errors.Is(err, storage.ErrNotFound) {
			continue
		}
		record(c, err)
		if err != nil {
			return removed, err
		}
		removed = append(removed, c)
	}
	// A second factor enrolled before the address was proven may be a
	// stranger's, who would then hold the owner's sign-ins.
	var gone *storage.TOTP
	err = s.store.UpdateUser(ctx, u.ID, func(cur *storage.User) error {
		gone = nil
		if cur.TOTP != nil && cur.TOTP.Unproven {
			gone, cur.TOTP = cur.TOTP, nil
		}
		return nil
	})
	if gone != nil || err != nil {
		c := &authv1.Credential{Kind: kindTOTP}
		if gone != nil {
			c = totpCredential(gone)
		}
		record(c, err)
		if err != nil {
			return removed, err
		}
		removed = append(removed, c)
	}
	return removed, nil
}

// removeCredential removes u's key or passkey of kind and id, and returns
// it and whether the user's tokens were revoked: removing one that was
// unproven (or any, for an operator: force) revokes every token of the
// user issued so far, since whoever held it may hold tokens. The password
// cannot be removed.
func (s *Service) removeCredential(ctx context.Context, u storage.User, kind, id string, force bool) (*authv1.Credential, bool, error) {
	if len(id) > 1024 {
		return nil, false, notFound("no such credential")
	}
	var c *authv1.Credential
	switch strings.TrimSpace(kind) {
	case kindKey:
		n, err := strconv.ParseInt(strings.TrimSpace(id), 10, 32)
		if err != nil || n <= 0 {
			return nil, false, notFound("no such key")
		}
		k, err := s.store.DeleteUserKey(ctx, u.ID, int32(n))
		if errors.Is(err, storage.ErrNotFound) {
			return nil, false, notFound("no such key")
		} else if err != nil {
			return nil, false, err
		}
		c = keyCredential(k)
	case kindPasskey:
		p, err := s.store.DeletePasskey(ctx, u.ID, id)
		if errors.Is(err, storage.ErrNotFound) {
			return nil, false, notFound("no such passkey")
		} else if err != nil {
			return nil, false, err
		}
		c = passkeyCredential(p)
	case kindTOTP:
		var removed *storage.TOTP
		err := s.store.UpdateUser(ctx, u.ID, func(cur *storage.User) error {
			removed, cur.TOTP = cur.TOTP, nil
			return nil
		})
		if err != nil {
			return nil, false, err
		}
		if removed == nil {
			return nil, false, notFound("no authenticator app")
		}
		c = totpCredential(removed)
	case kindPassword:
		return nil, false, invalid("the password cannot be removed, only changed")
	default:
		return nil, false, invalid("kind must be key, passkey or totp")
	}
	if force || !c.Proven {
		if err := s.store.UpdateUser(ctx, u.ID, func(cur *storage.User) error { cur.RevokedBefore = s.revokeNow(cur.RevokedBefore); return nil }); err != nil {
			return c, false, err
		}
		return c, true, nil
	}
	return c, false, nil
}

// lastWay refuses a holder's removal of the only way left to sign in: an
// account without a password whose one key or passkey it is would be
// locked (an operator can still remove it, and set a password).
func (s *Service) lastWay(ctx context.Context, u storage.User) error {
	if u.PasswordHash != "" {
		return nil
	}
	cs, err := s.credentialsOf(ctx, u)
	if err != nil {
		return err
	}
	ways := 0
	for _, c := range cs {
		if c.Kind != kindTOTP { // a second factor signs no one in alone
			ways++
		}
	}
	if ways <= 1 {
		return rpcerr.New(rpcerr.ErrPrecondition, "this is your only way to sign in: add another before you remove it")
	}
	return nil
}

// keyUsed records a key's successful sign-in, at most once per usedEvery;
// failing costs only the listing.
func (s *Service) keyUsed(ctx context.Context, k storage.UserKey) {
	now := s.now().Unix()
	if now-k.LastUsed < int64(usedEvery/time.Second) {
		return
	}
	if err := s.store.UpdateUserKey(ctx, k.ID, func(cur *storage.UserKey) error { cur.LastUsed = now; return nil }); err != nil {
		s.log.WarnContext(ctx, "recording a key's use", "key", k.ID, "err", err)
	}
}

// passwordUsed is keyUsed for u's password.
func (s *Service) passwordUsed(ctx context.Context, u storage.User) {
	now := s.now().Unix()
	if now-u.PasswordUsed < int64(usedEvery/time.Second) {
		return
	}
	if err := s.store.UpdateUser(ctx, u.ID, func(cur *storage.User) error { cur.PasswordUsed = now; return nil }); err != nil {
		s.log.WarnContext(ctx, "recording a password's use", "user", u.ID, "err", err)
	}
}

func (p Public) ListCredentials(ctx context.Context, _ *authv1.ListCredentialsRequest) (*authv1.ListCredentialsResponse, error) {
	u, t, err := p.bearer(ctx)
	if err != nil {
		return nil, p.err(ctx, err)
	}
	if t.IsClient() {
		return nil, p.err(ctx, denied("the access token is a client's own: it has no user"))
	}
	cs, err := p.credentialsOf(ctx, u)
	if err != nil {
		return nil, p.err(ctx, err)
	}
	return &authv1.ListCredentialsResponse{Credentials: cs, Removed: removedOf(u)}, nil
}

// RemoveCredential removes one of the holder's keys or passkeys. A proven
// one's sessions stand (tidying up, as RemovePasskey); an unproven one's
// do not.
func (p Public) RemoveCredential(ctx context.Context, r *authv1.RemoveCredentialRequest) (_ *authv1.RemoveCredentialResponse, err error) {
	var actor string
	defer func() {
		if actor != "" {
			p.cfg.Audit.Record(ctx, audit.Event{Action: "auth.credential_remove", Actor: actor, Target: actor, Err: err,
				Attrs: []slog.Attr{slog.String("kind", auditEmail(r.GetKind())), slog.String("id", auditEmail(r.GetId()))}})
		}
	}()
	u, t, err := p.bearer(ctx)
	if err != nil {
		return nil, p.err(ctx, err)
	}
	if t.IsClient() {
		return nil, p.err(ctx, denied("the access token is a client's own: it has no user"))
	}
	actor = strconv.Itoa(int(u.ID))
	if strings.TrimSpace(r.GetKind()) == kindTOTP {
		// Whoever holds a signed-in browser must not drop the factor
		// that guards the account: its holder proves it again.
		if err := p.proveHolder(ctx, u, r.GetProof()); err != nil {
			return nil, p.err(ctx, err)
		}
	} else if err := p.lastWay(ctx, u); err != nil {
		return nil, p.err(ctx, err)
	}
	_, out, err := p.removeCredential(ctx, u, r.GetKind(), r.GetId(), false)
	if err != nil {
		return nil, p.err(ctx, err)
	}
	return &authv1.RemoveCredentialResponse{SignedOut: out}, nil
}

// adminUser is the user of email for the credential methods; a user
// administrator sees nothing of a privileged user's.
func (a Admin) adminUser(ctx context.Context, email string) (storage.User, error) {
	if len(email) > 254 {
		return storage.User{}, notFound("no user has this email address")
	}
	u, err := a.store.GetUserByEmail(ctx, strings.TrimSpace(email))
	if errors.Is(err, storage.ErrNotFound) {
		return u, notFound("no user has this email address")
	} else if err != nil {
		return u, err
	}
	return u, mayTouch(ctx, u)
}

func (a Admin) ListUserCredentials(ctx context.Context, r *authv1.ListUserCredentialsRequest) (*authv1.ListUserCredentialsResponse, error) {
	u, err := a.adminUser(ctx, r.GetEmail())
	if err != nil {
		return nil, a.err(ctx, err)
	}
	cs, err := a.credentialsOf(ctx, u)
	if err != nil {
		return nil, a.err(ctx, err)
	}
	return &authv1.ListUserCredentialsResponse{Credentials: cs, Removed: removedOf(u)}, nil
}

// RemoveUserCredential removes a user's key or passkey and revokes the
// user's tokens; the admin API's audit names the operator.
func (a Admin) RemoveUserCredential(ctx context.Context, r *authv1.RemoveUserCredentialRequest) (*authv1.RemoveUserCredentialResponse, error) {
	u, err := a.adminUser(ctx, r.GetEmail())
	if err != nil {
		return nil, a.err(ctx, err)
	}
	if _, _, err := a.removeCredential(ctx, u, r.GetKind(), r.GetId(), true); err != nil {
		return nil, a.err(ctx, err)
	}
	return &authv1.RemoveUserCredentialResponse{}, nil
}
