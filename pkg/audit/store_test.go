package audit_test

import (
	"testing"

	"fris.dev/pkg/audit/audittest"
	"fris.dev/pkg/kv"
	"fris.dev/pkg/kv/kvtest"
)

// TestStore runs the audit event store's suite on every backend.
func TestStore(t *testing.T) {
	kvtest.Backends(t, func(t *testing.T, open func(t *testing.T) kv.Store) { audittest.Run(t, open) })
}
