package storage_test

import (
	"testing"

	"fris.dev/pkg/kv"
	"fris.dev/pkg/kv/kvtest"
	"fris.dev/services/auth/internal/storage"
	"fris.dev/services/auth/internal/storage/storagetest"
)

// TestConformance runs the store's suite on every backend.
func TestConformance(t *testing.T) {
	kvtest.BackendsWith(t, storage.Partitions, func(t *testing.T, open func(t *testing.T) kv.Store) {
		storagetest.Run(t, open, func(t *testing.T, db kv.Store, sealer storage.Sealer) storage.Store {
			return storage.New(db, sealer)
		})
	})
}

// TestConformanceSplit runs it again with the grants in a store of their own,
// as the service runs.
func TestConformanceSplit(t *testing.T) {
	kvtest.BackendsWith(t, storage.Partitions, func(t *testing.T, open func(t *testing.T) kv.Store) {
		storagetest.Run(t, open, func(t *testing.T, db kv.Store, sealer storage.Sealer) storage.Store {
			return storage.NewSplit(db, open(t), sealer)
		})
	})
}
