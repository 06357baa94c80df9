package kvtest

import (
	"path/filepath"
	"testing"
	"time"

	"fris.dev/pkg/kv"
	"fris.dev/pkg/testredis"
)

// Backends runs fn once per production backend, as subtests "Bolt" and
// "Redis", with a function that opens a fresh, empty store for each use.
// Both run as kv.Open configures them: group commit on (1ms).
// The Redis run follows testredis: skipped without REDIS_URL, failed under
// CI=true.
func Backends(t *testing.T, fn func(t *testing.T, open func(t *testing.T) kv.Store)) {
	t.Run("Bolt", func(t *testing.T) {
		fn(t, func(t *testing.T) kv.Store {
			db, err := kv.OpenBolt(filepath.Join(t.TempDir(), "store.db"), kv.BoltOptions{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = db.Close() })
			return db
		})
	})
	t.Run("Redis", func(t *testing.T) {
		c := testredis.Client(t)
		fn(t, func(t *testing.T) kv.Store {
			db := kv.NewRedis(c, kv.RedisOptions{Prefix: testredis.Prefix(t), BatchDelay: time.Millisecond})
			t.Cleanup(func() { _ = db.Close() })
			return db
		})
	})
}
