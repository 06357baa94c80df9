package service

import (
	"context"
	"strings"

	"fris.dev/pkg/inputlimit"
	authv1 "fris.dev/proto/auth/v1"
	"fris.dev/services/auth/internal/storage"
	"fris.dev/services/auth/internal/tokens"
)

// maxRedirectURLs bounds a client's list: each is compared on every
// authorization, and no application needs more.
const maxRedirectURLs = 32

func updateClientLimits(r *authv1.UpdateClientRequest) error {
	return inputlimit.Check(
		inputlimit.F("client_id", r.GetClientId(), inputlimit.ClientID),
		inputlimit.F("name", r.GetName(), inputlimit.Name),
		inputlimit.F("description", r.GetDescription(), inputlimit.Description),
		inputlimit.F("redirect_url", r.GetRedirectUrl(), inputlimit.RedirectURLs),
		inputlimit.F("alg", r.GetAlg(), inputlimit.Param),
	)
}

// UpdateClient changes a client's name, description, redirect URLs or
// signing algorithm, checked as CreateClient checks them; its secret and
// tokens stay (tokens already issued keep verifying: their key stays
// published until they expire).
func (a Admin) UpdateClient(ctx context.Context, r *authv1.UpdateClientRequest) (*authv1.UpdateClientResponse, error) {
	if err := updateClientLimits(r); err != nil {
		return nil, a.err(ctx, err)
	}
	if r.Name != nil && strings.TrimSpace(r.GetName()) == "" {
		return nil, a.err(ctx, invalid("name must not be empty"))
	}
	var urls []string
	if r.RedirectUrl != nil {
		var err error
		if urls, err = splitURLs(r.GetRedirectUrl()); err != nil {
			return nil, a.err(ctx, err)
		}
	}
	alg, err := clientAlg(r.GetAlg())
	if err != nil {
		return nil, a.err(ctx, err)
	}
	var out storage.Client
	err = a.store.UpdateClient(ctx, r.GetClientId(), func(c *storage.Client) error {
		if r.Name != nil {
			c.Name = r.GetName()
		}
		if r.Description != nil {
			c.Description = r.GetDescription()
		}
		if r.RedirectUrl != nil {
			c.RedirectURLs = urls
		}
		if r.Alg != nil {
			c.Alg = alg
		}
		out = *c
		return nil
	})
	if err != nil {
		return nil, a.err(ctx, err)
	}
	return &authv1.UpdateClientResponse{Client: a.clientRecord(out)}, nil
}

// RotateClientSecret stores the hash of a new secret: the old one is
// refused from the next request on, on every replica, since each reads
// the client from the store and the hasher's cache is keyed by the hash.
// Tokens issued with the old secret stay valid unless revoke_tokens asks.
func (a Admin) RotateClientSecret(ctx context.Context, r *authv1.RotateClientSecretRequest) (*authv1.RotateClientSecretResponse, error) {
	if err := inputlimit.Check(
		inputlimit.F("client_id", r.GetClientId(), inputlimit.ClientID),
		inputlimit.F("secret", r.GetSecret(), inputlimit.Secret),
	); err != nil {
		return nil, a.err(ctx, err)
	}
	secret := r.GetSecret()
	if secret == "" {
		secret = tokens.RandomString(32)
	} else if len(secret) < 16 {
		return nil, a.err(ctx, invalid("a client secret needs at least 16 characters"))
	}
	h, err := a.hash.Hash(ctx, secret)
	if err != nil {
		return nil, a.err(ctx, err)
	}
	var out storage.Client
	err = a.store.UpdateClient(ctx, r.GetClientId(), func(c *storage.Client) error {
		c.SecretHash = h
		if r.GetRevokeTokens() {
			c.RevokedBefore = a.revokeNow(c.RevokedBefore)
		}
		out = *c
		return nil
	})
	if err != nil {
		return nil, a.err(ctx, err)
	}
	return &authv1.RotateClientSecretResponse{Client: a.clientRecord(out), Secret: secret}, nil
}
