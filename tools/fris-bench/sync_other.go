//go:build !linux

package main

import "os"

// fdatasync falls back to fsync where the system has no fdatasync.
func fdatasync(f *os.File) error { return f.Sync() }

// blockDevice: /proc/diskstats is Linux only; without it no device flushes
// are counted.
func blockDevice(string) string { return "" }

// setBatchScheduling: SCHED_BATCH is Linux only; elsewhere the load
// generator keeps the default policy.
func setBatchScheduling(bool) error { return nil }
