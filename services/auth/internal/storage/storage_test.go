package storage_test

import (
	"path/filepath"
	"testing"

	"fris.dev/pkg/kv"
	"fris.dev/pkg/testredis"
	"fris.dev/services/auth/internal/storage"
	"fris.dev/services/auth/internal/storage/storagetest"
)

func TestBolt(t *testing.T) {
	storagetest.Run(t, func(t *testing.T) storage.Store {
		db, err := kv.OpenBolt(filepath.Join(t.TempDir(), "auth.db"), kv.BoltOptions{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = db.Close() })
		return storage.New(db)
	})
}

func TestRedis(t *testing.T) {
	c := testredis.Client(t)
	storagetest.Run(t, func(t *testing.T) storage.Store {
		db := kv.NewRedis(c, kv.RedisOptions{Prefix: testredis.Prefix(t)})
		t.Cleanup(func() { _ = db.Close() })
		return storage.New(db)
	})
}
