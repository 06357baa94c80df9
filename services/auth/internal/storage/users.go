package storage

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"fris.dev/pkg/kv"
)

// Locality is where a user belongs.
type Locality struct {
	ID          string `json:"id,omitempty"`
	Name        string `json:"name,omitempty"`
	Description string `json:"description,omitempty"`
}

// User is a person or a registry's administrator.
type User struct {
	ID            int32    `json:"id"`
	Email         string   `json:"email"`
	RealName      string   `json:"real_name,omitempty"`
	Contact       string   `json:"contact,omitempty"`
	Locality      Locality `json:"locality"`
	PasswordHash  string   `json:"password_hash,omitempty"`
	EmailVerified bool     `json:"email_verified,omitempty"`
	Disabled      bool     `json:"disabled,omitempty"`
	Scopes        []string `json:"scopes,omitempty"`
	Created       int64    `json:"created"`
	// RevokedBefore (unix seconds): the user's tokens issued before it
	// (iat < RevokedBefore) are revoked; see UpdateUser.
	RevokedBefore int64 `json:"revoked_before,omitempty"`
}

// UserKey is a user's registered RSA public key.
type UserKey struct {
	ID          int32  `json:"id"`
	UserID      int32  `json:"user_id"`
	DER         []byte `json:"der"` // SPKI
	SHA512      string `json:"sha512"`
	Description string `json:"description,omitempty"`
	Created     int64  `json:"created"`
}

// NormalizeEmail is the form emails are compared in.
func NormalizeEmail(e string) string { return strings.ToLower(strings.TrimSpace(e)) }

func (s *KV) CreateUser(ctx context.Context, u User, key *UserKey) (User, *UserKey, error) {
	var outU User
	var outK *UserKey
	err := s.db.Update(ctx, func(tx kv.Tx) error {
		email := NormalizeEmail(u.Email)
		if _, err := tx.Get(ctx, pUserEmail+email); err == nil {
			return fmt.Errorf("user %q: %w", u.Email, ErrExists)
		} else if !errors.Is(err, kv.ErrNotFound) {
			return err
		}
		id, err := next(ctx, tx, seqUser)
		if err != nil {
			return err
		}
		nu := u
		nu.ID = id
		if err := kv.PutJSON(tx, pUser+id32(id), nu, 0); err != nil {
			return err
		}
		if err := tx.Put(pUserEmail+email, []byte(id32(id)), 0); err != nil {
			return err
		}
		outU, outK = nu, nil
		if key == nil {
			return nil
		}
		if _, err := tx.Get(ctx, pKeyHash+key.SHA512); err == nil {
			return fmt.Errorf("public key: %w", ErrExists)
		} else if !errors.Is(err, kv.ErrNotFound) {
			return err
		}
		kid, err := next(ctx, tx, seqKey)
		if err != nil {
			return err
		}
		nk := *key
		nk.ID, nk.UserID = kid, id
		if err := kv.PutJSON(tx, pUserKey+id32(kid), nk, 0); err != nil {
			return err
		}
		outK = &nk
		return tx.Put(pKeyHash+nk.SHA512, []byte(id32(kid)), 0)
	})
	return outU, outK, err
}

func (s *KV) GetUser(ctx context.Context, id int32) (User, error) {
	return kv.GetJSON[User](ctx, s.db, pUser+id32(id))
}

func (s *KV) GetUserByEmail(ctx context.Context, email string) (User, error) {
	b, err := s.db.Get(ctx, pUserEmail+NormalizeEmail(email))
	if err != nil {
		return User{}, err
	}
	return kv.GetJSON[User](ctx, s.db, pUser+string(b))
}

func (s *KV) UpdateUser(ctx context.Context, id int32, fn func(*User) error) error {
	return s.db.Update(ctx, func(tx kv.Tx) error {
		u, err := kv.GetJSON[User](ctx, tx, pUser+id32(id))
		if err != nil {
			return err
		}
		before, revoked := NormalizeEmail(u.Email), u.RevokedBefore
		if err := fn(&u); err != nil {
			return err
		}
		u.ID = id
		if after := NormalizeEmail(u.Email); after != before {
			return fmt.Errorf("the email of a user cannot change: %w", ErrConflict)
		}
		if u.RevokedBefore < revoked {
			u.RevokedBefore = revoked // a revocation is never undone
		} else if u.RevokedBefore > revoked {
			if err := s.logRevocation(ctx, tx, Revocation{Kind: RevokeUser, ID: strconv.Itoa(int(id)), NotBefore: u.RevokedBefore}); err != nil {
				return err
			}
		}
		return kv.PutJSON(tx, pUser+id32(id), u, 0)
	})
}

func (s *KV) ListUsers(ctx context.Context) ([]User, error) {
	return kv.ScanJSON[User](ctx, s.db, pUser, "", 0)
}

func (s *KV) GetUserKey(ctx context.Context, id int32) (UserKey, error) {
	return kv.GetJSON[UserKey](ctx, s.db, pUserKey+id32(id))
}

func (s *KV) GetUserKeyByHash(ctx context.Context, sha512hex string) (UserKey, error) {
	b, err := s.db.Get(ctx, pKeyHash+strings.ToLower(sha512hex))
	if err != nil {
		return UserKey{}, err
	}
	return kv.GetJSON[UserKey](ctx, s.db, pUserKey+string(b))
}
