package storage

import (
	"context"
	"encoding/binary"
	"errors"

	"fris.dev/pkg/kv"
)

// How far inquiries get: when each site's banks last asked for their list
// of inquiries, and when a site first fetched an inquiry. Each is its own
// small record, so polls never contend with an operator's or a
// researcher's edits.

const (
	pollAtPref = "site-poll/"
	seenPref   = "inquiry-seen/"
)

// SitePolled records that a bank of the site asked for its inquiries at
// (unix nanoseconds). A time within grain of the one recorded is not
// written: connectors poll every few seconds, and the researcher's page
// needs no finer time.
func (s *KV) SitePolled(ctx context.Context, id string, at, grain int64) error {
	old, err := s.stamp(ctx, s.db, pollAtPref+id)
	if err != nil || at-old < grain {
		return err
	}
	return s.db.Update(ctx, func(tx kv.Tx) error {
		old, err := s.stamp(ctx, tx, pollAtPref+id)
		if err != nil || old >= at {
			return err
		}
		return tx.Put(pollAtPref+id, stampBytes(at), 0)
	})
}

// SitePolls are the sites' last polls (unix nanoseconds), by site id.
func (s *KV) SitePolls(ctx context.Context) (map[string]int64, error) {
	return s.stamps(ctx, pollAtPref)
}

// InquirySeen records that a bank of the site fetched the inquiry at,
// unless one did before.
func (s *KV) InquirySeen(ctx context.Context, inquiry, site string, at int64) error {
	key := seenPref + inquiry + "/" + site
	if old, err := s.stamp(ctx, s.db, key); err != nil || old != 0 {
		return err
	}
	return s.db.Update(ctx, func(tx kv.Tx) error {
		if old, err := s.stamp(ctx, tx, key); err != nil || old != 0 {
			return err
		}
		return tx.Put(key, stampBytes(at), 0)
	})
}

// InquirySeenBy is when each site first fetched the inquiry, by site id.
func (s *KV) InquirySeenBy(ctx context.Context, inquiry string) (map[string]int64, error) {
	return s.stamps(ctx, seenPref+inquiry+"/")
}

func (s *KV) stamp(ctx context.Context, r kv.Reader, key string) (int64, error) {
	v, err := r.Get(ctx, key)
	if errors.Is(err, kv.ErrNotFound) {
		return 0, nil
	}
	if err != nil || len(v) != 8 {
		return 0, err
	}
	return int64(binary.BigEndian.Uint64(v)), nil
}

func (s *KV) stamps(ctx context.Context, prefix string) (map[string]int64, error) {
	es, err := s.db.Scan(ctx, prefix, "", 0)
	if err != nil {
		return nil, err
	}
	out := make(map[string]int64, len(es))
	for _, e := range es {
		if len(e.Value) == 8 {
			out[e.Key[len(prefix):]] = int64(binary.BigEndian.Uint64(e.Value))
		}
	}
	return out, nil
}

func stampBytes(at int64) []byte {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(at))
	return b[:]
}
