package storage_test

import (
	"testing"

	"fris.dev/pkg/audit/audittest"
	"fris.dev/pkg/kv"
	"fris.dev/pkg/kv/kvtest"
	"fris.dev/services/auth/internal/storage"
)

// TestAuditEvents runs the audit event store's suite on this service's
// partitioned store, on every backend: the events' keys must fit its
// partitions (pkg/audit keeps them in the service's store).
func TestAuditEvents(t *testing.T) {
	kvtest.BackendsWith(t, storage.Partitions, func(t *testing.T, open func(t *testing.T) kv.Store) { audittest.Run(t, open) })
}
