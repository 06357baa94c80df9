package kv_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"testing"
	"time"

	"fris.dev/pkg/kv"
	"fris.dev/pkg/kv/kvtest"
	"fris.dev/pkg/testredis"
)

func TestConformance(t *testing.T) {
	kvtest.Backends(t, func(t *testing.T, open func(t *testing.T) kv.Store) { kvtest.Run(t, open) })
}

func TestPartitions(t *testing.T) {
	kvtest.BackendsWith(t, kvtest.PartitionKeys, func(t *testing.T, open func(t *testing.T) kv.Store) {
		kvtest.RunPartitions(t, open)
		// The whole suite holds for a partitioned store too.
		kvtest.Run(t, open)
	})
}

func TestSegments(t *testing.T) {
	s := kv.Segments{"doc/": 2, "one/": 1}
	for _, c := range []struct {
		in        string
		key       string
		prefix    string
		prefixSet bool
	}{
		{"doc/a/b/x", "a/b", "a/b", true},
		{"doc/a/b/", "a/b", "a/b", true},
		{"doc/a/b", "", "", false},
		{"doc/a/", "", "", false},
		{"doc/", "", "", false},
		{"doc", "", "", false},
		{"", "", "", false},
		{"one/x/y", "x", "x", true},
		{"cred/u", "", "", true},
		{"cred/", "", "", true},
		{"plain", "", "", false},
	} {
		if got := s.Key(c.in); got != c.key {
			t.Errorf("Key(%q) = %q, want %q", c.in, got, c.key)
		}
		want := []string(nil)
		if c.prefixSet {
			want = []string{c.prefix}
		}
		if got := s.Prefix(c.in); !reflect.DeepEqual(got, want) {
			t.Errorf("Prefix(%q) = %q, want %q", c.in, got, want)
		}
	}
	if got := (kv.Segments{}).Prefix(""); !reflect.DeepEqual(got, []string{""}) {
		t.Errorf("no segments: Prefix = %q", got)
	}
}

func TestBoltSurvivesReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kv.db")
	ctx := context.Background()
	s, err := kv.OpenBolt(path, kv.BoltOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Update(ctx, func(tx kv.Tx) error { return tx.Put("k", []byte("v"), 0) }); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = kv.OpenBolt(path, kv.BoltOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if v, err := s.Get(ctx, "k"); err != nil || string(v) != "v" {
		t.Fatalf("after reopen: %q %v", v, err)
	}
}

func TestParseRedisURL(t *testing.T) {
	for _, tc := range []struct {
		url     string
		addrs   int
		cluster bool
		master  string
		bad     bool
	}{
		{url: "redis://127.0.0.1:6379/0", addrs: 1},
		{url: "rediss://user:pw@example:6380/2", addrs: 1},
		{url: "redis://h1:7000,h2:7001,h3:7002", addrs: 3, cluster: true},
		{url: "redis://s1:26379/0?master_name=mymaster", addrs: 1, master: "mymaster"},
		{url: "http://x", bad: true},
		{url: "127.0.0.1:6379", bad: true},
	} {
		o, err := kv.ParseRedisURL(tc.url)
		if tc.bad {
			if err == nil {
				t.Errorf("%s: no error", tc.url)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.url, err)
			continue
		}
		if len(o.Addrs) != tc.addrs || o.IsClusterMode != tc.cluster || o.MasterName != tc.master {
			t.Errorf("%s: got %+v", tc.url, o)
		}
	}
}

func TestOpenVolatile(t *testing.T) {
	ctx := context.Background()
	put := func(t *testing.T, s kv.Store, k string) {
		t.Helper()
		if err := s.Update(ctx, func(tx kv.Tx) error { return tx.Put(k, []byte("v"), 0) }); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("BoltFileOfItsOwnRecreatedAtStart", func(t *testing.T) {
		cfg := kv.Config{Backend: "bolt", DataDir: t.TempDir()}
		main, err := kv.Open(ctx, cfg, "svc", nil)
		if err != nil {
			t.Fatal(err)
		}
		defer main.Close()
		v, err := kv.OpenVolatile(cfg, "svc", main, nil)
		if err != nil {
			t.Fatal(err)
		}
		put(t, v, "code")
		if _, err := main.Get(ctx, "code"); !errors.Is(err, kv.ErrNotFound) {
			t.Fatalf("volatile record visible in the main store: %v", err)
		}
		if got, err := v.Get(ctx, "code"); err != nil || string(got) != "v" {
			t.Fatalf("Get = %q, %v", got, err)
		}
		if err := v.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(filepath.Join(cfg.DataDir, "svc-volatile.db")); err != nil {
			t.Fatalf("volatile file: %v", err)
		}
		v, err = kv.OpenVolatile(cfg, "svc", main, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer v.Close()
		if _, err := v.Get(ctx, "code"); !errors.Is(err, kv.ErrNotFound) {
			t.Fatalf("volatile record survived a restart: %v", err)
		}
	})

	t.Run("RedisSharesTheMainStore", func(t *testing.T) {
		main := kv.NewRedis(testredis.Client(t), kv.RedisOptions{Prefix: testredis.Prefix(t)})
		defer main.Close()
		v, err := kv.OpenVolatile(kv.Config{Backend: "redis"}, "svc", main, nil)
		if err != nil {
			t.Fatal(err)
		}
		put(t, v, "code")
		if err := v.Close(); err != nil {
			t.Fatal(err)
		}
		// Closing the volatile view leaves the main store usable.
		if got, err := main.Get(ctx, "code"); err != nil || string(got) != "v" {
			t.Fatalf("main.Get = %q, %v", got, err)
		}
	})
}

// The volatile store's configuration: no fsync, one commit per write.
func TestConformanceBoltVolatile(t *testing.T) {
	kvtest.Run(t, func(t *testing.T) kv.Store {
		db, err := kv.OpenBolt(filepath.Join(t.TempDir(), "v.db"), kv.BoltOptions{NoSync: true, Unbatched: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = db.Close() })
		return db
	})
}

func TestBoltUnbatchedCommitsEachWrite(t *testing.T) {
	db, err := kv.OpenBolt(t.TempDir()+"/u.db", kv.BoltOptions{BatchDelay: longDelay, NoSync: true, Unbatched: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	before := db.Commits()
	start := time.Now()
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			if err := db.Update(ctx, func(tx kv.Tx) error { return tx.Put(fmt.Sprintf("k%d", i), []byte("v"), 0) }); err != nil {
				t.Error(err)
			}
		}(i)
	}
	wg.Wait()
	// No write waited for the window (half of it: room for a busy
	// machine), and none shared a commit.
	if n, took := db.Commits()-before, time.Since(start); n != 8 || took >= longDelay/2 {
		t.Fatalf("8 concurrent writes took %d commits in %v, want 8 without the batch delay", n, took)
	}
}

func TestBoltCommitsCountsSharedCommits(t *testing.T) {
	db, err := kv.OpenBolt(t.TempDir()+"/c.db", kv.BoltOptions{BatchDelay: 20 * time.Millisecond, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	before := db.Commits()
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			if err := db.Update(ctx, func(tx kv.Tx) error { return tx.Put(fmt.Sprintf("k%d", i), []byte("v"), 0) }); err != nil {
				t.Error(err)
			}
		}(i)
	}
	wg.Wait()
	// Eight concurrent writers within one batch delay share few commits.
	if n := db.Commits() - before; n < 1 || n > 4 {
		t.Fatalf("8 concurrent writes took %d commits", n)
	}
	if err := db.Update(ctx, func(tx kv.Tx) error { return tx.Put("one", []byte("v"), 0) }); err != nil {
		t.Fatal(err)
	}
	if n := db.Commits() - before; n < 2 {
		t.Fatalf("a further write did not count a commit: %d", n)
	}
}

// Every prefix of a key names the key's partition (or leaves the
// partitions open), so scans never miss a key.
func FuzzSegments(f *testing.F) {
	for _, k := range []string{"doc/a/b/x", "one/x", "doc/", "cred/u", "plain", ""} {
		f.Add(k)
	}
	s := kv.Segments{"doc/": 2, "one/": 1}
	f.Fuzz(func(t *testing.T, key string) {
		part := s.Key(key)
		for i := 0; i <= len(key); i++ {
			if parts := s.Prefix(key[:i]); parts != nil && !reflect.DeepEqual(parts, []string{part}) {
				t.Fatalf("Prefix(%q) = %q, want nil or [%q], the partition of %q", key[:i], parts, part, key)
			}
		}
	})
}
