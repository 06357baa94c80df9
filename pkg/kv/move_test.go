package kv_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"fris.dev/pkg/kv"
	"fris.dev/pkg/kv/kvtest"
	"fris.dev/pkg/testredis"
)

// A store written without partitions (every key under one hash tag, as
// before partitions existed) opened with them: MoveToPartitions moves the
// keys to their partitions, with their TTLs, and leaves the base
// partition's own keys; a second run finds nothing to move.
func TestRedisMoveToPartitions(t *testing.T) {
	for _, rc := range []struct {
		name   string
		client func(testing.TB) redis.UniversalClient
		url    func(testing.TB) string
	}{{"Redis", testredis.Client, testredis.URL}, {"Cluster", testredis.ClusterClient, testredis.ClusterURL}} {
		t.Run(rc.name, func(t *testing.T) {
			ctx := context.Background()
			c := rc.client(t)
			prefix := testredis.Prefix(t)
			old := kv.NewRedis(c, kv.RedisOptions{Prefix: prefix})
			defer old.Close()
			keys := []string{"base/1", "p/a/1", "p/a/2", "p/b/1", "q"}
			for _, k := range keys {
				if err := old.Update(ctx, func(tx kv.Tx) error { return tx.Put(k, []byte("v"+k), 0) }); err != nil {
					t.Fatal(err)
				}
			}
			if err := old.Update(ctx, func(tx kv.Tx) error { return tx.Put("p/c/ttl", []byte("vp/c/ttl"), time.Hour) }); err != nil {
				t.Fatal(err)
			}
			keys = append(keys, "p/c/ttl")

			s := kv.NewRedis(c, kv.RedisOptions{Prefix: prefix, Partitions: kvtest.PartitionKeys})
			defer s.Close()
			// Before the move the partitions are empty.
			if _, err := s.Get(ctx, "p/a/1"); err == nil {
				t.Fatal("p/a/1 found in its partition before the move")
			}
			// kv.Open moves them, as a service does at start.
			opened, err := kv.Open(ctx, kv.Config{Backend: "redis", RedisURL: rc.url(t), RedisPrefix: prefix, Partitions: kvtest.PartitionKeys}, "svc", nil)
			if err != nil {
				t.Fatal(err)
			}
			defer opened.Close()
			for _, k := range keys {
				if v, err := s.Get(ctx, k); err != nil || string(v) != "v"+k {
					t.Fatalf("Get %s after the move = %q, %v", k, v, err)
				}
			}
			es, err := s.Scan(ctx, "", "", 0)
			if err != nil || len(es) != len(keys) {
				t.Fatalf("Scan after the move = %v, %v", es, err)
			}
			// Moved out of the base partition, the old view has only its own.
			if es, _ := old.Scan(ctx, "", "", 0); len(es) != 2 {
				t.Fatalf("base partition after the move = %v", es)
			}
			if n, err := s.MoveToPartitions(ctx); err != nil || n != 0 {
				t.Fatalf("MoveToPartitions after kv.Open = %d, %v", n, err)
			}
			if err := old.Update(ctx, func(tx kv.Tx) error { return tx.Put("p/d/late", []byte("vp/d/late"), 0) }); err != nil {
				t.Fatal(err)
			}
			keys = append(keys, "p/d/late")
			if n, err := s.MoveToPartitions(ctx); err != nil || n != 1 {
				t.Fatalf("MoveToPartitions of a late key = %d, %v", n, err)
			}
			if v, err := opened.Get(ctx, "p/d/late"); err != nil || string(v) != "vp/d/late" {
				t.Fatalf("Get p/d/late = %q, %v", v, err)
			}
			if n, err := s.MoveToPartitions(ctx); err != nil || n != 0 {
				t.Fatalf("second MoveToPartitions = %d, %v", n, err)
			}
			// The TTL came along: the key still expires.
			if ttl, err := c.PTTL(ctx, "{"+prefix+":c}:d:p/c/ttl").Result(); err != nil || ttl <= 0 || ttl > time.Hour {
				t.Fatalf("PTTL of the moved key = %v, %v", ttl, err)
			}
		})
	}
}
