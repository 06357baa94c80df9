package service

import (
	"context"
	"regexp"
	"strings"

	"google.golang.org/grpc/metadata"

	"fris.dev/pkg/identity"
	authv1 "fris.dev/proto/auth/v1"
)

func (p Public) ListClients(ctx context.Context, _ *authv1.ListClientsRequest) (*authv1.ListClientsResponse, error) {
	cs, err := p.store.ListClients(ctx)
	if err != nil {
		return nil, p.err(ctx, err)
	}
	out := &authv1.ListClientsResponse{Clients: []*authv1.Client{}}
	for _, c := range cs {
		if !c.Disabled {
			out.Clients = append(out.Clients, apiClient(c))
		}
	}
	return out, nil
}

func (p Public) ListCerts(context.Context, *authv1.ListCertsRequest) (*authv1.ListCertsResponse, error) {
	return &authv1.ListCertsResponse{Keys: p.keys.Certs()}, nil
}

func (p Public) GetJWKS(context.Context, *authv1.GetJWKSRequest) (*authv1.JWKS, error) {
	return p.keys.JWKS(), nil
}

func (p Public) GetDiscovery(ctx context.Context, _ *authv1.GetDiscoveryRequest) (*authv1.Discovery, error) {
	base := strings.TrimRight(p.cfg.Issuer, "/")
	at := base + publicPrefix(ctx)
	return &authv1.Discovery{
		Issuer:                            base,
		AuthorizationEndpoint:             at + "/authorize",
		TokenEndpoint:                     at + "/token",
		JwksUri:                           at + "/jwks",
		UserinfoEndpoint:                  at + "/userinfo",
		ResponseTypesSupported:            []string{"code"},
		GrantTypesSupported:               []string{grantCode, grantRefresh, grantClient},
		SubjectTypesSupported:             []string{"public"},
		IdTokenSigningAlgValuesSupported:  p.keys.Algs(),
		CodeChallengeMethodsSupported:     []string{"S256"},
		ScopesSupported:                   append([]string{"openid"}, p.cfg.DefaultScopes...),
		TokenEndpointAuthMethodsSupported: []string{"client_secret_basic", "client_secret_post"},
		ClaimsSupported:                   []string{"iss", "sub", "aud", "exp", "nbf", "iat", "jti", "nonce", "scope", "type", "email", "email_verified", "name", "sid"},
		RevocationEndpoint:                at + "/revoke",
		// none: a token issued to no client (the signature flow without
		// client_id) is revoked by whoever holds it.
		RevocationEndpointAuthMethodsSupported:    []string{"client_secret_basic", "client_secret_post", "none"},
		IntrospectionEndpoint:                     at + "/introspect",
		IntrospectionEndpointAuthMethodsSupported: []string{"client_secret_basic", "client_secret_post"},
	}, nil
}

// validPrefix is what the gateway accepts for -auth-prefix, tighter: path
// segments of URL-safe characters.
var validPrefix = regexp.MustCompile(`^(/[A-Za-z0-9._~-]+)+$`)

// publicPrefix is the path prefix the gateway serves group A under, which it
// sends with the discovery call; /oauth2 when it sent none or nothing sane.
func publicPrefix(ctx context.Context) string {
	md, _ := metadata.FromIncomingContext(ctx)
	if v := md.Get(identity.KeyAuthPrefix); len(v) == 1 && len(v[0]) <= 256 && validPrefix.MatchString(v[0]) {
		return v[0]
	}
	return "/oauth2"
}
