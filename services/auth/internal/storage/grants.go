package storage

import (
	"context"
	"fmt"
	"time"

	"fris.dev/pkg/kv"
)

// Grant kinds.
const (
	GrantAuthorization = "authorization" // code from the browser login
	GrantSignRequest   = "sign"          // code to be signed with a user key
)

// Grant is what a single-use code stands for.
type Grant struct {
	Kind          string `json:"kind"`
	ClientID      string `json:"client_id,omitempty"`
	UserID        int32  `json:"user_id"`
	KeyID         int32  `json:"key_id,omitempty"`
	RedirectURI   string `json:"redirect_uri,omitempty"`
	Challenge     string `json:"challenge,omitempty"`
	ChallengeMeth string `json:"challenge_method,omitempty"`
	Scope         string `json:"scope,omitempty"`
	Nonce         string `json:"nonce,omitempty"`
	// Addr is the client address of the sign-in (the login form), for
	// the session's record when the code is exchanged.
	Addr    string `json:"addr,omitempty"`
	Expires int64  `json:"expires"`
	// Method: a pending sign-in's method so far (a Method value), for the
	// sign-in's record when its code is issued.
	Method string `json:"method,omitempty"`
}

func (s *KV) PutGrant(ctx context.Context, code string, g Grant) error {
	ttl := time.Until(time.Unix(g.Expires, 0))
	if ttl <= 0 {
		return fmt.Errorf("grant already expired")
	}
	return s.codes.Update(ctx, func(tx kv.Tx) error { return kv.PutJSON(tx, pGrant+code, g, ttl) })
}

func (s *KV) TakeGrant(ctx context.Context, code string) (Grant, error) {
	if code == "" || len(code) > 256 {
		return Grant{}, ErrNotFound
	}
	var g Grant
	err := s.codes.Update(ctx, func(tx kv.Tx) error {
		var err error
		if g, err = kv.GetJSON[Grant](ctx, tx, pGrant+code); err != nil {
			return err
		}
		return tx.Delete(pGrant + code)
	})
	if err == nil && s.now().Unix() >= g.Expires {
		return Grant{}, ErrNotFound
	}
	return g, err
}

// PeekGrant returns a code's grant without taking it: ErrNotFound when
// the code is unknown or expired.
func (s *KV) PeekGrant(ctx context.Context, code string) (Grant, error) {
	if code == "" || len(code) > 256 {
		return Grant{}, ErrNotFound
	}
	g, err := kv.GetJSON[Grant](ctx, s.codes, pGrant+code)
	if err == nil && s.now().Unix() >= g.Expires {
		return Grant{}, ErrNotFound
	}
	return g, err
}
