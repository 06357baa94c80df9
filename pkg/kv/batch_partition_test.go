package kv_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"fris.dev/pkg/kv"
	"fris.dev/pkg/testredis"
)

// Writes of different partitions share one commit where the backend lets a
// transaction span partitions (bbolt, a single Redis): uploads of new
// patients land in different partitions and would otherwise each pay a
// commit. A Redis Cluster needs one transaction per partition (its slot).
// Each write is still held to one partition.
func TestGroupCommitAcrossPartitions(t *testing.T) {
	parts := kv.Segments{"p/": 1}
	t.Run("Bolt", func(t *testing.T) {
		db, err := kv.OpenBolt(filepath.Join(t.TempDir(), "g.db"), kv.BoltOptions{BatchDelay: 50 * time.Millisecond, NoSync: true, Partitions: parts})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = db.Close() })
		before := db.Commits()
		writeAcross(t, db)
		if n := db.Commits() - before; n != 1 {
			t.Fatalf("%d commits for 8 writes of 8 partitions in one batch, want 1", n)
		}
	})
	for _, rc := range redisClients {
		t.Run(rc.name, func(t *testing.T) {
			c := rc.client(t)
			hook := &execCounter{}
			addHook(t, c, hook)
			db := kv.NewRedis(c, kv.RedisOptions{Prefix: testredis.Prefix(t), BatchDelay: 50 * time.Millisecond, Partitions: parts})
			t.Cleanup(func() { _ = db.Close() })
			before := hook.count()
			writeAcross(t, db)
			n := hook.count() - before
			if rc.name == "Cluster" {
				if n < 8 {
					t.Fatalf("%d commits on a Cluster for writes of 8 partitions, want one per partition", n)
				}
				// Not even a lone write waits for company there.
				slow := kv.NewRedis(c, kv.RedisOptions{Prefix: testredis.Prefix(t), BatchDelay: longDelay, Partitions: parts})
				t.Cleanup(func() { _ = slow.Close() })
				start := time.Now()
				if err := slow.Update(context.Background(), putKey("p/x/k")); err != nil {
					t.Fatal(err)
				}
				if d := time.Since(start); d > longDelay/2 {
					t.Fatalf("a write on a Cluster with a %v batch delay took %v: it waited for a batch", longDelay, d)
				}
				return
			}
			if n != 1 {
				t.Fatalf("%d commits for 8 writes of 8 partitions in one batch, want 1", n)
			}
		})
	}
}

// writeAcross makes 8 concurrent writes, each of its own partition, within
// one batch delay, plus one that touches two partitions and must fail
// alone; then reads every good write back.
func writeAcross(t *testing.T, db kv.Store) {
	t.Helper()
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range 8 {
		wg.Go(func() {
			errs[i] = db.Update(ctx, func(tx kv.Tx) error {
				return tx.Put(fmt.Sprintf("p/%d/k", i), []byte("v"), 0)
			})
		})
	}
	var cross error
	wg.Go(func() {
		cross = db.Update(ctx, func(tx kv.Tx) error {
			if err := tx.Put("p/a/k", []byte("v"), 0); err != nil {
				return err
			}
			return tx.Put("p/b/k", []byte("v"), 0)
		})
	})
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
		if _, err := db.Get(ctx, fmt.Sprintf("p/%d/k", i)); err != nil {
			t.Fatalf("write %d not stored: %v", i, err)
		}
	}
	if !errors.Is(cross, kv.ErrCrossPartition) {
		t.Fatalf("a write across two partitions: %v, want ErrCrossPartition", cross)
	}
	if _, err := db.Get(ctx, "p/a/k"); !errors.Is(err, kv.ErrNotFound) {
		t.Fatalf("the refused write left its first key: %v", err)
	}
}
