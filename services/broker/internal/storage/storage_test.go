package storage_test

import (
	"testing"

	"fris.dev/pkg/kv"
	"fris.dev/pkg/kv/kvtest"
	"fris.dev/services/broker/internal/storage"
	"fris.dev/services/broker/internal/storage/storagetest"
)

// TestConformance runs the store's suite on every backend.
func TestConformance(t *testing.T) {
	kvtest.BackendsWith(t, storage.Partitions, func(t *testing.T, open func(t *testing.T) kv.Store) {
		storagetest.Run(t, func(t *testing.T) storage.Store { return storage.New(open(t)) })
	})
}
