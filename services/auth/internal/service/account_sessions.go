package service

import (
	"context"
	"strconv"

	"fris.dev/pkg/audit"
	authv1 "fris.dev/proto/auth/v1"
	"fris.dev/services/auth/internal/storage"
	"fris.dev/services/auth/internal/tokens"
)

// maxSessions bounds the sign-ins the account page lists (the newest).
const maxSessions = 50

// signIn issues the tokens of a new sign-in (a new refresh chain) and
// records it for the user's account page. Failing to record it costs only
// the listing: the sign-in stands.
func (p Public) signIn(ctx context.Context, u storage.User, c storage.Client, nonce, addr string) (tokens.Set, error) {
	return p.signInShaped(ctx, u, c, nonce, addr, shapeOAuth)
}

// signInShaped is signIn for a token request of shape sh.
func (p Public) signInShaped(ctx context.Context, u storage.User, c storage.Client, nonce, addr string, sh shape) (tokens.Set, error) {
	set, err := p.issue(ctx, u, c, nonce, nil, sh)
	if err != nil {
		return set, err
	}
	ss := storage.Session{Chain: set.Chain, UserID: u.ID, ClientID: c.ID, Addr: addr, Created: set.IssuedAt, Expires: set.RefreshExpires.Unix()}
	if err := p.store.PutSession(ctx, ss); err != nil {
		p.log.WarnContext(ctx, "recording a sign-in for the account page", "user", u.ID, "err", err)
	}
	return set, nil
}

func (p Public) ListSessions(ctx context.Context, _ *authv1.ListSessionsRequest) (*authv1.ListSessionsResponse, error) {
	u, t, err := p.bearer(ctx)
	if err != nil {
		return nil, p.err(ctx, err)
	}
	if t.IsClient() {
		return nil, p.err(ctx, denied("the access token is a client's own: it has no user"))
	}
	ss, err := p.store.Sessions(ctx, u.ID, maxSessions)
	if err != nil {
		return nil, p.err(ctx, err)
	}
	out := &authv1.ListSessionsResponse{}
	names := map[string]string{}
	for i := len(ss) - 1; i >= 0; i-- { // newest first
		s := ss[i]
		// Standing: not revoked with the user (a new password, a sign-out
		// everywhere), not signed out (its chain revoked).
		if s.Created < u.RevokedBefore {
			continue
		}
		if revoked, err := p.store.Revoked(ctx, s.Chain, ""); err != nil {
			return nil, p.err(ctx, err)
		} else if revoked {
			continue
		}
		name, ok := names[s.ClientID]
		if !ok && s.ClientID != "" {
			if c, err := p.store.GetClient(ctx, s.ClientID); err == nil {
				name = c.Name
			}
			names[s.ClientID] = name
		}
		out.Sessions = append(out.Sessions, &authv1.AccountSession{Id: s.Chain, ClientId: s.ClientID, ClientName: name, Address: s.Addr,
			Created: uint32(s.Created), Current: s.Chain == t.Session})
	}
	return out, nil
}

// SignOutEverywhere revokes every token of the user, the caller's
// included, as an operator's revoke-user does.
func (p Public) SignOutEverywhere(ctx context.Context, _ *authv1.SignOutEverywhereRequest) (_ *authv1.SignOutEverywhereResponse, err error) {
	var actor string
	defer func() {
		p.cfg.Audit.Record(ctx, audit.Event{Action: "auth.sign_out_everywhere", Actor: actor, Target: actor, Err: err, Class: signedIn(actor != "")})
	}()
	u, t, err := p.bearer(ctx)
	if err != nil {
		return nil, p.err(ctx, err)
	}
	if t.IsClient() {
		return nil, p.err(ctx, denied("the access token is a client's own: it has no user"))
	}
	actor = strconv.Itoa(int(u.ID))
	if err := p.store.UpdateUser(ctx, u.ID, func(cur *storage.User) error { cur.RevokedBefore = p.revokeNow(cur.RevokedBefore); return nil }); err != nil {
		return nil, p.err(ctx, err)
	}
	return &authv1.SignOutEverywhereResponse{}, nil
}
