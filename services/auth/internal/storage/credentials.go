package storage

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"strings"

	"fris.dev/pkg/kv"
)

// A user's keys are found by scanning every key: they are few (one per
// registration, which is limited per address), and the key records of
// older versions carry no index by user that a prefix could read.

// UserKeys returns the keys of a user, oldest first.
func (s *KV) UserKeys(ctx context.Context, user int32) ([]UserKey, error) {
	all, err := s.AllUserKeys(ctx)
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(all, func(k UserKey) bool { return k.UserID != user }), nil
}

// AllUserKeys returns every user's keys, oldest first.
func (s *KV) AllUserKeys(ctx context.Context) ([]UserKey, error) {
	out, err := kv.ScanJSON[UserKey](ctx, s.db, pUserKey, "", 0)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b UserKey) int { return cmp.Or(cmp.Compare(a.Created, b.Created), cmp.Compare(a.ID, b.ID)) })
	return out, nil
}

// AllPasskeys returns every user's passkeys.
func (s *KV) AllPasskeys(ctx context.Context) ([]Passkey, error) {
	return kv.ScanJSON[Passkey](ctx, s.db, pPasskey, "", 0)
}

// UpdateUserKey changes one key atomically (ErrNotFound when it is gone);
// its id, user and hash stay.
func (s *KV) UpdateUserKey(ctx context.Context, id int32, fn func(*UserKey) error) error {
	return s.db.Update(ctx, func(tx kv.Tx) error {
		k, err := kv.GetJSON[UserKey](ctx, tx, pUserKey+id32(id))
		if err != nil {
			return err
		}
		was := k
		if err := fn(&k); err != nil {
			return err
		}
		k.ID, k.UserID, k.SHA512, k.DER = was.ID, was.UserID, was.SHA512, was.DER
		return kv.PutJSON(tx, pUserKey+id32(id), k, 0)
	})
}

// DeleteUserKey removes a key of user, and the index of its hash, and
// returns it: ErrNotFound when the user has no key of that id. The record
// goes first, so a sign request by id is refused at once; the index of
// its hash (in another partition) follows, and only when it still names
// this key.
func (s *KV) DeleteUserKey(ctx context.Context, user, id int32) (UserKey, error) {
	var k UserKey
	err := s.db.Update(ctx, func(tx kv.Tx) error {
		var err error
		if k, err = kv.GetJSON[UserKey](ctx, tx, pUserKey+id32(id)); err != nil {
			return err
		}
		if k.UserID != user {
			return ErrNotFound
		}
		return tx.Delete(pUserKey + id32(id))
	})
	if err != nil {
		return UserKey{}, err
	}
	sha := strings.ToLower(k.SHA512)
	err = s.db.Update(ctx, func(tx kv.Tx) error {
		b, err := tx.Get(ctx, pKeyHash+sha)
		if errors.Is(err, kv.ErrNotFound) {
			return nil
		} else if err != nil {
			return err
		}
		if c, err := parseClaim(b); err != nil || c.Key != id {
			return err // another key's claim by now: leave it
		}
		return tx.Delete(pKeyHash + sha)
	})
	return k, err
}
