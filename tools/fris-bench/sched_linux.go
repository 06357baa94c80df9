//go:build linux

package main

import (
	"errors"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// setBatchScheduling moves every thread of this process to SCHED_BATCH
// (on) or back to SCHED_OTHER (off); threads made later inherit it from
// the thread that makes them. A batch thread's wake-ups do not preempt the
// thread running on its CPU: the load generator, which in production runs
// on the clients' machines, then stops cutting into the services' signing
// every few microseconds (its runtime's sysmon wakes every 20-90µs while
// the machine is busy). It still gets its fair share of the CPU, which is
// still counted.
func setBatchScheduling(on bool) error {
	policy := uint32(unix.SCHED_NORMAL)
	if on {
		policy = unix.SCHED_BATCH
	}
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return err
	}
	for _, t := range tasks {
		tid, err := strconv.Atoi(t.Name())
		if err != nil {
			continue
		}
		attr := unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: policy}
		// A thread that exited meanwhile is no error.
		if err := unix.SchedSetAttr(tid, &attr, 0); err != nil && !errors.Is(err, unix.ESRCH) {
			return err
		}
	}
	return nil
}
