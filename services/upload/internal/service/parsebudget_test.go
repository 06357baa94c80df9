package service

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestParseBudget(t *testing.T) {
	freed := make(chan struct{}, 4)
	b := newParseBudget(10, 10*time.Millisecond, func() { freed <- struct{}{} })
	r1, err := b.acquire(context.Background(), 6)
	if err != nil {
		t.Fatal(err)
	}
	// 6 of 10 held: 5 more waits, until its deadline.
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := b.acquire(ctx, 5); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("over the budget: %v, want to wait until the deadline", err)
	}
	// A document larger than the whole budget takes all of it, once free.
	got := make(chan func(), 1)
	go func() {
		r, err := b.acquire(context.Background(), 1<<20)
		if err != nil {
			t.Error(err)
		}
		got <- r
	}()
	select {
	case <-got:
		t.Fatal("admitted while another document holds part of the budget")
	case <-time.After(50 * time.Millisecond):
	}
	r1()
	r2 := <-got
	if b.held.Load() != 10 {
		t.Fatalf("held %d, want the whole budget", b.held.Load())
	}
	r2()
	if b.held.Load() != 0 {
		t.Fatalf("held %d after every release", b.held.Load())
	}
	select {
	case <-freed:
		t.Fatal("memory handed back after 16 bytes")
	case <-time.After(50 * time.Millisecond):
	}
	big := newParseBudget(0, 10*time.Millisecond, func() { freed <- struct{}{} })
	r, _ := big.acquire(context.Background(), parseReleaseAfter)
	r()
	select {
	case <-freed:
	case <-time.After(10 * time.Second):
		t.Fatal("memory not handed back when idle after large documents")
	}
}
