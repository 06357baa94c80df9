package kvtest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"fris.dev/pkg/kv"
)

// PartitionKeys is the Partitioner RunPartitions expects its stores to
// have: p/<partition>/<rest>, every other key in the base partition.
var PartitionKeys = kv.Segments{"p/": 1}

// RunPartitions runs the partition cases against stores made by open,
// which must partition with PartitionKeys.
func RunPartitions(t *testing.T, open func(t *testing.T) kv.Store) {
	for _, c := range []struct {
		name string
		run  func(t *testing.T, s kv.Store)
	}{
		{"OneTransactionOnePartition", testOneTxOnePartition},
		{"ScanAcrossPartitions", testScanAcrossPartitions},
		{"ConcurrentWritesToManyPartitions", testConcurrentPartitions},
	} {
		t.Run(c.name, func(t *testing.T) { c.run(t, open(t)) })
	}
}

func testOneTxOnePartition(t *testing.T, s kv.Store) {
	ctx := context.Background()
	put(t, s, "p/a/seed", "1", 0)
	for name, fn := range map[string]func(tx kv.Tx) error{
		"two partitions": func(tx kv.Tx) error {
			if err := tx.Put("p/a/1", []byte("x"), 0); err != nil {
				return err
			}
			return tx.Put("p/b/1", []byte("x"), 0)
		},
		"a partition and the base": func(tx kv.Tx) error {
			if err := tx.Put("p/a/1", []byte("x"), 0); err != nil {
				return err
			}
			return tx.Put("meta", []byte("x"), 0)
		},
		"read one, write another": func(tx kv.Tx) error {
			if _, err := tx.Get(ctx, "p/a/seed"); err != nil {
				return err
			}
			return tx.Delete("p/b/1")
		},
		"scan of several partitions": func(tx kv.Tx) error {
			_, err := tx.Scan(ctx, "p/", "", 0)
			return err
		},
		"scan of all": func(tx kv.Tx) error {
			_, err := tx.Scan(ctx, "", "", 0)
			return err
		},
		"scan of one, write another": func(tx kv.Tx) error {
			if _, err := tx.Scan(ctx, "p/a/", "", 0); err != nil {
				return err
			}
			return tx.Put("p/b/1", []byte("x"), 0)
		},
	} {
		if err := s.Update(ctx, fn); !errors.Is(err, kv.ErrCrossPartition) {
			t.Errorf("%s: Update = %v, want ErrCrossPartition", name, err)
		}
	}
	if es, err := s.Scan(ctx, "", "", 0); err != nil || len(es) != 1 {
		t.Fatalf("refused transactions wrote: %v, %v", es, err)
	}
	// Within one partition anything goes, including a scan of it; keys
	// a write could not make touch no partition.
	if err := s.Update(ctx, func(tx kv.Tx) error {
		if _, err := tx.Get(ctx, ""); !errors.Is(err, kv.ErrNotFound) {
			return fmt.Errorf("empty key: %v", err)
		}
		es, err := tx.Scan(ctx, "p/a/", "", 0)
		if err != nil {
			return err
		}
		if err := tx.Put("p/a/n", []byte(fmt.Sprint(len(es))), 0); err != nil {
			return err
		}
		return tx.Delete("p/a/seed")
	}); err != nil {
		t.Fatal(err)
	}
	if v, err := s.Get(ctx, "p/a/n"); err != nil || string(v) != "1" {
		t.Fatalf("Get p/a/n = %q, %v", v, err)
	}
}

func testScanAcrossPartitions(t *testing.T, s kv.Store) {
	ctx := context.Background()
	var want []string
	for _, part := range []string{"a", "b", "c", "d", "e"} {
		for i := range 4 {
			k := fmt.Sprintf("p/%s/%d", part, i)
			put(t, s, k, "v"+k, 0)
			want = append(want, k)
		}
	}
	for _, k := range []string{"base/1", "base/2", "q"} {
		put(t, s, k, "v"+k, 0)
	}
	check := func(what string, es []kv.Entry, want []string) {
		t.Helper()
		if got := keys(es); got != fmt.Sprint(want) {
			t.Fatalf("%s = %v, want %v", what, got, want)
		}
		for _, e := range es {
			if string(e.Value) != "v"+e.Key {
				t.Fatalf("%s: %s = %q", what, e.Key, e.Value)
			}
		}
	}
	es, err := s.Scan(ctx, "p/", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	check("Scan p/", es, want)
	// Paged, each page a fan-out from the last key of the one before.
	var paged []kv.Entry
	after := ""
	for {
		page, err := s.Scan(ctx, "p/", after, 3)
		if err != nil {
			t.Fatal(err)
		}
		if len(page) == 0 {
			break
		}
		if len(page) > 3 {
			t.Fatalf("page of %d, limit 3", len(page))
		}
		paged = append(paged, page...)
		after = page[len(page)-1].Key
	}
	check("paged Scan p/", paged, want)
	es, err = s.Scan(ctx, "", "p/b/3", 3)
	if err != nil {
		t.Fatal(err)
	}
	check("Scan after p/b/3", es, []string{"p/c/0", "p/c/1", "p/c/2"})
	es, err = s.Scan(ctx, "", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	check("Scan all", es, append(append([]string{"base/1", "base/2"}, want...), "q"))
	es, err = s.Scan(ctx, "p/c/", "p/c/1", 0)
	if err != nil {
		t.Fatal(err)
	}
	check("Scan p/c/", es, []string{"p/c/2", "p/c/3"})
	// A deleted key leaves every listing.
	if err := s.Update(ctx, func(tx kv.Tx) error { return tx.Delete("p/d/2") }); err != nil {
		t.Fatal(err)
	}
	es, err = s.Scan(ctx, "p/d", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	check("Scan p/d after a delete", es, []string{"p/d/0", "p/d/1", "p/d/3"})
}

// Concurrent writers of different partitions share group commits on both
// backends; none of them may be lost or refused for its neighbours.
func testConcurrentPartitions(t *testing.T, s kv.Store) {
	ctx := context.Background()
	const parts, each = 6, 15
	var wg sync.WaitGroup
	errs := make(chan error, parts*2)
	for w := range parts * 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			key := fmt.Sprintf("p/%d/counter", w%parts)
			for range each {
				err := s.Update(ctx, func(tx kv.Tx) error {
					n := 0
					if v, err := tx.Get(ctx, key); err == nil {
						n = atoi(string(v))
					} else if !errors.Is(err, kv.ErrNotFound) {
						return err
					}
					return tx.Put(key, []byte(fmt.Sprint(n+1)), 0)
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
	for p := range parts {
		v, _ := s.Get(ctx, fmt.Sprintf("p/%d/counter", p))
		if string(v) != fmt.Sprint(2*each) {
			t.Fatalf("partition %d counter = %s, want %d", p, v, 2*each)
		}
	}
}
