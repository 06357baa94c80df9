package kv_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"fris.dev/pkg/kv"
)

// hangGuard bounds waits that only a bug makes long (a snapshot that
// blocks the writers would hang the test instead).
const hangGuard = 2 * time.Minute

// pairWriter commits, one transaction after another, the pair a = b = n
// and a record fill/n big enough that the file keeps growing, so a
// snapshot in progress meets writes that need new pages and a larger
// memory map. It stops when stop is closed.
type pairWriter struct {
	db       *kv.Bolt
	mu       sync.Mutex
	n        int
	advanced *sync.Cond
}

const fillBytes = 16 << 10

func newPairWriter(db *kv.Bolt) *pairWriter {
	w := &pairWriter{db: db}
	w.advanced = sync.NewCond(&w.mu)
	return w
}

func (w *pairWriter) run(t *testing.T, stop <-chan struct{}) {
	ctx := context.Background()
	fill := bytes.Repeat([]byte("x"), fillBytes)
	for n := 1; ; n++ {
		select {
		case <-stop:
			return
		default:
		}
		v := []byte(strconv.Itoa(n))
		err := w.db.Update(ctx, func(tx kv.Tx) error {
			if err := tx.Put("pair/a", v, 0); err != nil {
				return err
			}
			if err := tx.Put(fmt.Sprintf("fill/%08d", n), fill, 0); err != nil {
				return err
			}
			return tx.Put("pair/b", v, 0)
		})
		if err != nil {
			t.Error(err)
			return
		}
		w.mu.Lock()
		w.n = n
		w.advanced.Broadcast()
		w.mu.Unlock()
	}
}

func (w *pairWriter) committed() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.n
}

// waitPast blocks until more than n transactions are committed.
func (w *pairWriter) waitPast(n int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for w.n <= n {
		w.advanced.Wait()
	}
}

// stallingWriter writes to a file, and at its first write waits until the
// pair writer has committed `more` transactions past what it had then:
// proof that writes (which grow the file) go on while a snapshot holds
// its read transaction, and a snapshot that cannot contain them.
type stallingWriter struct {
	f       *os.File
	pw      *pairWriter
	more    int
	stalled bool
	before  int
}

func (s *stallingWriter) Write(p []byte) (int, error) {
	if !s.stalled {
		s.stalled = true
		s.before = s.pw.committed()
		done := make(chan struct{})
		go func() { s.pw.waitPast(s.before + s.more); close(done) }()
		select {
		case <-done:
		case <-time.After(hangGuard):
			return 0, errors.New("the writes did not go on during the snapshot")
		}
	}
	return s.f.Write(p)
}

// TestSnapshotConsistentUnderWrites takes snapshots while a writer commits
// without pause, each snapshot stalled until the writer has gone further:
// every snapshot opens as a store and holds whole transactions only (the
// pair equal, exactly n fill records), none of those made after it began.
func TestSnapshotConsistentUnderWrites(t *testing.T) {
	dir := t.TempDir()
	db, err := kv.OpenBolt(filepath.Join(dir, "svc.db"), kv.BoltOptions{NoSync: true, Unbatched: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	pw := newPairWriter(db)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); pw.run(t, stop) }()
	defer func() { close(stop); wg.Wait() }()

	ctx := context.Background()
	last := 0
	for i := range 8 {
		pw.waitPast(last)
		out := filepath.Join(dir, fmt.Sprintf("snap-%d.db", i))
		f, err := os.Create(out)
		if err != nil {
			t.Fatal(err)
		}
		// 64 transactions of 16 KiB: past the next doubling of the map.
		sw := &stallingWriter{f: f, pw: pw, more: 64}
		started := pw.committed()
		info, err := db.Snapshot(ctx, sw)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			t.Fatal(err)
		}
		st, err := os.Stat(out)
		if err != nil {
			t.Fatal(err)
		}
		if info.Size != st.Size() || info.FileName != "svc.db" || info.Transaction == 0 {
			t.Fatalf("snapshot %d: info %+v, file of %d bytes", i, info, st.Size())
		}
		if err := kv.CheckBoltFile(out); err != nil {
			t.Fatalf("snapshot %d: %v", i, err)
		}
		n := readPair(t, out)
		// Every write done before it began is in it; none of the 64 made
		// while it was held up is (the writer's count may lag its
		// commits by one).
		if n < started || n > sw.before+1 {
			t.Fatalf("snapshot %d holds transaction %d of the writer, want %d to %d", i, n, started, sw.before+1)
		}
		if n <= last && i > 0 {
			t.Fatalf("snapshot %d holds %d, an earlier one %d", i, n, last)
		}
		last = n
	}
}

// readPair opens a snapshot as a store and returns its n, failing unless
// the pair is equal and there are exactly n fill records.
func readPair(t *testing.T, path string) int {
	t.Helper()
	s, err := kv.OpenBolt(path, kv.BoltOptions{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	get := func(k string) int {
		v, err := s.Get(ctx, k)
		if errors.Is(err, kv.ErrNotFound) {
			return 0
		}
		if err != nil {
			t.Fatal(err)
		}
		n, err := strconv.Atoi(string(v))
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	a, b := get("pair/a"), get("pair/b")
	fills, err := s.Scan(ctx, "fill/", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	if a != b || len(fills) != a {
		t.Fatalf("%s: pair a=%d b=%d with %d fill records: a torn transaction", path, a, b, len(fills))
	}
	return a
}

// A snapshot whose caller has gone ends, and ends its read transaction:
// the store closes afterwards (bbolt's Close waits for every reader).
func TestSnapshotStopsWithContext(t *testing.T) {
	db, err := kv.OpenBolt(filepath.Join(t.TempDir(), "svc.db"), kv.BoltOptions{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := db.Snapshot(ctx, io.Discard); !errors.Is(err, context.Canceled) {
		t.Fatalf("snapshot with an ended context: %v, want context.Canceled", err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestCheckBoltFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := snapshotOf(t, dir, "good")
	goodBytes, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	// A bbolt file without the store's buckets.
	foreign := filepath.Join(dir, "foreign.db")
	raw, err := bolt.Open(foreign, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := raw.Close(); err != nil {
		t.Fatal(err)
	}
	live := filepath.Join(dir, "live.db")
	running, err := kv.OpenBolt(live, kv.BoltOptions{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer running.Close()

	for _, tc := range []struct {
		name    string
		path    string
		ok      bool
		inUse   bool
		wantErr string
	}{
		{"a snapshot", good, true, false, ""},
		{"missing", filepath.Join(dir, "none.db"), false, false, "no such file"},
		{"empty", write("empty.db", nil), false, false, "not a store file"},
		{"text", write("text.db", bytes.Repeat([]byte("not a database\n"), 1000)), false, false, "not a store file"},
		{"cut short", write("short.db", goodBytes[:len(goodBytes)/2]), false, false, "cut short"},
		{"bbolt without the store's buckets", foreign, false, false, "not a FRIS store"},
		{"held by a running store", live, false, true, "in use"},
		{"a directory", dir, false, false, "not a store file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := kv.CheckBoltFile(tc.path)
			if tc.ok {
				if err != nil {
					t.Fatal(err)
				}
			} else if err == nil || !bytes.Contains([]byte(err.Error()), []byte(tc.wantErr)) {
				t.Fatalf("CheckBoltFile = %v, want an error with %q", err, tc.wantErr)
			}
			if got := errors.Is(err, kv.ErrBoltInUse); got != tc.inUse {
				t.Fatalf("ErrBoltInUse = %v, want %v (%v)", got, tc.inUse, err)
			}
			inUse, err := kv.BoltInUse(tc.path)
			if err != nil || inUse != tc.inUse {
				t.Fatalf("BoltInUse = %v, %v; want %v", inUse, err, tc.inUse)
			}
		})
	}
}

// snapshotOf writes a store with a record and returns a snapshot of it.
func snapshotOf(t *testing.T, dir, name string) string {
	t.Helper()
	db, err := kv.OpenBolt(filepath.Join(dir, name+"-src.db"), kv.BoltOptions{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Update(context.Background(), func(tx kv.Tx) error { return tx.Put("k", bytes.Repeat([]byte("v"), 64<<10), 0) }); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, name+".db")
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := db.Snapshot(context.Background(), f); err != nil {
		t.Fatal(err)
	}
	return out
}
