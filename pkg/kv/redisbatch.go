package kv

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Group commit on Redis. With appendfsync always Redis fsyncs its AOF once
// per event-loop turn that wrote anything, so writers that each send their
// own MULTI/EXEC mostly pay one fsync each. Concurrent Update calls are
// therefore gathered for up to BatchDelay (or MaxBatch calls) and run as one
// optimistic transaction: one WATCH round, one EXEC, one fsync. The rules
// are bbolt's Batch: the functions run one after the other in the same
// transaction and see each other's writes; one that fails is dropped from
// the batch, the rest run again, and the failed one runs again alone so
// that it alone gets its error.

// errRunAlone tells a caller to run its function in a transaction of its own.
var errRunAlone = errors.New("kv: run alone")

type batchCall struct {
	fn  func(Tx) error
	err chan error
}

type redisBatch struct {
	r     *Redis
	timer *time.Timer
	once  sync.Once
	calls []batchCall
}

func (r *Redis) batched(ctx context.Context, fn func(Tx) error) error {
	errc := make(chan error, 1)
	r.batchMu.Lock()
	if r.batch == nil || len(r.batch.calls) >= r.maxBatch {
		b := &redisBatch{r: r}
		b.timer = time.AfterFunc(r.batchDelay, b.trigger)
		r.batch = b
	}
	b := r.batch
	b.calls = append(b.calls, batchCall{fn: fn, err: errc})
	if len(b.calls) >= r.maxBatch {
		go b.trigger()
	}
	r.batchMu.Unlock()

	var err error
	select {
	case err = <-errc:
	case <-ctx.Done():
		// The batch may still commit this write; like a lost reply, the
		// caller cannot know. It stops waiting.
		return ctx.Err()
	}
	if errors.Is(err, errRunAlone) {
		err = r.update(ctx, fn)
	}
	return err
}

func (b *redisBatch) trigger() { b.once.Do(b.run) }

func (b *redisBatch) run() {
	r := b.r
	r.batchMu.Lock()
	b.timer.Stop()
	if r.batch == b {
		r.batch = nil
	}
	r.batchMu.Unlock()
	// Callers wait for their answer and may give up; the batch itself is
	// bounded by the client's own timeouts.
	ctx := context.Background()
	for len(b.calls) > 0 {
		failed := -1
		err := r.update(ctx, func(tx Tx) error {
			for i, c := range b.calls {
				if err := safeCall(c.fn, tx); err != nil {
					failed = i
					return err
				}
			}
			return nil
		})
		if failed >= 0 {
			c := b.calls[failed]
			b.calls = append(b.calls[:failed], b.calls[failed+1:]...)
			c.err <- errRunAlone
			continue
		}
		for _, c := range b.calls {
			c.err <- err
		}
		return
	}
}

// safeCall turns a panic in fn into an error, so one caller's bug does not
// take down the batch's goroutine with every other caller waiting; run
// again alone, fn panics in its caller's goroutine, as without batching.
func safeCall(fn func(Tx) error, tx Tx) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("kv: panic in transaction: %v", p)
		}
	}()
	return fn(tx)
}
