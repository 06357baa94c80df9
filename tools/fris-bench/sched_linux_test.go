//go:build linux

package main

import (
	"os"
	"strconv"
	"testing"

	"golang.org/x/sys/unix"
)

func policies(t *testing.T) map[uint32]int {
	t.Helper()
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	got := map[uint32]int{}
	for _, e := range tasks {
		tid, _ := strconv.Atoi(e.Name())
		a, err := unix.SchedGetAttr(tid, 0)
		if err != nil {
			continue // exited meanwhile
		}
		got[a.Policy]++
	}
	return got
}

func TestBatchSchedulingCoversEveryThreadAndReturns(t *testing.T) {
	if err := setBatchScheduling(true); err != nil {
		t.Fatal(err)
	}
	on := policies(t)
	if err := setBatchScheduling(false); err != nil {
		t.Fatal(err)
	}
	off := policies(t)
	if len(on) != 1 || on[unix.SCHED_BATCH] == 0 {
		t.Errorf("under batch: threads by policy %v", on)
	}
	if len(off) != 1 || off[unix.SCHED_NORMAL] == 0 {
		t.Errorf("back: threads by policy %v", off)
	}
}
