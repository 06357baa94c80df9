package storage

import (
	"context"
	"errors"
	"time"

	"fris.dev/pkg/kv"
)

// Refresh is a refresh token as the store sees it: read from the token
// when it is presented, recorded only once it is spent.
type Refresh struct {
	JTI      string `json:"jti"`
	Chain    string `json:"chain"`
	UserID   int32  `json:"user_id"`
	ClientID string `json:"client_id"`
	Used     bool   `json:"used,omitempty"`
	Expires  int64  `json:"expires"`
}

func (s *KV) SpendRefresh(ctx context.Context, r Refresh, chainUntil time.Time) error {
	if r.JTI == "" || r.Chain == "" || len(r.JTI) > 256 || len(r.Chain) > 256 {
		return ErrNotFound
	}
	var outcome error
	err := s.db.Update(ctx, func(tx kv.Tx) error {
		outcome = nil
		// Checked inside the transaction: the marker below must outlive
		// the token, and one spent at its last moment would get none.
		ttl := time.Unix(r.Expires, 0).Sub(s.now())
		if ttl <= 0 {
			return ErrNotFound
		}
		if _, err := tx.Get(ctx, pChain+r.Chain); err == nil {
			outcome = ErrRevoked
			return nil
		} else if !errors.Is(err, kv.ErrNotFound) {
			return err
		}
		if _, err := tx.Get(ctx, pRefresh+r.JTI); err == nil {
			// Someone holds a copy of a token already exchanged: the
			// legitimate holder and the thief now share a chain, so all of
			// it goes.
			outcome = ErrReused
			until := s.now().Add(max(chainUntil.Sub(s.now()), ttl))
			return s.revokeChain(ctx, tx, r.Chain, until)
		} else if !errors.Is(err, kv.ErrNotFound) {
			return err
		}
		r.Used = true
		return kv.PutJSON(tx, pRefresh+r.JTI, r, ttl)
	})
	if err != nil {
		return err
	}
	return outcome
}
