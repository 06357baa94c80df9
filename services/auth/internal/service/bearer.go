package service

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"

	"fris.dev/pkg/accesstoken"
	"fris.dev/pkg/authheader"
	"fris.dev/pkg/identity"
	"fris.dev/pkg/rpcerr"
	authv1 "fris.dev/proto/auth/v1"
	"fris.dev/services/auth/internal/storage"
	"fris.dev/services/auth/internal/tokens"
)

// bearer verifies the access token the gateway forwarded and returns it
// with its user; a client's own token (client_credentials) has none, and
// the user is zero.
func (p Public) bearer(ctx context.Context) (storage.User, *tokens.Claims, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	var raw string
	if v := md.Get("authorization"); len(v) > 0 {
		raw = authheader.Bearer(v[0])
	}
	if raw == "" {
		return storage.User{}, nil, denied("an access token is required")
	}
	t, err := p.tokens.Read(ctx, raw, accesstoken.Type)
	if err != nil {
		return storage.User{}, nil, denied("the access token is not valid")
	}
	u, _, err := p.current(ctx, t)
	if err != nil {
		return storage.User{}, nil, err
	}
	return u, t, nil
}

// errRevoked: a verified token that is no longer good (revoked, its user or
// client disabled or gone).
var errRevoked = rpcerr.New(rpcerr.ErrPermission, "the token has been revoked")

// current checks that a verified token still stands: not revoked by its
// chain or jti (or, for a refresh token, spent), its user and client still
// there, enabled and without a revocation since it was issued (a password
// change, a disable, an operator's revoke). It returns them (zero for a
// client's own token's user, or a token issued to no client); errRevoked
// when the token does not stand. The gateway checks the same from the
// revocation list; this is the service's own, current to the store.
func (p Public) current(ctx context.Context, t *tokens.Claims) (storage.User, storage.Client, error) {
	var (
		u storage.User
		c storage.Client
	)
	if revoked, err := p.store.Revoked(ctx, t.Session, t.ID); err != nil {
		return u, c, err
	} else if revoked {
		return u, c, errRevoked
	}
	// An access token whose refresh token was spent has been superseded
	// (Config.RefreshSupersedesAccess; only tokens issued while it is on
	// name their refresh token).
	if p.cfg.RefreshSupersedesAccess && t.Type == accesstoken.Type && t.RefreshJTI != "" {
		if spent, err := p.store.Spent(ctx, t.RefreshJTI); err != nil {
			return u, c, err
		} else if spent {
			return u, c, errRevoked
		}
	}
	var err error
	if id := t.ClientID(); id != "" {
		c, err = p.store.GetClient(ctx, id)
		if errors.Is(err, storage.ErrNotFound) {
			return u, c, errRevoked
		} else if err != nil {
			return u, c, err
		}
		if c.Disabled {
			return u, c, errRevoked
		}
	}
	if !t.IsClient() {
		u, err = p.store.GetUser(ctx, t.UserID())
		if errors.Is(err, storage.ErrNotFound) {
			return u, c, errRevoked
		} else if err != nil {
			return u, c, err
		}
		if u.Disabled {
			return u, c, errRevoked
		}
	}
	if revokedBy(t, u, c) {
		return u, c, errRevoked
	}
	return u, c, nil
}

func (p Public) GetTokenInfo(ctx context.Context, _ *authv1.GetTokenInfoRequest) (*authv1.TokenInfo, error) {
	_, t, err := p.bearer(ctx)
	if err != nil {
		return nil, p.err(ctx, err)
	}
	// Exactly the token's own scope claim: a token without one reports an
	// empty array (never a default), so what /tokeninfo says and what
	// every reader of the token itself finds agree.
	scopes := t.Scope
	if scopes == nil {
		scopes = []string{}
	}
	return &authv1.TokenInfo{
		ExpirationDate: seconds(t.Expiration()), Subject: t.Subject, Scope: scopes,
		Nonce: t.Nonce, NotBeofre: seconds(t.NotBeforeTime()), Issuer: t.Issuer,
		Jti: t.ID, NotBefore: seconds(t.NotBeforeTime()), IssuedAt: seconds(t.IssuedAtTime()),
	}, nil
}

func (p Public) GetUserInfo(ctx context.Context, _ *authv1.GetUserInfoRequest) (*authv1.UserInfo, error) {
	u, t, err := p.bearer(ctx)
	if err != nil {
		return nil, p.err(ctx, err)
	}
	if t.IsClient() {
		return nil, p.err(ctx, denied("the access token is a client's own: it has no user"))
	}
	return userInfo(u), nil
}

func userInfo(u storage.User) *authv1.UserInfo {
	return &authv1.UserInfo{
		RealName: u.RealName, ContactInformation: u.Contact, Email: u.Email, EmailVerified: u.EmailVerified,
		Sub: strconv.Itoa(int(u.ID)), Id: strconv.Itoa(int(u.ID)), Name: u.RealName,
		Locality: &authv1.Locality{Id: u.Locality.ID, Name: u.Locality.Name, Description: u.Locality.Description},
	}
}

func (p Public) SearchUsers(ctx context.Context, r *authv1.SearchUsersRequest) (*authv1.SearchUsersResponse, error) {
	_, t, err := p.bearer(ctx)
	if err != nil {
		return nil, p.err(ctx, err)
	}
	// The gateway checks the scope first; this check keeps the names and
	// addresses closed to anyone who reaches the gRPC API another way.
	if !contains(t.Scope, identity.ScopeUserSearch) {
		return nil, p.err(ctx, denied("the access token lacks the scope %s", identity.ScopeUserSearch))
	}
	q := strings.ToLower(strings.TrimSpace(r.GetQuery()))
	if q == "" {
		return nil, p.err(ctx, invalid("query is required"))
	}
	us, err := p.store.ListUsers(ctx)
	if err != nil {
		return nil, p.err(ctx, err)
	}
	out := &authv1.SearchUsersResponse{Users: []*authv1.UserInfo{}}
	for _, u := range us {
		if u.Disabled {
			continue
		}
		if strings.Contains(strings.ToLower(u.RealName), q) || strings.Contains(strings.ToLower(u.Email), q) {
			out.Users = append(out.Users, userInfo(u))
			if len(out.Users) >= p.cfg.MaxSearchResult {
				break
			}
		}
	}
	return out, nil
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
	if err != nil || (t.Type != accesstoken.Type && t.Type != tokens.TypeRefresh) {
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
		out.ClientId = proto.String(id)
	}
	if len(t.Audience) > 0 {
		// The client, or the issuer for a token issued to no client.
		out.Aud = proto.String(t.Audience[0])
	}
	return out, nil
}
