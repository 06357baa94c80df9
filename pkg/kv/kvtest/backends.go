package kvtest

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"fris.dev/pkg/kv"
	"fris.dev/pkg/testredis"
)

// Backends runs fn once per production backend, as subtests "Bolt",
// "Redis" (one redis-server) and "Cluster" (a Redis Cluster), with a
// function that opens a fresh, empty store for each use. All run as kv.Open
// configures them: group commit on (1ms). The Redis runs follow testredis:
// skipped without REDIS_URL or REDIS_CLUSTER_URL, failed under CI=true.
func Backends(t *testing.T, fn func(t *testing.T, open func(t *testing.T) kv.Store)) {
	BackendsWith(t, nil, fn)
}

// BackendsWith is Backends for stores partitioned by parts.
func BackendsWith(t *testing.T, parts kv.Partitioner, fn func(t *testing.T, open func(t *testing.T) kv.Store)) {
	t.Run("Bolt", func(t *testing.T) {
		fn(t, func(t *testing.T) kv.Store {
			db, err := kv.OpenBolt(filepath.Join(t.TempDir(), "store.db"), kv.BoltOptions{Partitions: parts})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = db.Close() })
			return db
		})
	})
	for _, r := range []struct {
		name   string
		client func(testing.TB) redis.UniversalClient
	}{{"Redis", testredis.Client}, {"Cluster", testredis.ClusterClient}} {
		t.Run(r.name, func(t *testing.T) {
			c := r.client(t)
			fn(t, func(t *testing.T) kv.Store {
				db := kv.NewRedis(c, kv.RedisOptions{Prefix: testredis.Prefix(t), BatchDelay: time.Millisecond, Partitions: parts})
				t.Cleanup(func() { _ = db.Close() })
				return db
			})
		})
	}
}
