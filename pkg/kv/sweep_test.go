package kv

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	bolt "go.etcd.io/bbolt"

	"fris.dev/pkg/testredis"
)

// The sweepers remove expired keys for good, not only from view.

func TestBoltSweepRemovesExpiredRecords(t *testing.T) {
	ctx := context.Background()
	b, err := OpenBolt(filepath.Join(t.TempDir(), "kv.db"), BoltOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := b.Update(ctx, func(tx Tx) error {
		if err := tx.Put("gone", []byte("x"), 10*time.Millisecond); err != nil {
			return err
		}
		return tx.Put("kept", []byte("y"), time.Hour)
	}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(30 * time.Millisecond)
	n, err := b.sweep()
	if err != nil || n != 1 {
		t.Fatalf("sweep = %d, %v", n, err)
	}
	_ = b.db.View(func(tx *bolt.Tx) error {
		if tx.Bucket(bucketData).Get([]byte("gone")) != nil {
			t.Error("expired record still in the file")
		}
		if tx.Bucket(bucketExpires).Stats().KeyN != 1 {
			t.Errorf("expiry index has %d entries, want 1 (the kept key)", tx.Bucket(bucketExpires).Stats().KeyN)
		}
		return nil
	})
}

func TestRedisSweepDropsIndexEntries(t *testing.T) {
	t.Run("Redis", func(t *testing.T) { testSweepDropsIndexEntries(t, testredis.Client(t)) })
	t.Run("Cluster", func(t *testing.T) { testSweepDropsIndexEntries(t, testredis.ClusterClient(t)) })
}

func testSweepDropsIndexEntries(t *testing.T, c redis.UniversalClient) {
	ctx := context.Background()
	r := NewRedis(c, RedisOptions{Prefix: testredis.Prefix(t)})
	defer r.Close()
	if err := r.Update(ctx, func(tx Tx) error {
		if err := tx.Put("gone", []byte("x"), 10*time.Millisecond); err != nil {
			return err
		}
		return tx.Put("kept", []byte("y"), 0)
	}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	if err := r.sweep(ctx); err != nil {
		t.Fatal(err)
	}
	members, _ := c.ZRange(ctx, r.index, 0, -1).Result()
	if len(members) != 1 || members[0] != "kept" {
		t.Fatalf("index after sweep = %v", members)
	}
	if n, _ := c.ZCard(ctx, r.expires).Result(); n != 0 {
		t.Fatalf("expiry set has %d entries", n)
	}
}
