package kv_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"fris.dev/pkg/kv"
)

// On bbolt, which commits one transaction at a time, writes that arrive
// while a commit runs share the next commit, even when each writer
// flushes at once (a refresh whose tokens are signed in microseconds):
// the old rule gave each flushed write a commit of its own, queued behind
// the running one.
func TestBoltWritesDuringACommitShareTheNext(t *testing.T) {
	ctx := context.Background()
	db, err := kv.OpenBolt(filepath.Join(t.TempDir(), "s.db"), kv.BoltOptions{BatchDelay: longDelay, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })

	entered, release := make(chan struct{}), make(chan struct{})
	first := make(chan error, 1)
	go func() {
		// A flushable write on a quiet store commits at once; its
		// function holds the commit open until release.
		fctx, _ := kv.WithFlush(ctx, longDelay)
		first <- db.Update(fctx, func(tx kv.Tx) error {
			close(entered)
			<-release
			return tx.Put("first", []byte("v"), 0)
		})
	}()
	<-entered
	released := false
	t.Cleanup(func() { // before Close, which waits for the held commit
		if !released {
			close(release)
		}
	})
	before := db.Commits()

	const writers = 5
	done := make(chan error, writers)
	for i := range writers {
		fctx, flush := kv.WithFlush(ctx, longDelay)
		go func() { done <- db.Update(fctx, putKey(fmt.Sprintf("w%d", i))) }()
		// Each write joins the batch the flushes before it left waiting
		// for the running commit (the old rule committed that batch at
		// the flush, and this write found a fresh one).
		waitPending(t, db, i+1)
		flush()
	}
	close(release)
	released = true
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	for range writers {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	// The held commit itself, then one for all five.
	if n := db.Commits() - before; n != 2 {
		t.Fatalf("%d commits after the held one began, want 2 (the held one and one shared by the %d writes)", n, writers)
	}
	for i := range writers {
		if _, err := db.Get(ctx, fmt.Sprintf("w%d", i)); err != nil {
			t.Fatalf("w%d: %v", i, err)
		}
	}
}
