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

// SpendRefresh checks the chain outside the transaction that marks the
// token spent, since they are in different partitions: a chain revoked
// between the two still has every later token refused, the one issued now
// included.
func (s *KV) SpendRefresh(ctx context.Context, r Refresh, chainUntil time.Time) error {
	if r.JTI == "" || r.Chain == "" || len(r.JTI) > 256 || len(r.Chain) > 256 {
		return ErrNotFound
	}
	if _, err := s.db.Get(ctx, pChain+r.Chain); err == nil {
		return ErrRevoked
	} else if !errors.Is(err, kv.ErrNotFound) {
		return err
	}
	reused := false
	var ttl time.Duration
	err := s.db.Update(ctx, func(tx kv.Tx) error {
		reused = false
		// Checked inside the transaction: the marker below must outlive
		// the token, and one spent at its last moment would get none.
		ttl = markerTTL(r.Expires, s.now())
		if ttl <= 0 {
			return ErrNotFound
		}
		if _, err := tx.Get(ctx, pRefresh+r.JTI); err == nil {
			reused = true
			return nil
		} else if !errors.Is(err, kv.ErrNotFound) {
			return err
		}
		r.Used = true
		return kv.PutJSON(tx, pRefresh+r.JTI, r, ttl)
	})
	if err != nil || !reused {
		return err
	}
	// Someone holds a copy of a token already exchanged: the legitimate
	// holder and the thief now share a chain, so all of it goes. The
	// answer is ErrReused even when the log entry could not be written:
	// the chain is refused here already, and PublishPending logs it.
	until := s.now().Add(max(chainUntil.Sub(s.now()), ttl))
	if _, err := s.revokeChain(ctx, r.Chain, until); err != nil && !errors.Is(err, errUnpublished) {
		return err
	}
	return ErrReused
}

// markerTTL is how long a spend marker lives: until the token expires
// (unix seconds), rounded up to a whole second, 0 once it has. Whole
// seconds make the markers a group commit writes expire at the same
// instant (the batch's clock plus N seconds) rather than at instants
// apart by the microseconds between their spends; bbolt's expiry index
// is ordered by that instant, then by key (a time-ordered jti), so the
// batch's index entries then share a leaf at the index's end instead of
// each dirtying a leaf of its own (docs/decisions.md, auth-refresh-jti).
// The marker outlives its token by less than a second, never the reverse.
func markerTTL(expires int64, now time.Time) time.Duration {
	left := time.Unix(expires, 0).Sub(now)
	if left <= 0 {
		return 0
	}
	if r := left % time.Second; r != 0 {
		left += time.Second - r
	}
	return left
}

func (s *KV) Spent(ctx context.Context, jti string) (bool, error) {
	if jti == "" || len(jti) > 256 {
		return false, nil
	}
	if _, err := s.db.Get(ctx, pRefresh+jti); err == nil {
		return true, nil
	} else if !errors.Is(err, kv.ErrNotFound) {
		return false, err
	}
	return false, nil
}
