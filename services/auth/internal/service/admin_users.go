package service

import (
	"context"
	"errors"
	"slices"
	"strings"

	"fris.dev/pkg/identity"
	"fris.dev/pkg/inputlimit"
	authv1 "fris.dev/proto/auth/v1"
	"fris.dev/services/auth/internal/storage"
	"fris.dev/services/auth/internal/tokens"
)

// A user administrator (identity.ScopeUserAdmin without the operator's
// scope) reaches the user methods through the gateway (app.go's Roles).
// So the role cannot escalate, it acts only on users who hold no
// privileged role and grants none: an operator's account, and who may
// administer users, stay an operator's business (docs/security.md).

// limited reports whether the call is a user administrator's: an identity
// the gateway forwarded, without the operator's scope. The admin
// certificate's own calls (bin/auth) and operators' are not limited.
func limited(ctx context.Context) bool {
	id := identity.FromIncoming(ctx)
	return !id.Anonymous() && !id.HasScope(identity.ScopeOperator)
}

func privileged(scopes []string) string {
	for _, s := range scopes {
		if identity.Privileged(s) {
			return s
		}
	}
	return ""
}

// CheckScopes refuses scopes that cannot be granted: each must be an RFC
// 6749 scope-token (identity.ScopeToken). It is the one check of every
// way a scope is granted: SetUserScopes, CreateUser, and the
// -default-scopes and -register-scopes flags (app/config.go). Letter case
// is not folded: scopes match exactly, so FRIS:OPERATOR is a valid scope
// that opens nothing, shown as it is stored (docs/security.md, Roles).
func CheckScopes(scopes []string) error {
	if err := inputlimit.Each("scope", scopes, inputlimit.Scope); err != nil {
		return err
	}
	for _, s := range scopes {
		if !identity.ScopeToken(s) {
			return invalid("scope %q cannot be granted: %s", s, identity.ScopeTokenRule)
		}
	}
	return nil
}

// grantable is scopes without those CheckScopes refuses, which a user
// may hold from before it checked them: they grant nothing, and would
// break every call that carries the token's scopes as gRPC metadata.
func grantable(scopes []string) (ok, dropped []string) {
	for _, s := range scopes {
		if identity.ScopeToken(s) {
			ok = append(ok, s)
		} else {
			dropped = append(dropped, s)
		}
	}
	return ok, dropped
}

// mayGrant refuses a user administrator's grant of a privileged role.
func mayGrant(ctx context.Context, scopes []string) error {
	if s := privileged(scopes); s != "" && limited(ctx) {
		return denied("only an operator grants the role %s", s)
	}
	return nil
}

// mayTouch refuses a user administrator's change to a privileged user.
func mayTouch(ctx context.Context, u storage.User) error {
	if s := privileged(u.Scopes); s != "" && limited(ctx) {
		return denied("the user holds the role %s: only an operator changes them", s)
	}
	return nil
}

// existenceOnly is what a user administrator's listing shows of a
// privileged user: that the account exists (its id and address) and the
// privileged roles that put it out of their reach; not its name, contact,
// state, sign-ins or other scopes.
func existenceOnly(u storage.User) *authv1.UserRecord {
	r := &authv1.UserRecord{Id: u.ID, Email: u.Email}
	for _, s := range u.Scopes {
		if identity.Privileged(s) {
			r.Scopes = append(r.Scopes, s)
		}
	}
	return r
}

// updateUser is updateByEmail for the user methods: a user
// administrator's call on a privileged user is refused inside the update,
// so a role granted meanwhile counts.
func (a Admin) updateUser(ctx context.Context, email string, fn func(*storage.User) error) error {
	return a.updateByEmail(ctx, email, func(u *storage.User) error {
		if err := mayTouch(ctx, *u); err != nil {
			return err
		}
		return fn(u)
	})
}

func (a Admin) SendPasswordReset(ctx context.Context, r *authv1.SendPasswordResetRequest) (*authv1.SendPasswordResetResponse, error) {
	if err := inputlimit.Check(inputlimit.F("email", r.GetEmail(), inputlimit.Email), inputlimit.F("lang", r.GetLang(), inputlimit.Param)); err != nil {
		return nil, a.err(ctx, err)
	}
	u, err := a.store.GetUserByEmail(ctx, strings.TrimSpace(r.GetEmail()))
	if errors.Is(err, storage.ErrNotFound) {
		return nil, a.err(ctx, notFound("no user has this email address"))
	} else if err != nil {
		return nil, a.err(ctx, err)
	}
	if u.Disabled {
		return nil, a.err(ctx, invalid("the user is disabled: enable them first"))
	}
	if err := mayTouch(ctx, u); err != nil {
		return nil, a.err(ctx, err)
	}
	// The link of the forgot-password page: single use, short-lived, dead
	// once the password changes. Not limited like that page: the caller is
	// an operator, and the call is audited with them as its actor.
	token := tokens.RandomString(32)
	t := storage.AccountToken{Purpose: storage.TokenPasswordReset, UserID: u.ID, Email: u.Email, Stamp: passwordStamp(u.PasswordHash),
		Expires: a.now().Add(a.cfg.ResetTTL).Unix()}
	if err := a.store.PutAccountToken(ctx, token, t); err != nil {
		return nil, a.err(ctx, err)
	}
	link := strings.TrimRight(a.cfg.Issuer, "/") + publicPrefix(ctx) + "/reset?token=" + token
	subject, body := resetMail(r.GetLang(), u.Email, link, ttlText(a.cfg.ResetTTL))
	a.mail(ctx, "password reset link", u.Email, subject, body, link)
	return &authv1.SendPasswordResetResponse{}, nil
}

func (a Admin) ListUserSignIns(ctx context.Context, r *authv1.ListUserSignInsRequest) (*authv1.ListUserSignInsResponse, error) {
	if err := inputlimit.Check(inputlimit.F("email", r.GetEmail(), inputlimit.Email)); err != nil {
		return nil, a.err(ctx, err)
	}
	u, err := a.store.GetUserByEmail(ctx, strings.TrimSpace(r.GetEmail()))
	if err != nil {
		return nil, a.err(ctx, err)
	}
	// Where and when an operator signs in is theirs and the operators'
	// business: a user administrator learns of a privileged account no
	// more than that it exists.
	if s := privileged(u.Scopes); s != "" && limited(ctx) {
		return nil, a.err(ctx, denied("the user holds the role %s: only an operator sees their sign-ins", s))
	}
	si, err := a.store.UserSignIns(ctx, u.ID)
	if err != nil {
		return nil, a.err(ctx, err)
	}
	out := &authv1.ListUserSignInsResponse{}
	for _, ev := range si.Recent {
		out.SignIns = append(out.SignIns, &authv1.SignInRecord{At: uint32(ev.At), Method: ev.Method, ClientId: ev.Client, Addr: ev.Addr})
	}
	return out, nil
}

// grantsNew reports whether scopes holds one that have does not.
func grantsNew(have, scopes []string) bool {
	for _, s := range scopes {
		if !slices.Contains(have, s) {
			return true
		}
	}
	return false
}
