package storage

import (
	"context"
	"errors"
	"fmt"

	"fris.dev/pkg/kv"
)

// Client is an application allowed to ask for tokens.
type Client struct {
	ID           string   `json:"id"`
	Name         string   `json:"name"`
	Description  string   `json:"description,omitempty"`
	RedirectURLs []string `json:"redirect_urls,omitempty"`
	Type         string   `json:"type"`
	SecretHash   string   `json:"secret_hash"`
	Disabled     bool     `json:"disabled,omitempty"`
	Created      int64    `json:"created"`
	// RevokedBefore (unix seconds): tokens issued to the client before it
	// (iat < RevokedBefore) are revoked; see UpdateClient.
	RevokedBefore int64 `json:"revoked_before,omitempty"`
	// Alg is the JWS algorithm of the client's access and id tokens:
	// ES256 or EdDSA; empty is the RSA algorithm (RS256, -alg).
	Alg string `json:"alg,omitempty"`
}

func (s *KV) CreateClient(ctx context.Context, c Client) error {
	return s.db.Update(ctx, func(tx kv.Tx) error {
		if _, err := tx.Get(ctx, pClient+c.ID); err == nil {
			return fmt.Errorf("client %q: %w", c.ID, ErrExists)
		} else if !errors.Is(err, kv.ErrNotFound) {
			return err
		}
		return kv.PutJSON(tx, pClient+c.ID, c, 0)
	})
}

func (s *KV) GetClient(ctx context.Context, id string) (Client, error) {
	if id == "" {
		return Client{}, ErrNotFound
	}
	return s.clients.Get(ctx, s.db, pClient+id)
}

func (s *KV) UpdateClient(ctx context.Context, id string, fn func(*Client) error) error {
	pending := pPending + pendingClient + id
	revoked := false
	err := s.db.Update(ctx, func(tx kv.Tx) error {
		revoked = false
		c, err := kv.GetJSON[Client](ctx, tx, pClient+id)
		if err != nil {
			return err
		}
		before := c.RevokedBefore
		if err := fn(&c); err != nil {
			return err
		}
		c.ID = id
		if c.RevokedBefore < before {
			c.RevokedBefore = before // a revocation is never undone
		} else if c.RevokedBefore > before {
			revoked = true
			r := Revocation{Kind: RevokeClient, ID: id, NotBefore: c.RevokedBefore}
			if err := kv.PutJSON(tx, pending, r, 0); err != nil {
				return err
			}
		}
		return kv.PutJSON(tx, pClient+id, c, 0)
	})
	if err != nil || !revoked {
		return err
	}
	return s.publish(ctx, pending)
}

func (s *KV) ListClients(ctx context.Context) ([]Client, error) {
	return kv.ScanJSON[Client](ctx, s.db, pClient, "", 0)
}
