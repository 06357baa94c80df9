package audit

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"sync"
	"time"

	"fris.dev/pkg/kv"
)

// Anonymous refusals are counted, not stored one by one: a stranger's
// refused attempts cost it nothing, and one stored event each would let
// it fill the store. Record folds every anonymous event that is not a
// success into a count per action, outcome, client address (an IPv6
// address's /64, what one host holds) and minute; the writer adds the
// counts gathered in memory to the one stored record of each every
// foldFlush (Store.AddFolds), a read-modify-write transaction on a key
// the fold names, so replicas sharing a Redis add to the same record. The
// audit log keeps every event, one line each.

// foldFlush is how often the counts gathered are added to the store: the
// view is at most this late, and a flood costs one write per fold per
// flush.
const foldFlush = time.Second

// maxFolds bounds the folds gathered between two flushes; beyond it,
// events of new addresses are counted under overflowAddr.
const maxFolds = 4096

// overflowAddr stands for the addresses beyond maxFolds.
const overflowAddr = "(more addresses)"

// foldKey is what one fold counts.
type foldKey struct {
	Action, Outcome, ClientAddr string
	// Minute is the minute's start, Unix seconds.
	Minute int64
}

// Fold is a count of anonymous refusals alike: an action's outcome from
// one client address (an IPv6 /64) in one minute.
type Fold struct {
	Action, Outcome, ClientAddr string
	// Minute is the minute's start.
	Minute time.Time
	// Reason is the first event's.
	Reason string
	Count  int
	// Last is the newest event's time.
	Last time.Time
}

func (f Fold) key() foldKey {
	return foldKey{Action: f.Action, Outcome: f.Outcome, ClientAddr: f.ClientAddr, Minute: f.Minute.Unix()}
}

// id is the fold's stored id: its minute as an event's time, then a hash
// of what it counts, so every writer of the same fold finds the same key.
func (f Fold) id() string {
	h := sha256.Sum256(fmt.Appendf(nil, "%s\x00%s\x00%s", f.Action, f.Outcome, f.ClientAddr))
	return timeID(f.Minute) + "-" + hex.EncodeToString(h[:8])
}

// foldAddr is the address a fold counts under: an IPv6 address's /64 (a
// host is given one, and may send from any address of it), else the
// address as forwarded.
func foldAddr(a string) string {
	ip, err := netip.ParseAddr(a)
	if err != nil || !ip.Is6() || ip.Is4In6() {
		return a
	}
	p, _ := ip.Prefix(64)
	return p.String()
}

// folder gathers anonymous refusals between flushes.
type folder struct {
	mu    sync.Mutex
	folds map[foldKey]*Fold
}

// add counts e; true when it starts a new gathering (the writer should
// flush in foldFlush).
func (f *folder) add(e Stored) bool {
	minute := e.Time.UTC().Truncate(time.Minute)
	k := foldKey{Action: e.Action, Outcome: e.Outcome, ClientAddr: foldAddr(e.ClientAddr), Minute: minute.Unix()}
	f.mu.Lock()
	defer f.mu.Unlock()
	first := len(f.folds) == 0
	if f.folds == nil {
		f.folds = map[foldKey]*Fold{}
	}
	fd, ok := f.folds[k]
	if !ok && len(f.folds) >= maxFolds {
		k.ClientAddr = overflowAddr
		fd, ok = f.folds[k]
	}
	if !ok {
		fd = &Fold{Action: k.Action, Outcome: k.Outcome, ClientAddr: k.ClientAddr, Minute: minute, Reason: e.Reason}
		f.folds[k] = fd
	}
	fd.Count++
	if e.Time.After(fd.Last) {
		fd.Last = e.Time
	}
	return first
}

// take returns what was gathered and starts anew.
func (f *folder) take() []Fold {
	f.mu.Lock()
	folds := f.folds
	f.folds = nil
	f.mu.Unlock()
	out := make([]Fold, 0, len(folds))
	for _, fd := range folds {
		out = append(out, *fd)
	}
	return out
}

// AddFolds adds the folds' counts to their stored records in the anonymous
// class, creating those that are not there yet, and returns how many it
// created. Each transaction reads and writes its records atomically (on
// Redis optimistically, retried on a conflict), so writers on several
// replicas add up.
func (s *Store) AddFolds(ctx context.Context, folds []Fold) (int, error) {
	if s.ret.Keep <= 0 {
		return 0, nil
	}
	created := 0
	for len(folds) > 0 {
		batch := folds[:min(len(folds), batchLen)]
		folds = folds[len(batch):]
		n := 0
		err := s.db.Update(ctx, func(tx kv.Tx) error {
			n = 0
			for _, f := range batch {
				key := classPrefix(ClassAnonymous) + f.id()
				var e Stored
				b, err := tx.Get(ctx, key)
				switch {
				case errors.Is(err, kv.ErrNotFound):
					n++
					e = Stored{Time: f.Minute, Action: f.Action, Actor: "anonymous", Outcome: f.Outcome, Reason: f.Reason, ClientAddr: f.ClientAddr}
				case err != nil:
					return err
				default:
					if err := json.Unmarshal(b, &e); err != nil {
						return fmt.Errorf("decode %s: %w", key, err)
					}
					e.Count = max(e.Count, 1)
				}
				e.Count += f.Count
				if f.Last.After(e.Last) {
					e.Last = f.Last
				}
				if err := kv.PutJSON(tx, key, bounded(e), s.ret.For); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return created, err
		}
		created += n
	}
	return created, nil
}
