package e2e

import (
	"fmt"
	"syscall"
	"testing"
)

// mountTmpfs mounts a tmpfs of size bytes on dir for the test, or skips the
// test when it may not mount (not root, no CAP_SYS_ADMIN, a container).
func mountTmpfs(t *testing.T, dir string, size int) {
	t.Helper()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, fmt.Sprintf("size=%d,mode=0700", size)); err != nil {
		t.Skipf("cannot mount a tmpfs to fill (%v): the full-disk path is covered by pkg/kv's fault-injection test", err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, 0); err != nil {
			_ = syscall.Unmount(dir, syscall.MNT_DETACH)
		}
	})
}
