package storage

import (
	"context"
	"errors"
	"time"

	"fris.dev/pkg/kv"
)

// pSignIn+id is a user's newest sign-in at the login form. It lives with
// the single-use codes, in the volatile store: a sign-in commits nothing
// durable (docs/decisions.md, "Refresh tokens carry their chain"), and
// losing the record in a crash or restart of the embedded store only makes
// the users view say "none recorded".
const pSignIn = "signin/"

// signInTTL: a sign-in older than this is forgotten.
const signInTTL = 400 * 24 * time.Hour

// SignIn is a user's newest recorded sign-in.
type SignIn struct {
	UserID int32  `json:"user_id"`
	At     int64  `json:"at"` // unix seconds
	Addr   string `json:"addr,omitempty"`
}

// RecordSignIn notes a sign-in of user id at (unix seconds) from addr. An
// older one than the recorded (replicas race) changes nothing.
func (s *KV) RecordSignIn(ctx context.Context, id int32, at int64, addr string) error {
	key := pSignIn + id32(id)
	return s.codes.Update(ctx, func(tx kv.Tx) error {
		old, err := kv.GetJSON[SignIn](ctx, tx, key)
		if err == nil && old.At > at {
			return nil
		} else if err != nil && !errors.Is(err, kv.ErrNotFound) {
			return err
		}
		return kv.PutJSON(tx, key, SignIn{UserID: id, At: at, Addr: addr}, signInTTL)
	})
}

// SignIns are the recorded sign-ins by user id.
func (s *KV) SignIns(ctx context.Context) (map[int32]SignIn, error) {
	list, err := kv.ScanJSON[SignIn](ctx, s.codes, pSignIn, "", 0)
	if err != nil {
		return nil, err
	}
	out := make(map[int32]SignIn, len(list))
	for _, si := range list {
		out[si.UserID] = si
	}
	return out, nil
}
