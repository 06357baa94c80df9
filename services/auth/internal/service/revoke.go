package service

import (
	"context"
	"log/slog"

	"fris.dev/pkg/audit"
	"fris.dev/pkg/rpcerr"
	authv1 "fris.dev/proto/auth/v1"
	"fris.dev/services/auth/internal/storage"
	"fris.dev/services/auth/internal/tokens"
)

// reasonUnauthorizedClient: a client revoking a token issued to another
// (RFC 7009 2.1).
const reasonUnauthorizedClient = "unauthorized_client"

// Revoke is RFC 7009. A token issued to a client may be revoked only by
// that client, authenticated; one issued to no client (the signature flow
// without client_id) by whoever holds it. A token that is not valid
// (malformed, expired, unknown, revoked already) is answered 200 all the
// same, as RFC 7009 2.2 asks: there is nothing left to revoke. A refresh
// token revokes its whole chain, the access tokens issued with it included
// (RFC 7009 2: SHOULD); an access token only itself.
func (p Public) Revoke(ctx context.Context, r *authv1.RevokeRequest) (res *authv1.RevokeResponse, err error) {
	var (
		t      *tokens.Claims
		client string
	)
	defer func() {
		if t == nil && err == nil {
			return // nothing revoked, nothing to record
		}
		ev := audit.Event{Action: "auth.revoke", Err: err, Attrs: []slog.Attr{slog.String("client_id", client)}}
		if t != nil {
			// The token presented was valid: its holder is signed in.
			ev.Actor, ev.Attrs, ev.Class = t.Subject, append(ev.Attrs, slog.String("token_type", string(t.Type))), audit.ClassSignedIn
		}
		p.cfg.Audit.Record(ctx, ev)
	}()
	if r.GetToken() == "" {
		return nil, p.err(ctx, invalid("token is required"))
	}
	var c storage.Client
	if r.GetClientId() != "" || r.GetClientSecret() != "" {
		if c, err = p.authClient(ctx, r.GetClientId(), r.GetClientSecret()); err != nil {
			return nil, p.err(ctx, err)
		}
		client = c.ID
	}
	// token_type_hint is only a hint (RFC 7009 2.1): the token's own
	// `type` decides.
	tok, rerr := p.tokens.Read(ctx, r.GetToken(), "")
	if rerr != nil {
		return &authv1.RevokeResponse{}, nil
	}
	if owner := tok.ClientID(); owner != "" && owner != c.ID {
		if c.ID == "" {
			return nil, p.err(ctx, rpcerr.WithReason(unauth("the token was issued to a client: authenticate as that client"), reasonInvalidClient))
		}
		return nil, p.err(ctx, rpcerr.WithReason(denied("the token was issued to another client"), reasonUnauthorizedClient))
	}
	t = tok
	life := p.tokens.Lifetimes()
	switch {
	case t.Type == tokens.TypeRefresh && t.Session != "":
		// Until the newest token the chain can have issued expires.
		err = p.store.RevokeChain(ctx, t.Session, p.now().Add(life.Refresh+life.Skew))
	default:
		err = p.store.RevokeToken(ctx, t.ID, t.Expiration().Add(life.Skew))
	}
	if err != nil {
		return nil, p.err(ctx, err)
	}
	return &authv1.RevokeResponse{}, nil
}

// RevocationList is what resource servers poll (the ops port's
// /revocations): the log entries after version since, or all in force.
func (s *Service) RevocationList(ctx context.Context, since uint32) (*authv1.RevocationList, error) {
	es, v, full, err := s.store.Revocations(ctx, since)
	if err != nil {
		return nil, err
	}
	out := &authv1.RevocationList{Version: v, Full: full, Revocations: make([]*authv1.Revocation, 0, len(es))}
	for _, e := range es {
		out.Revocations = append(out.Revocations, &authv1.Revocation{
			Kind: e.Kind, Id: e.ID, NotBefore: uint32(e.NotBefore), Until: uint32(e.Until),
		})
	}
	return out, nil
}
