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
// working, makes Ping fail until its probe write succeeds again, and heals
// by itself once space is back.
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

// A disk with free pages for small writes but not for one of the largest
// size: after a large write failed for lack of space, small writes that
// succeed do not make the store ready again; only a probe write of
// ProbeBytes does.
func TestBoltNoSpaceLargestWrite(t *testing.T) {
	ctx := context.Background()
	const largest = 3 << 20
	var largeFails atomic.Bool
	var probed atomic.Int64
	o := kv.WithLargeFault(kv.BoltOptions{ProbeBytes: largest}, func(size int) error {
		if size < largest {
			t.Errorf("large write of %d bytes, want at least %d (the probe is a write of the largest size)", size, largest)
		}
		probed.Add(1)
		if largeFails.Load() {
			return syscall.ENOSPC
		}
		return nil
	})
	s, err := kv.OpenBolt(filepath.Join(t.TempDir(), "kv.db"), o)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	put := func(k string, n int) error {
		return s.Update(ctx, func(tx kv.Tx) error { return tx.Put(k, make([]byte, n), 0) })
	}

	largeFails.Store(true)
	if err := put("large", largest); !errors.Is(err, kv.ErrNoSpace) {
		t.Fatalf("large write on a full disk: %v, want ErrNoSpace", err)
	}
	if err := put("small", 10); err != nil {
		t.Fatalf("small write on a nearly full disk: %v", err)
	}
	before := probed.Load()
	if err := s.Ping(ctx); !errors.Is(err, kv.ErrNoSpace) {
		t.Fatalf("Ping while a small write succeeds but the largest cannot: %v, want ErrNoSpace", err)
	}
	if probed.Load() == before {
		t.Fatal("Ping did not try a write of the largest size")
	}

	largeFails.Store(false)
	if err := s.Ping(ctx); err != nil {
		t.Fatalf("Ping once the largest write fits: %v", err)
	}
	before = probed.Load()
	if err := s.Ping(ctx); err != nil {
		t.Fatalf("Ping after recovery: %v", err)
	}
	if probed.Load() != before {
		t.Fatal("Ping of a ready store wrote a probe; it should only read")
	}
	if err := put("large", largest); err != nil {
		t.Fatalf("large write once space is back: %v", err)
	}
}

// A probe that takes longer than the Ping's context does not hold the
// caller (readiness answers within its bound): the Ping is not ready, and
// the probe's own outcome decides the next one.
func TestBoltNoSpaceSlowProbe(t *testing.T) {
	release := make(chan struct{})
	var blocking atomic.Bool
	o := kv.WithLargeFault(kv.BoltOptions{}, func(int) error {
		if blocking.Load() {
			<-release
			return nil
		}
		return syscall.ENOSPC
	})
	s, err := kv.OpenBolt(filepath.Join(t.TempDir(), "kv.db"), o)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	if err := s.Update(ctx, func(tx kv.Tx) error { return tx.Put("large", make([]byte, 1), 0) }); !errors.Is(err, kv.ErrNoSpace) {
		t.Fatalf("write on a full disk: %v", err)
	}
	blocking.Store(true)
	short, cancel := context.WithCancel(ctx)
	cancel()
	if err := s.Ping(short); !errors.Is(err, kv.ErrNoSpace) || !errors.Is(err, context.Canceled) {
		t.Fatalf("Ping with an ended context during a probe: %v, want ErrNoSpace and Canceled", err)
	}
	close(release)
	if err := s.Ping(ctx); err != nil {
		t.Fatalf("Ping once the probe succeeds: %v", err)
	}
}
