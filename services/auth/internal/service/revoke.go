package service

import (
	"context"
	"errors"
	"log/slog"
	"strings"

	"google.golang.org/protobuf/proto"

	"fris.dev/pkg/audit"
	"fris.dev/pkg/rpcerr"
	authv1 "fris.dev/proto/auth/v1"
	"fris.dev/services/auth/internal/storage"
	"fris.dev/services/auth/internal/tokens"
)

// reasonUnauthorizedClient: a client revoking a token issued to another
// (RFC 7009 2.1).
const reasonUnauthorizedClient = "unauthorized_client"

// authClient authenticates a client by id and secret (RFC 6749 2.3.1, the
// gateway moves Basic credentials into the request): unknown, wrong or
// disabled is 401 invalid_client, without telling which.
func (p Public) authClient(ctx context.Context, id, secret string) (storage.Client, error) {
	failed := rpcerr.WithReason(unauth("client authentication failed"), reasonInvalidClient)
	if id == "" || secret == "" {
		return storage.Client{}, failed
	}
	c, err := p.store.GetClient(ctx, id)
	if errors.Is(err, storage.ErrNotFound) {
		return storage.Client{}, p.unknownClient(ctx, id, secret, failed)
	} else if err != nil {
		return storage.Client{}, err
	}
	if err := p.checkSecret(ctx, c, secret); err != nil {
		return storage.Client{}, err
	}
	if c.Disabled {
		return storage.Client{}, failed
	}
	return c, nil
}

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
			ev.Actor, ev.Attrs = t.Subject, append(ev.Attrs, slog.String("token_type", t.Type))
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

// Token types of the introspection answer: RFC 7662 2.2 names the access
// token's OAuth type (RFC 6749 7.1); a refresh token has none, so it is
// called what it is.
const (
	introspectBearer  = "Bearer"
	introspectRefresh = "refresh_token"
)

// Introspect is RFC 7662. The caller must be an enabled client with its
// secret (401 invalid_client otherwise); any client may introspect any
// token, as any client's tokens open FRIS's APIs (docs/decisions.md,
// audiences). Anything not good now (malformed, expired, revoked, spent,
// an id token, its user or client disabled or gone) is {"active": false}
// and nothing more.
func (p Public) Introspect(ctx context.Context, r *authv1.IntrospectRequest) (*authv1.Introspection, error) {
	if _, err := p.authClient(ctx, r.GetClientId(), r.GetClientSecret()); err != nil {
		return nil, p.err(ctx, err)
	}
	if r.GetToken() == "" {
		return nil, p.err(ctx, invalid("token is required"))
	}
	inactive := &authv1.Introspection{Active: proto.Bool(false)}
	t, err := p.tokens.Read(ctx, r.GetToken(), "")
	if err != nil || (t.Type != tokens.TypeAccess && t.Type != tokens.TypeRefresh) {
		return inactive, nil
	}
	if _, _, err := p.current(ctx, t); errors.Is(err, errRevoked) {
		return inactive, nil
	} else if err != nil {
		return nil, p.err(ctx, err)
	}
	out := &authv1.Introspection{
		Active: proto.Bool(true), Sub: proto.String(t.Subject), Iss: proto.String(t.Issuer), Jti: proto.String(t.ID),
		Exp: proto.Uint32(uint32(t.ExpiresAt)), Iat: proto.Uint32(uint32(t.IssuedAt)), Nbf: proto.Uint32(uint32(t.NotBefore)),
		TokenType: proto.String(introspectBearer),
	}
	if t.Type == tokens.TypeRefresh {
		out.TokenType = proto.String(introspectRefresh)
	} else {
		out.Scope = proto.String(strings.Join(t.Scope, " "))
	}
	if id := t.ClientID(); id != "" {
		out.ClientId, out.Aud = proto.String(id), proto.String(id)
	}
	return out, nil
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
