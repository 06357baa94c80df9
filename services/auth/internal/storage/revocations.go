package storage

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"fris.dev/pkg/kv"
)

// Kinds of revocation log entries.
const (
	RevokeUser   = "user"   // ID: the user id as the tokens' sub writes it
	RevokeClient = "client" // ID: the client id
	RevokeChain  = "chain"  // ID: a refresh chain (sid)
	RevokeToken  = "token"  // ID: a token's jti
)

// Revocation is one entry of the revocation log, which resource servers
// read to refuse revoked access tokens without asking the service each
// time. Version orders the entries: every change gets the next one.
type Revocation struct {
	Version uint32 `json:"v"`
	Kind    string `json:"kind"`
	ID      string `json:"id"`
	// NotBefore (user, client): tokens issued before it are revoked.
	NotBefore int64 `json:"nbf,omitempty"`
	// Until: when no token the entry revokes is valid any more; the entry
	// is dropped then.
	Until int64 `json:"until"`
}

// defaultLogRetention covers the default access token lifetime many times
// over; the service sets the real one.
const defaultLogRetention = 24 * time.Hour

// maxRevokedID bounds the ids of revoked chains and tokens, which come from
// tokens the service verified but are stored as keys.
const maxRevokedID = 256

// logRevocation appends r to the revocation log under the next version, in
// tx: the counter is read and written in the same transaction as the
// entry, so versions become visible in order. An entry is kept at most
// LogRetention (a user's or client's: that long after its NotBefore):
// resource servers check access tokens only, and the service checks
// refresh tokens against the records and markers, which live longer.
func (s *KV) logRevocation(ctx context.Context, tx kv.Tx, r Revocation) error {
	if r.Until == 0 {
		r.Until = time.Unix(r.NotBefore, 0).Add(s.LogRetention).Unix()
	} else {
		r.Until = min(r.Until, s.now().Add(s.LogRetention).Unix())
	}
	ttl := time.Unix(r.Until, 0).Sub(s.now())
	if ttl <= 0 {
		return nil
	}
	v, err := next(ctx, tx, seqRevLog)
	if err != nil {
		return err
	}
	r.Version = uint32(v)
	return kv.PutJSON(tx, pRevLog+id32(v), r, ttl)
}

// errUnpublished: a revocation is in force here, but its log entry could
// not be written yet; PublishPending retries it.
var errUnpublished = errors.New("revocation not yet logged")

// revoke writes marker (in force at once for the service) and, with it, a
// pending log entry in the same partition; then it logs the entry and
// drops the pending record. The log lives in the base partition, so a
// crash between the two leaves the pending record for PublishPending: what
// the service refuses is never missing from the log for longer than that.
// It reports whether marker was new.
func (s *KV) revoke(ctx context.Context, marker, pending string, r Revocation, ttl time.Duration) (bool, error) {
	if ttl <= 0 {
		return false, nil
	}
	created := false
	err := s.db.Update(ctx, func(tx kv.Tx) error {
		created = false
		if _, err := tx.Get(ctx, marker); err == nil {
			return nil // revoked already (reuse, or an earlier call)
		} else if !errors.Is(err, kv.ErrNotFound) {
			return err
		}
		created = true
		if err := kv.PutJSON(tx, marker, struct{}{}, ttl); err != nil {
			return err
		}
		return kv.PutJSON(tx, pending, r, ttl)
	})
	if err != nil {
		return false, err
	}
	// Also when the marker was there: an earlier call may have stopped
	// before the log.
	if err := s.publish(ctx, pending); err != nil {
		return created, fmt.Errorf("%w: %w", errUnpublished, err)
	}
	return created, nil
}

// publish logs the pending revocation under key, if there is one, and
// deletes it unless it changed meanwhile (a newer revocation of the same
// record, published by its own writer). Two publishers may log it twice:
// resource servers apply entries idempotently.
func (s *KV) publish(ctx context.Context, key string) error {
	b, err := s.db.Get(ctx, key)
	if errors.Is(err, kv.ErrNotFound) {
		return nil
	} else if err != nil {
		return err
	}
	var r Revocation
	if err := json.Unmarshal(b, &r); err != nil {
		return fmt.Errorf("pending revocation %s: %w", key, err)
	}
	if err := s.db.Update(ctx, func(tx kv.Tx) error { return s.logRevocation(ctx, tx, r) }); err != nil {
		return err
	}
	return s.deleteIf(ctx, key, b)
}

// deleteIf deletes key if it still holds value.
func (s *KV) deleteIf(ctx context.Context, key string, value []byte) error {
	return s.db.Update(ctx, func(tx kv.Tx) error {
		now, err := tx.Get(ctx, key)
		if errors.Is(err, kv.ErrNotFound) || (err == nil && !bytes.Equal(now, value)) {
			return nil
		} else if err != nil {
			return err
		}
		return tx.Delete(key)
	})
}

func (s *KV) PublishPending(ctx context.Context) (int, error) {
	es, err := s.db.Scan(ctx, pPending, "", 0)
	if err != nil {
		return 0, err
	}
	var errs []error
	n := 0
	for _, e := range es {
		if err := s.publish(ctx, e.Key); err != nil {
			errs = append(errs, err)
			continue
		}
		n++
	}
	return n, errors.Join(errs...)
}

func (s *KV) revokeChain(ctx context.Context, chain string, until time.Time) (bool, error) {
	r := Revocation{Kind: RevokeChain, ID: chain, Until: until.Unix()}
	return s.revoke(ctx, pChain+chain, pPending+pendingChain+chain, r, until.Sub(s.now()))
}

func (s *KV) RevokeChain(ctx context.Context, chain string, until time.Time) error {
	if chain == "" || len(chain) > maxRevokedID {
		return nil
	}
	_, err := s.revokeChain(ctx, chain, until)
	return err
}

func (s *KV) RevokeToken(ctx context.Context, jti string, until time.Time) error {
	if jti == "" || len(jti) > maxRevokedID {
		return nil
	}
	r := Revocation{Kind: RevokeToken, ID: jti, Until: until.Unix()}
	_, err := s.revoke(ctx, pJTI+jti, pPending+pendingToken+jti, r, until.Sub(s.now()))
	return err
}

func (s *KV) Revoked(ctx context.Context, chain, jti string) (bool, error) {
	for _, key := range []string{pChain + chain, pJTI + jti, pRefresh + jti} {
		if key == pChain || key == pJTI || key == pRefresh {
			continue
		}
		if _, err := s.db.Get(ctx, key); err == nil {
			return true, nil
		} else if !errors.Is(err, kv.ErrNotFound) {
			return false, err
		}
	}
	return false, nil
}

func (s *KV) Revocations(ctx context.Context, since uint32) ([]Revocation, uint32, bool, error) {
	// The counter is read before the scan: an entry it counts is visible
	// to the scan (same transaction), and one written after it is either
	// seen by the scan or has a higher version than what is answered.
	var seq uint32
	if b, err := s.db.Get(ctx, seqRevLog); err == nil {
		n, err := strconv.ParseUint(string(b), 10, 32)
		if err != nil {
			return nil, 0, false, fmt.Errorf("counter %s: %w", seqRevLog, err)
		}
		seq = uint32(n)
	} else if !errors.Is(err, kv.ErrNotFound) {
		return nil, 0, false, err
	}
	full := since == 0 || since > seq
	after := ""
	version := since
	if full {
		version = seq
	} else {
		after = pRevLog + id32(int32(since))
	}
	rs, err := kv.ScanJSON[Revocation](ctx, s.db, pRevLog, after, 0)
	if err != nil {
		return nil, 0, false, err
	}
	now := s.now().Unix()
	out := make([]Revocation, 0, len(rs))
	for _, r := range rs {
		version = max(version, r.Version)
		if r.Until > now {
			out = append(out, r)
		}
	}
	return out, version, full, nil
}
