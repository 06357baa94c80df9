package service

import (
	"context"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/semaphore"
)

// parseBudget bounds the bytes of patient documents being parsed and
// stored at once. Parsing builds a model and much short-lived garbage, a
// few times the document's size (tens of times for a document of many
// tiny elements), and with the heap allowed to grow to several times what
// is live (-gogc), thirty 8 MiB documents at once took this service to
// 5.6 GiB. A document waits for its share while its call's deadline
// allows; the gateway's body budget (-body-memory) bounds how many wait.
// Once no document has been held for a while after large ones, the heap is
// handed back to the operating system (free), as the password hasher does
// after its computations.
type parseBudget struct {
	sem  *semaphore.Weighted
	max  int64
	held atomic.Int64
	// since counts bytes parsed since the memory was last handed back.
	since  atomic.Int64
	idle   time.Duration
	free   func()
	idleMu sync.Mutex
	timer  *time.Timer
}

// parseReleaseAfter: after this many bytes of documents, an idle service
// hands its memory back; the runtime's scavenger returns less on its own.
const parseReleaseAfter = 32 << 20

func newParseBudget(max int64, idle time.Duration, free func()) *parseBudget {
	b := &parseBudget{max: max, idle: idle, free: free}
	if max > 0 {
		b.sem = semaphore.NewWeighted(max)
	}
	return b
}

// acquire waits for n bytes of the budget (a document larger than the
// whole budget takes all of it); release gives them back.
func (b *parseBudget) acquire(ctx context.Context, n int64) (release func(), err error) {
	if b == nil {
		return func() {}, nil
	}
	n = max(n, 1)
	if b.sem != nil {
		n = min(n, b.max)
		if err := b.sem.Acquire(ctx, n); err != nil {
			return nil, err
		}
	}
	b.held.Add(n)
	return func() { b.release(n) }, nil
}

func (b *parseBudget) release(n int64) {
	if b.sem != nil {
		b.sem.Release(n)
	}
	b.held.Add(-n)
	if b.free == nil || b.since.Add(n) < parseReleaseAfter {
		return
	}
	b.idleMu.Lock()
	defer b.idleMu.Unlock()
	if b.timer == nil {
		b.timer = time.AfterFunc(b.idle, b.freeIfIdle)
		return
	}
	b.timer.Reset(b.idle)
}

// freeMemory hands the heap's free memory back to the operating system;
// the collection first moves the buffers gRPC pools in sync.Pools to the
// pools' victim caches, so that FreeOSMemory's frees them too.
func freeMemory() {
	runtime.GC()
	debug.FreeOSMemory()
}

func (b *parseBudget) freeIfIdle() {
	if b.held.Load() != 0 {
		return // the last document to end restarts the countdown
	}
	b.since.Store(0)
	b.free()
}
