//go:build !linux

package e2e

import "testing"

func mountTmpfs(t *testing.T, _ string, _ int) {
	t.Skip("mounting a tmpfs is Linux-only: the full-disk path is covered by pkg/kv's fault-injection test")
}
