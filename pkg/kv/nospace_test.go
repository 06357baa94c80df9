package kv_test

import (
	"context"
	"errors"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"

	"fris.dev/pkg/kv"
)

// A full disk fails writes with ErrNoSpace (wrapping ENOSPC), keeps reads
// working, makes Ping fail until a write succeeds again, and heals by itself
// once space is back.
func TestBoltNoSpace(t *testing.T) {
	ctx := context.Background()
	var full atomic.Bool
	o := kv.WithFault(kv.BoltOptions{}, func() error {
		if full.Load() {
			return syscall.ENOSPC
		}
		return nil
	})
	s, err := kv.OpenBolt(filepath.Join(t.TempDir(), "kv.db"), o)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	put := func(k string) error {
		return s.Update(ctx, func(tx kv.Tx) error { return tx.Put(k, []byte("v"), 0) })
	}
	if err := put("before"); err != nil {
		t.Fatal(err)
	}
	if err := s.Ping(ctx); err != nil {
		t.Fatalf("Ping before: %v", err)
	}

	full.Store(true)
	// Reads do not notice a full disk; readiness must not either until a
	// write has failed (the disk may fill and empty without anyone writing).
	if err := s.Ping(ctx); err != nil {
		t.Fatalf("Ping on a full disk before any write failed: %v", err)
	}
	err = put("during")
	if !errors.Is(err, kv.ErrNoSpace) || !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("write on a full disk: %v, want ErrNoSpace wrapping ENOSPC", err)
	}
	if err := s.Ping(ctx); !errors.Is(err, kv.ErrNoSpace) {
		t.Fatalf("Ping after a failed write: %v, want ErrNoSpace", err)
	}
	if v, err := s.Get(ctx, "before"); err != nil || string(v) != "v" {
		t.Fatalf("read on a full disk: %q, %v", v, err)
	}
	if _, err := s.Get(ctx, "during"); !errors.Is(err, kv.ErrNotFound) {
		t.Fatalf("failed write is visible: %v", err)
	}

	full.Store(false)
	if err := s.Ping(ctx); err != nil {
		t.Fatalf("Ping once space is back: %v", err)
	}
	if err := put("after"); err != nil {
		t.Fatalf("write once space is back: %v", err)
	}
	if _, err := s.Get(ctx, "probe"); !errors.Is(err, kv.ErrNotFound) {
		t.Fatalf("Ping's probe left data behind: %v", err)
	}
}
