package storage

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"time"

	"fris.dev/pkg/kv"
)

// Session is a sign-in as its user sees it on the account page: one per
// refresh chain, written when the chain starts (a refresh writes nothing
// here), kept as long as the sign-in's refresh token lives. Whether it is
// still active the service decides from the revocations. The records live
// with the grants in the volatile store: a sign-in commits nothing durable
// (docs/decisions.md, auth-refresh-chain), and a record lost to a crash
// (the embedded store's volatile file starts empty at every start) only
// leaves that sign-in off the list; signing out everywhere still ends it.
type Session struct {
	Chain    string `json:"chain"`
	UserID   int32  `json:"user_id"`
	ClientID string `json:"client_id,omitempty"`
	// Addr is the client address the sign-in came from ("" unknown).
	Addr    string `json:"addr,omitempty"`
	Created int64  `json:"created"`
	Expires int64  `json:"expires"`
}

// sessionKey: in the user's own bucket (the id's), so a user's sessions
// are one prefix.
func sessionKey(user int32, chain string) string { return pSession + id32(user) + "/" + chain }

// PutSession records a sign-in until s.Expires.
func (s *KV) PutSession(ctx context.Context, ss Session) error {
	ttl := time.Unix(ss.Expires, 0).Sub(s.now())
	if ttl <= 0 || ss.Chain == "" || strings.Contains(ss.Chain, "/") {
		return nil // nothing to show
	}
	return s.codes.Update(ctx, func(tx kv.Tx) error { return kv.PutJSON(tx, sessionKey(ss.UserID, ss.Chain), ss, ttl) })
}

// Sessions returns a user's recorded sign-ins that have not expired,
// oldest first (at most limit; 0: all).
func (s *KV) Sessions(ctx context.Context, user int32, limit int) ([]Session, error) {
	out, err := kv.ScanJSON[Session](ctx, s.codes, pSession+id32(user)+"/", "", 0)
	if err != nil {
		return nil, err
	}
	now := s.now().Unix()
	kept := out[:0]
	for _, ss := range out {
		if ss.Expires > now {
			kept = append(kept, ss)
		}
	}
	sortSessions(kept)
	if limit > 0 && len(kept) > limit {
		kept = kept[len(kept)-limit:]
	}
	return kept, nil
}

func sortSessions(ss []Session) {
	slices.SortFunc(ss, func(a, b Session) int {
		return cmp.Or(cmp.Compare(a.Created, b.Created), strings.Compare(a.Chain, b.Chain))
	})
}
