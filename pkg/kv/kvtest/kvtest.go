// Package kvtest is the conformance suite every kv backend must pass.
package kvtest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"fris.dev/pkg/kv"
)

// Run runs the suite against stores made by open. Each case gets a fresh,
// empty store and runs as a subtest of its name, so a failure names the
// contract it breaks.
func Run(t *testing.T, open func(t *testing.T) kv.Store) {
	for _, c := range []struct {
		name string
		run  func(t *testing.T, s kv.Store)
	}{
		{"GetMissing", testGetMissing},
		{"PutGetDelete", testPutGetDelete},
		{"BinaryAndEmptyValues", testBinaryAndEmptyValues},
		{"BadKeys", testBadKeys},
		{"ScanPrefixOrderAndPaging", testScanPrefixOrderAndPaging},
		{"TTL", testTTL},
		{"AbortedUpdateWritesNothing", testAbortedUpdateWritesNothing},
		{"TxSeesOwnWrites", testTxSeesOwnWrites},
		{"ConcurrentIncrementsAreAtomic", testConcurrentIncrementsAreAtomic},
		{"CreateIfAbsentRace", testCreateIfAbsentRace},
		{"CanceledContext", testCanceledContext},
		{"Ping", testPing},
	} {
		t.Run(c.name, func(t *testing.T) { c.run(t, open(t)) })
	}
}

func put(t *testing.T, s kv.Store, k, v string, ttl time.Duration) {
	t.Helper()
	if err := s.Update(context.Background(), func(tx kv.Tx) error { return tx.Put(k, []byte(v), ttl) }); err != nil {
		t.Fatalf("put %s: %v", k, err)
	}
}

func testGetMissing(t *testing.T, s kv.Store) {
	ctx := context.Background()
	if _, err := s.Get(ctx, "nope"); !errors.Is(err, kv.ErrNotFound) {
		t.Fatalf("Get missing = %v, want ErrNotFound", err)
	}
}

func testPutGetDelete(t *testing.T, s kv.Store) {
	ctx := context.Background()
	put(t, s, "a/1", "one", 0)
	got, err := s.Get(ctx, "a/1")
	if err != nil || string(got) != "one" {
		t.Fatalf("Get = %q, %v", got, err)
	}
	put(t, s, "a/1", "uno", 0)
	if got, _ := s.Get(ctx, "a/1"); string(got) != "uno" {
		t.Fatalf("overwrite: Get = %q", got)
	}
	if err := s.Update(ctx, func(tx kv.Tx) error { return tx.Delete("a/1") }); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, "a/1"); !errors.Is(err, kv.ErrNotFound) {
		t.Fatalf("after delete: %v", err)
	}
	if err := s.Update(ctx, func(tx kv.Tx) error { return tx.Delete("never") }); err != nil {
		t.Fatalf("delete absent: %v", err)
	}
}

func testBinaryAndEmptyValues(t *testing.T, s kv.Store) {
	ctx := context.Background()
	bin := string([]byte{0, 1, 2, 0xff, 0xfe, '\n'})
	put(t, s, "bin", bin, 0)
	put(t, s, "empty", "", 0)
	if got, _ := s.Get(ctx, "bin"); string(got) != bin {
		t.Fatalf("binary value changed: %x", got)
	}
	if got, err := s.Get(ctx, "empty"); err != nil || len(got) != 0 {
		t.Fatalf("empty value: %q %v", got, err)
	}
}

func testBadKeys(t *testing.T, s kv.Store) {
	ctx := context.Background()
	long := string(make([]byte, kv.MaxKeyLen+1))
	for _, k := range []string{"", long} {
		if err := s.Update(ctx, func(tx kv.Tx) error { return tx.Put(k, nil, 0) }); err == nil {
			t.Fatalf("Put with key of %d bytes succeeded", len(k))
		}
		// Ids from outside reach Get unchecked: a key nothing can be
		// stored under is absent, not an error.
		if _, err := s.Get(ctx, k); !errors.Is(err, kv.ErrNotFound) {
			t.Fatalf("Get with key of %d bytes = %v, want ErrNotFound", len(k), err)
		}
		err := s.Update(ctx, func(tx kv.Tx) error {
			if _, err := tx.Get(ctx, k); !errors.Is(err, kv.ErrNotFound) {
				return fmt.Errorf("tx.Get = %v, want ErrNotFound", err)
			}
			return tx.Delete(k)
		})
		if err != nil {
			t.Fatalf("key of %d bytes in a transaction: %v", len(k), err)
		}
	}
}

func testScanPrefixOrderAndPaging(t *testing.T, s kv.Store) {
	ctx := context.Background()
	for _, k := range []string{"p/b", "p/a", "p/c", "q/a", "p", "o/z", "p/ä"} {
		put(t, s, k, "v"+k, 0)
	}
	got, err := s.Scan(ctx, "p/", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"p/a", "p/b", "p/c", "p/ä"}
	if keys(got) != fmt.Sprint(want) {
		t.Fatalf("Scan p/ = %v, want %v", keys(got), want)
	}
	if string(got[0].Value) != "vp/a" {
		t.Fatalf("value = %q", got[0].Value)
	}
	page, _ := s.Scan(ctx, "p/", "", 2)
	if keys(page) != "[p/a p/b]" {
		t.Fatalf("page 1 = %v", keys(page))
	}
	page, _ = s.Scan(ctx, "p/", "p/b", 2)
	if keys(page) != "[p/c p/ä]" {
		t.Fatalf("page 2 = %v", keys(page))
	}
	page, _ = s.Scan(ctx, "p/", "p/ä", 2)
	if len(page) != 0 {
		t.Fatalf("page 3 = %v", keys(page))
	}
	all, _ := s.Scan(ctx, "", "", 0)
	if len(all) != 7 {
		t.Fatalf("scan all = %v", keys(all))
	}
}

func testTTL(t *testing.T, s kv.Store) {
	ctx := context.Background()
	put(t, s, "t/long", "y", time.Hour)
	put(t, s, "t/none", "z", 0)
	const short = 200 * time.Millisecond
	start := time.Now()
	put(t, s, "t/short", "x", short)
	// A loaded machine may take longer than the TTL to get here; the key
	// must be readable only while it is certainly fresh.
	if _, err := s.Get(ctx, "t/short"); err != nil && time.Since(start) < short {
		t.Fatalf("fresh TTL key: %v", err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, err := s.Get(ctx, "t/short")
		if errors.Is(err, kv.ErrNotFound) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("TTL key never expired")
		}
		time.Sleep(20 * time.Millisecond)
	}
	got, _ := s.Scan(ctx, "t/", "", 0)
	if keys(got) != "[t/long t/none]" {
		t.Fatalf("scan after expiry = %v", keys(got))
	}
	// Re-putting without TTL makes a key permanent.
	put(t, s, "t/long", "y2", 0)
	if v, _ := s.Get(ctx, "t/long"); string(v) != "y2" {
		t.Fatalf("re-put = %q", v)
	}
}

func testAbortedUpdateWritesNothing(t *testing.T, s kv.Store) {
	ctx := context.Background()
	boom := errors.New("boom")
	err := s.Update(ctx, func(tx kv.Tx) error {
		if err := tx.Put("x/1", []byte("1"), 0); err != nil {
			return err
		}
		if err := tx.Put("x/2", []byte("2"), 0); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Update = %v, want boom", err)
	}
	if got, _ := s.Scan(ctx, "x/", "", 0); len(got) != 0 {
		t.Fatalf("aborted update left %v", keys(got))
	}
}

func testTxSeesOwnWrites(t *testing.T, s kv.Store) {
	ctx := context.Background()
	put(t, s, "w/keep", "k", 0)
	put(t, s, "w/gone", "g", 0)
	err := s.Update(ctx, func(tx kv.Tx) error {
		_ = tx.Put("w/new", []byte("n"), 0)
		_ = tx.Delete("w/gone")
		if v, err := tx.Get(ctx, "w/new"); err != nil || string(v) != "n" {
			return fmt.Errorf("own put invisible: %q %v", v, err)
		}
		if _, err := tx.Get(ctx, "w/gone"); !errors.Is(err, kv.ErrNotFound) {
			return fmt.Errorf("own delete invisible: %v", err)
		}
		got, err := tx.Scan(ctx, "w/", "", 0)
		if err != nil {
			return err
		}
		if keys(got) != "[w/keep w/new]" {
			return fmt.Errorf("tx scan = %v", keys(got))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func testConcurrentIncrementsAreAtomic(t *testing.T, s kv.Store) {
	ctx := context.Background()
	const workers, each = 8, 25
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				err := s.Update(ctx, func(tx kv.Tx) error {
					n := 0
					if v, err := tx.Get(ctx, "counter"); err == nil {
						n = atoi(string(v))
					} else if !errors.Is(err, kv.ErrNotFound) {
						return err
					}
					return tx.Put("counter", []byte(fmt.Sprint(n+1)), 0)
				})
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	v, _ := s.Get(ctx, "counter")
	if string(v) != fmt.Sprint(workers*each) {
		t.Fatalf("counter = %s, want %d (lost updates)", v, workers*each)
	}
}

func testCreateIfAbsentRace(t *testing.T, s kv.Store) {
	ctx := context.Background()
	// Exactly one of many concurrent "create unless exists" calls wins.
	const n = 10
	var wg sync.WaitGroup
	wins := make(chan int, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			err := s.Update(ctx, func(tx kv.Tx) error {
				if _, err := tx.Get(ctx, "unique"); err == nil {
					return kv.ErrExists
				}
				return tx.Put("unique", []byte(fmt.Sprint(i)), 0)
			})
			if err == nil {
				wins <- i
			} else if !errors.Is(err, kv.ErrExists) {
				t.Error(err)
			}
		}(i)
	}
	wg.Wait()
	close(wins)
	if len(wins) != 1 {
		t.Fatalf("%d creators won, want 1", len(wins))
	}
}

func testCanceledContext(t *testing.T, s kv.Store) {
	ctx := context.Background()
	c, cancel := context.WithCancel(ctx)
	cancel()
	if err := s.Update(c, func(tx kv.Tx) error { return tx.Put("c", nil, 0) }); err == nil {
		t.Fatal("Update with canceled context succeeded")
	}
}

func testPing(t *testing.T, s kv.Store) {
	ctx := context.Background()
	if err := s.Ping(ctx); err != nil {
		t.Fatal(err)
	}
}

func keys(es []kv.Entry) string {
	ks := make([]string, len(es))
	for i, e := range es {
		ks[i] = e.Key
	}
	return fmt.Sprint(ks)
}

func atoi(s string) int {
	n := 0
	for _, c := range s {
		n = n*10 + int(c-'0')
	}
	return n
}
