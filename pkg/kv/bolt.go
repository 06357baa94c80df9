package kv

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
	"golang.org/x/sync/singleflight"
)

var (
	bucketData    = []byte("data")
	bucketExpires = []byte("expires") // (expiry unix nanos || key) -> nil, for sweeping
)

// BoltOptions tune the embedded backend.
type BoltOptions struct {
	// BatchDelay is how long a write waits for others to share its commit
	// (group commit: one fsync for many writers; see batch.go). Zero means
	// 1ms.
	BatchDelay time.Duration
	// SweepEvery is the period of the expired-key sweeper. Zero means 1 minute.
	SweepEvery time.Duration
	// NoSync skips fsync; only for throwaway stores (tests, OpenVolatile).
	NoSync bool
	// Unbatched commits each write on its own. For a NoSync store: with no
	// fsync to share, a batch would only add its delay to every write.
	Unbatched bool
	Logger    *slog.Logger
	// Partitions, if set, holds each transaction to one partition, as
	// on Redis (see partition.go); the key space stays one.
	Partitions Partitioner
	// ProbeBytes is the largest value a client can make the store write
	// (an upload's biggest document). After a write failed for lack of
	// space, readiness returns only once a test write of this size plus
	// probeMargin (the record's other keys and pages) succeeds.
	ProbeBytes int64
	now        clock
	// fault, when set, fails commits with its error (tests of a full disk).
	fault func(*bolt.Tx) error
}

// Bolt is the embedded backend: one bbolt file, values prefixed by an 8-byte
// expiry (unix nanos, 0 = never).
type Bolt struct {
	db    *bolt.DB
	group *groupCommit // nil: each Update commits alone
	now   clock
	log   *slog.Logger
	stop  chan struct{}
	wg    sync.WaitGroup
	fault func(*bolt.Tx) error
	parts Partitioner

	// full is set when a commit failed for lack of space and cleared only
	// by a probe write of probeBytes that succeeds: while it is set Ping
	// tries that write, so readiness follows what the largest writes do,
	// not what reads or small writes do (both keep working in bbolt's free
	// pages while a document's worth of pages cannot be had).
	full atomic.Bool
	// failures counts commits that failed for lack of space, so a probe
	// that raced one does not clear the flag it set.
	failures   atomic.Uint64
	probeBytes int64
	probes     singleflight.Group
}

// probeMargin is added to ProbeBytes for the test write: room for the
// rest of a record (its summary, index keys, branch pages), and by itself
// big enough to need new pages in a file that has few free ones.
const probeMargin = 64 << 10

var bucketProbe = []byte("probe")

// OpenBolt opens (creating if needed) the store file at path.
func OpenBolt(path string, o BoltOptions) (*Bolt, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return nil, fmt.Errorf("kv: create data dir: %w", err)
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: 5 * time.Second, NoSync: o.NoSync, InitialMmapSize: initialMap(path)})
	if err != nil {
		return nil, fmt.Errorf("kv: open %s: %w", path, err)
	}
	if err := db.Update(func(tx *bolt.Tx) error {
		if _, err := tx.CreateBucketIfNotExists(bucketData); err != nil {
			return err
		}
		_, err := tx.CreateBucketIfNotExists(bucketExpires)
		return err
	}); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("kv: init %s: %w", path, err)
	}
	b := &Bolt{db: db, now: o.now, log: o.Logger, stop: make(chan struct{}), fault: o.fault, parts: o.Partitions,
		probeBytes: max(o.ProbeBytes, 0) + probeMargin}
	if b.now == nil {
		b.now = time.Now
	}
	if !o.Unbatched {
		delay := o.BatchDelay
		if delay <= 0 {
			delay = time.Millisecond
		}
		b.group = &groupCommit{update: b.update, mixed: b.updateMixed, parts: o.Partitions, delay: delay, maxBatch: 1000, serial: true}
	}
	if b.log == nil {
		b.log = slog.New(slog.DiscardHandler)
	}
	every := o.SweepEvery
	if every <= 0 {
		every = time.Minute
	}
	b.wg.Add(1)
	go b.sweepLoop(every)
	return b, nil
}

// minMap is the least memory map a store starts with (initialMap).
const minMap = 1 << 30

// initialMap is the size of a store's first memory map: twice the file,
// and at least minMap. bbolt maps the file anew when it outgrows the map,
// which waits for every open read transaction; while that write waits,
// every new read waits behind it. A snapshot (Snapshot) is a read
// transaction of seconds, so with bbolt's default (a map that doubles from
// 32 KiB) a backup stalled the whole service whenever the file crossed a
// doubling. With this room no write needs a new map until the file has
// doubled since the process opened it. It costs address space, not memory
// (pages are read in as used); on Windows bbolt would grow the file to the
// map's size, so there the default stays.
func initialMap(path string) int {
	if runtime.GOOS == "windows" {
		return 0
	}
	var size int64
	if st, err := os.Stat(path); err == nil {
		size = st.Size()
	}
	return int(max(minMap, 2*size))
}

func (b *Bolt) Close() error {
	close(b.stop)
	b.wg.Wait()
	return b.db.Close()
}

// Commits is the id of the last committed write transaction: it grows by
// one per commit (each costing bbolt two fdatasyncs), so writes divided by
// its growth is how many writes shared a commit.
func (b *Bolt) Commits() uint64 {
	var id int
	_ = b.db.View(func(tx *bolt.Tx) error {
		id = tx.ID()
		return nil
	})
	return uint64(id)
}

// Ping answers whether the store can serve. Reads keep working on a full
// disk, so after a commit failed for lack of space Ping writes (and then
// removes) probeBytes, and reports ErrNoSpace until that succeeds.
// Concurrent Pings share one probe (readiness and the health loop ask at
// the same time); a Ping whose ctx ends first is not ready, and the probe
// finishes for the next one.
func (b *Bolt) Ping(ctx context.Context) error {
	if b.full.Load() {
		select {
		case r := <-b.probes.DoChan("probe", func() (any, error) { return nil, b.probe() }):
			return r.Err
		case <-ctx.Done():
			return fmt.Errorf("%w: probe write still running: %w", ErrNoSpace, ctx.Err())
		}
	}
	return b.db.View(func(*bolt.Tx) error { return nil })
}

func (b *Bolt) probe() error {
	seen := b.failures.Load()
	err := b.commit(func(tx *bolt.Tx) error {
		bk, err := tx.CreateBucketIfNotExists(bucketProbe)
		if err != nil {
			return err
		}
		return bk.Put([]byte("probe"), make([]byte, b.probeBytes))
	})
	if err == nil {
		err = b.commit(func(tx *bolt.Tx) error { return tx.DeleteBucket(bucketProbe) })
	}
	// The pages the probe used are free again in the file: the next
	// write of that size fits. A write that succeeds elsewhere proves less
	// (it may have fit in a few free pages), so only the probe clears.
	if err == nil && b.failures.Load() == seen && b.full.CompareAndSwap(true, false) {
		b.log.Info("kv: a write of the largest size succeeds again; ready", "bytes", b.probeBytes)
	}
	return err
}

// commit runs one bbolt write transaction and sets the full flag when it
// fails for lack of space (the error becomes ErrNoSpace); only a probe
// clears the flag.
func (b *Bolt) commit(fn func(*bolt.Tx) error) error {
	err := b.db.Update(func(tx *bolt.Tx) error {
		if err := fn(tx); err != nil {
			return err
		}
		if b.fault != nil {
			return b.fault(tx)
		}
		return nil
	})
	if noSpace(err) {
		b.failures.Add(1)
		if !b.full.Swap(true) {
			b.log.Error("kv: a write failed for lack of disk space; not ready until a write of the largest size succeeds", "err", err, "bytes", b.probeBytes)
		}
		return fmt.Errorf("%w: %w", ErrNoSpace, err)
	}
	return err
}

func (b *Bolt) Get(ctx context.Context, key string) ([]byte, error) {
	var out []byte
	err := b.db.View(func(tx *bolt.Tx) error {
		v, err := boltGet(tx, key, b.now())
		out = v
		return err
	})
	return out, err
}

func (b *Bolt) Scan(ctx context.Context, prefix, after string, limit int) ([]Entry, error) {
	var out []Entry
	err := b.db.View(func(tx *bolt.Tx) error {
		var err error
		out, err = boltScan(tx, prefix, after, limit, b.now())
		return err
	})
	return out, err
}

// Update runs fn in a transaction that concurrent writers share (group
// commit, batch.go) unless the store is unbatched.
func (b *Bolt) Update(ctx context.Context, fn func(Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if b.group != nil {
		return b.group.do(ctx, fn)
	}
	return b.update(ctx, fn)
}

// update commits fn on its own.
func (b *Bolt) update(_ context.Context, fn func(Tx) error) error {
	return b.commit(func(tx *bolt.Tx) error {
		return fn(&pinnedTx{Tx: &boltTx{tx: tx, now: b.now()}, pin: pin{parts: b.parts}})
	})
}

// updateMixed is update without the one-partition rule, for a group
// commit's shared transaction (groupCommit.mixed).
func (b *Bolt) updateMixed(_ context.Context, fn func(Tx) error) error {
	return b.commit(func(tx *bolt.Tx) error {
		return fn(&boltTx{tx: tx, now: b.now()})
	})
}

type boltTx struct {
	tx  *bolt.Tx
	now time.Time
}

func (t *boltTx) Get(_ context.Context, key string) ([]byte, error) {
	return boltGet(t.tx, key, t.now)
}

func (t *boltTx) Scan(_ context.Context, prefix, after string, limit int) ([]Entry, error) {
	return boltScan(t.tx, prefix, after, limit, t.now)
}

func (t *boltTx) Put(key string, value []byte, ttl time.Duration) error {
	if err := checkKey(key); err != nil {
		return err
	}
	if err := t.dropExpiry(key); err != nil {
		return err
	}
	var exp int64
	if ttl > 0 {
		exp = t.now.Add(ttl).UnixNano()
		if err := t.tx.Bucket(bucketExpires).Put(expiryKey(exp, key), nil); err != nil {
			return err
		}
	}
	buf := make([]byte, 8+len(value))
	binary.BigEndian.PutUint64(buf, uint64(exp))
	copy(buf[8:], value)
	return t.tx.Bucket(bucketData).Put([]byte(key), buf)
}

func (t *boltTx) Delete(key string) error {
	if !validKey(key) {
		return nil
	}
	if err := t.dropExpiry(key); err != nil {
		return err
	}
	return t.tx.Bucket(bucketData).Delete([]byte(key))
}

// dropExpiry removes the sweeper's index entry of the key's current value.
func (t *boltTx) dropExpiry(key string) error {
	raw := t.tx.Bucket(bucketData).Get([]byte(key))
	if len(raw) < 8 {
		return nil
	}
	if exp := int64(binary.BigEndian.Uint64(raw)); exp != 0 {
		return t.tx.Bucket(bucketExpires).Delete(expiryKey(exp, key))
	}
	return nil
}

func expiryKey(exp int64, key string) []byte {
	k := make([]byte, 8+len(key))
	binary.BigEndian.PutUint64(k, uint64(exp))
	copy(k[8:], key)
	return k
}

// decode returns the live value of a raw record, or false when it has expired.
func decode(raw []byte, now time.Time) ([]byte, bool) {
	if len(raw) < 8 {
		return nil, false
	}
	if exp := int64(binary.BigEndian.Uint64(raw)); exp != 0 && exp <= now.UnixNano() {
		return nil, false
	}
	return bytes.Clone(raw[8:]), true
}

func boltGet(tx *bolt.Tx, key string, now time.Time) ([]byte, error) {
	if !validKey(key) {
		return nil, ErrNotFound
	}
	v, ok := decode(tx.Bucket(bucketData).Get([]byte(key)), now)
	if !ok {
		return nil, ErrNotFound
	}
	return v, nil
}

func boltScan(tx *bolt.Tx, prefix, after string, limit int, now time.Time) ([]Entry, error) {
	c := tx.Bucket(bucketData).Cursor()
	start := []byte(prefix)
	if after >= prefix {
		start = []byte(after)
	}
	var out []Entry
	p := []byte(prefix)
	for k, raw := c.Seek(start); k != nil && bytes.HasPrefix(k, p); k, raw = c.Next() {
		if string(k) <= after {
			continue
		}
		v, ok := decode(raw, now)
		if !ok {
			continue
		}
		out = append(out, Entry{Key: string(k), Value: v})
		if limit > 0 && len(out) >= limit {
			break
		}
	}
	return out, nil
}

func (b *Bolt) sweepLoop(every time.Duration) {
	defer b.wg.Done()
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-b.stop:
			return
		case <-t.C:
			if n, err := b.sweep(); err != nil {
				b.log.Warn("kv: sweep expired keys", "err", err)
			} else if n > 0 {
				b.log.Debug("kv: swept expired keys", "count", n)
			}
		}
	}
}

// sweep deletes expired keys so the file does not grow with dead TTL records.
func (b *Bolt) sweep() (int, error) {
	n := 0
	err := b.commit(func(tx *bolt.Tx) error {
		now := uint64(b.now().UnixNano())
		exp := tx.Bucket(bucketExpires)
		data := tx.Bucket(bucketData)
		c := exp.Cursor()
		for k, _ := c.First(); k != nil && binary.BigEndian.Uint64(k) <= now; k, _ = c.First() {
			key := k[8:]
			raw := data.Get(key)
			if len(raw) >= 8 && binary.BigEndian.Uint64(raw) == binary.BigEndian.Uint64(k) {
				if err := data.Delete(key); err != nil {
					return err
				}
				n++
			}
			if err := exp.Delete(k); err != nil {
				return err
			}
		}
		return nil
	})
	if errors.Is(err, bolt.ErrDatabaseNotOpen) {
		return 0, nil
	}
	return n, err
}
