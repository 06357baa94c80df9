package storage

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"slices"
	"strings"
	"time"

	"fris.dev/pkg/kv"
)

// Keys of passkeys: pPasskey+<user>/<credential id> in the durable store,
// in the user's bucket (so a user's passkeys are one prefix, counted and
// written in one transaction); pCeremony+<sha256 of its id> is a begun
// registration or sign-in, in the volatile store with the grants.
const (
	pPasskey  = "passkey/"
	pCeremony = "passkey-ceremony/"
)

// ErrTooMany: the user already has as many passkeys as allowed.
var ErrTooMany = errors.New("too many passkeys")

// Passkey is a WebAuthn credential of a user. Credential is the library's
// record (public key, sign counter, flags) as JSON: the store keeps it
// without reading it.
type Passkey struct {
	// ID is the credential id, base64url without padding.
	ID         string `json:"id"`
	UserID     int32  `json:"user_id"`
	Name       string `json:"name"`
	Created    int64  `json:"created"`
	LastUsed   int64  `json:"last_used,omitempty"`
	Credential []byte `json:"credential"`
	// AddedBy and Proven: as UserKey's. A passkey is added by its
	// signed-in holder; it is proven when the address was verified then.
	// Records older than the fields count as proven: until them a
	// passkey was only ever added by a holder signed in with a password,
	// which an operator or a reset link set.
	AddedBy  string `json:"added_by,omitempty"`
	Unproven bool   `json:"unproven,omitempty"`
}

// Ceremony is a begun registration or sign-in: the challenge the answer
// must sign (Session, the library's record as JSON), good once until
// Expires.
type Ceremony struct {
	// Kind is "register" or "login"; one kind's ceremony is refused for
	// the other.
	Kind    string `json:"kind"`
	UserID  int32  `json:"user_id,omitempty"`
	Session []byte `json:"session"`
	Expires int64  `json:"expires"`
}

func passkeyKey(user int32, id string) string { return pPasskey + id32(user) + "/" + id }

func ceremonyKey(id string) string {
	sum := sha256.Sum256([]byte(id))
	return pCeremony + hex.EncodeToString(sum[:])
}

// AddPasskey stores p unless the user already has max passkeys (ErrTooMany)
// or one with its id (ErrExists), atomically.
func (s *KV) AddPasskey(ctx context.Context, p Passkey, max int) error {
	if p.ID == "" || strings.Contains(p.ID, "/") {
		return errors.New("passkey: bad id")
	}
	return s.db.Update(ctx, func(tx kv.Tx) error {
		have, err := tx.Scan(ctx, pPasskey+id32(p.UserID)+"/", "", 0)
		if err != nil {
			return err
		}
		if len(have) >= max {
			return ErrTooMany
		}
		if _, err := tx.Get(ctx, passkeyKey(p.UserID, p.ID)); err == nil {
			return ErrExists
		} else if !errors.Is(err, kv.ErrNotFound) {
			return err
		}
		return kv.PutJSON(tx, passkeyKey(p.UserID, p.ID), p, 0)
	})
}

// Passkeys returns a user's passkeys, oldest first.
func (s *KV) Passkeys(ctx context.Context, user int32) ([]Passkey, error) {
	out, err := kv.ScanJSON[Passkey](ctx, s.db, pPasskey+id32(user)+"/", "", 0)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b Passkey) int { return cmp.Or(cmp.Compare(a.Created, b.Created), strings.Compare(a.ID, b.ID)) })
	return out, nil
}

// UpdatePasskey changes one passkey atomically (ErrNotFound when it is gone).
func (s *KV) UpdatePasskey(ctx context.Context, user int32, id string, fn func(*Passkey) error) error {
	if id == "" || strings.Contains(id, "/") {
		return ErrNotFound
	}
	return s.db.Update(ctx, func(tx kv.Tx) error {
		p, err := kv.GetJSON[Passkey](ctx, tx, passkeyKey(user, id))
		if err != nil {
			return err
		}
		if err := fn(&p); err != nil {
			return err
		}
		p.ID, p.UserID = id, user
		return kv.PutJSON(tx, passkeyKey(user, id), p, 0)
	})
}

// DeletePasskey removes one of a user's passkeys and returns it
// (ErrNotFound when there is none of that id).
func (s *KV) DeletePasskey(ctx context.Context, user int32, id string) (Passkey, error) {
	var p Passkey
	if id == "" || strings.Contains(id, "/") {
		return p, ErrNotFound
	}
	err := s.db.Update(ctx, func(tx kv.Tx) error {
		var err error
		if p, err = kv.GetJSON[Passkey](ctx, tx, passkeyKey(user, id)); err != nil {
			return err
		}
		return tx.Delete(passkeyKey(user, id))
	})
	return p, err
}

// PutCeremony stores a begun ceremony under id until c.Expires.
func (s *KV) PutCeremony(ctx context.Context, id string, c Ceremony) error {
	ttl := time.Unix(c.Expires, 0).Sub(s.now())
	if id == "" || ttl <= 0 {
		return errors.New("passkey ceremony: empty id or already expired")
	}
	return s.codes.Update(ctx, func(tx kv.Tx) error { return kv.PutJSON(tx, ceremonyKey(id), c, ttl) })
}

// TakeCeremony returns and deletes a ceremony in one step, so its challenge
// is answered once even under concurrent attempts; ErrNotFound when it is
// unknown, taken or expired.
func (s *KV) TakeCeremony(ctx context.Context, id string) (Ceremony, error) {
	var c Ceremony
	if id == "" || len(id) > 256 {
		return c, ErrNotFound
	}
	err := s.codes.Update(ctx, func(tx kv.Tx) error {
		var err error
		if c, err = kv.GetJSON[Ceremony](ctx, tx, ceremonyKey(id)); err != nil {
			return err
		}
		return tx.Delete(ceremonyKey(id))
	})
	if err == nil && s.now().Unix() >= c.Expires {
		return Ceremony{}, ErrNotFound
	}
	return c, err
}
