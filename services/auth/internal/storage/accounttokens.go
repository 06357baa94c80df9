package storage

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"time"

	"fris.dev/pkg/kv"
)

// Purposes of account tokens: a mailed link is good for one of them.
const (
	TokenPasswordReset     = "password_reset"
	TokenEmailVerification = "email_verification"
)

// AccountToken is what a mailed link's token stands for. The store keeps it
// under the token's SHA-256 only: whoever reads the store (a backup, a
// Redis snapshot) cannot use the links that are still live.
type AccountToken struct {
	Purpose string `json:"purpose"`
	UserID  int32  `json:"user_id"`
	// Email is the address the link was sent to: a verification proves
	// that address, and no longer counts once the user's address changed.
	Email string `json:"email"`
	// Stamp binds a reset token to the password it replaces (see the
	// service's passwordStamp): once the password changes by any way, the
	// link is dead.
	Stamp   string `json:"stamp,omitempty"`
	Expires int64  `json:"expires"`
}

// tokenKey is the record's key: the hash of the token, never the token.
func tokenKey(token string) string {
	sum := sha256.Sum256([]byte(token))
	return pAcctToken + hex.EncodeToString(sum[:])
}

// PutAccountToken stores t under the hash of token until t.Expires.
func (s *KV) PutAccountToken(ctx context.Context, token string, t AccountToken) error {
	if token == "" {
		return errors.New("account token: empty")
	}
	ttl := time.Unix(t.Expires, 0).Sub(s.now())
	if ttl <= 0 {
		return errors.New("account token: already expired")
	}
	return s.db.Update(ctx, func(tx kv.Tx) error { return kv.PutJSON(tx, tokenKey(token), t, ttl) })
}

// TakeAccountToken returns and deletes token's record in one step, so a
// link is good for one use even when it is followed twice at once.
func (s *KV) TakeAccountToken(ctx context.Context, token string) (AccountToken, error) {
	if token == "" || len(token) > 256 {
		return AccountToken{}, ErrNotFound
	}
	var t AccountToken
	err := s.db.Update(ctx, func(tx kv.Tx) error {
		var err error
		if t, err = kv.GetJSON[AccountToken](ctx, tx, tokenKey(token)); err != nil {
			return err
		}
		return tx.Delete(tokenKey(token))
	})
	if err == nil && s.now().Unix() >= t.Expires {
		return AccountToken{}, ErrNotFound
	}
	return t, err
}

// PeekAccountToken returns token's record without spending it:
// ErrNotFound when it is unknown, spent or expired.
func (s *KV) PeekAccountToken(ctx context.Context, token string) (AccountToken, error) {
	if token == "" || len(token) > 256 {
		return AccountToken{}, ErrNotFound
	}
	t, err := kv.GetJSON[AccountToken](ctx, s.db, tokenKey(token))
	if err == nil && s.now().Unix() >= t.Expires {
		return AccountToken{}, ErrNotFound
	}
	return t, err
}
