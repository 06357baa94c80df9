package storage

import (
	"context"
	"errors"
	"sort"
	"time"

	"fris.dev/pkg/kv"
)

// pSignIn+id is a user's recent sign-ins. They live with the single-use
// codes, in the volatile store: a sign-in commits nothing durable
// (docs/decisions.md, "Refresh tokens carry their chain"), and losing the
// record in a crash or restart of the embedded store only makes the users
// view say "none recorded". It is a convenience for operators, not an
// audit trail: the audit log records every sign-in.
const pSignIn = "signin/"

// signInTTL: a user who has not signed in for this long is forgotten.
const signInTTL = 400 * 24 * time.Hour

// RecentSignIns is how many sign-ins a user's record keeps (the newest).
const RecentSignIns = 10

// Sign-in methods.
const (
	MethodPassword = "password"
	MethodPasskey  = "passkey"
	MethodKey      = "key"
	// MethodPasswordTOTP: a password and a TOTP or recovery code.
	MethodPasswordTOTP = "password+totp"
)

// SignInEvent is one sign-in.
type SignInEvent struct {
	At     int64  `json:"at"` // unix seconds
	Method string `json:"method,omitempty"`
	Client string `json:"client,omitempty"`
	Addr   string `json:"addr,omitempty"`
}

// SignIn is a user's record: the newest sign-in (At, Addr) and the recent
// ones, newest first, at most RecentSignIns. A record written before the
// list was kept has only the newest.
type SignIn struct {
	UserID int32         `json:"user_id"`
	At     int64         `json:"at"`
	Addr   string        `json:"addr,omitempty"`
	Recent []SignInEvent `json:"recent,omitempty"`
}

// RecordSignIn notes a sign-in of user id. Replicas may race: the list
// stays ordered by time whatever order they write in.
func (s *KV) RecordSignIn(ctx context.Context, id int32, ev SignInEvent) error {
	key := pSignIn + id32(id)
	return s.codes.Update(ctx, func(tx kv.Tx) error {
		old, err := kv.GetJSON[SignIn](ctx, tx, key)
		if err != nil && !errors.Is(err, kv.ErrNotFound) {
			return err
		}
		if err == nil && len(old.Recent) == 0 && old.At > 0 {
			old.Recent = []SignInEvent{{At: old.At, Addr: old.Addr}}
		}
		rec := SignIn{UserID: id, Recent: addSignIn(old.Recent, ev)}
		rec.At, rec.Addr = rec.Recent[0].At, rec.Recent[0].Addr
		return kv.PutJSON(tx, key, rec, signInTTL)
	})
}

// addSignIn puts ev into list (newest first) and keeps the newest
// RecentSignIns.
func addSignIn(list []SignInEvent, ev SignInEvent) []SignInEvent {
	out := append(append(make([]SignInEvent, 0, len(list)+1), list...), ev)
	sort.SliceStable(out, func(i, j int) bool { return out[i].At > out[j].At })
	return out[:min(len(out), RecentSignIns)]
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

// UserSignIns is user id's record (zero when none is kept).
func (s *KV) UserSignIns(ctx context.Context, id int32) (SignIn, error) {
	si, err := kv.GetJSON[SignIn](ctx, s.codes, pSignIn+id32(id))
	if errors.Is(err, kv.ErrNotFound) {
		return SignIn{UserID: id}, nil
	}
	if err == nil && len(si.Recent) == 0 && si.At > 0 {
		si.Recent = []SignInEvent{{At: si.At, Addr: si.Addr}}
	}
	return si, err
}
