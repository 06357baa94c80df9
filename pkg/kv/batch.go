package kv

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Group commit, for both backends. A durable commit costs a fixed price
// (bbolt: two fdatasyncs; Redis with appendfsync always: one AOF fsync per
// event-loop turn that wrote), so concurrent Update calls are gathered for
// up to the batch delay (or until the batch is full) and run as one
// transaction. The rules are bbolt's Batch: the functions run one after
// the other in the same transaction and see each other's writes; one that
// fails is dropped from the batch, the rest run again, and the failed one
// runs again alone so that it alone gets its error.
//
// A caller that overlaps its write with other work can give it a longer
// bound and say when that work is done (WithFlush). Such a write commits at
// once on a quiet store (no batch pending or committing, none finished
// within its bound), and its batch commits at once when the caller
// flushes; otherwise it waits up to its bound. So a lone writer pays for no
// window, while under load many such writes share each commit. Each write
// waits at most its own bound: a batch commits at the earliest deadline of
// its writers, at the first flush of any of them, or when full.

// errRunAlone tells a caller to run its function in a transaction of its own.
var errRunAlone = errors.New("kv: run alone")

// groupCommit gathers Updates into shared transactions made by update.
type groupCommit struct {
	update func(context.Context, func(Tx) error) error
	parts  Partitioner // nil: one partition
	// mixed, when set, makes a transaction that may hold writes of several
	// partitions (bbolt; Redis unless it is a Cluster). A batch then
	// commits in one transaction whatever its writes' partitions, each
	// write still held to one partition, instead of one commit per
	// partition: uploads of new patients, spread over partitions, would
	// otherwise each pay a commit of their own.
	mixed    func(context.Context, func(Tx) error) error
	delay    time.Duration
	maxBatch int
	// serial, when set, says the backend commits one transaction at a
	// time (bbolt). A batch due while another commits then waits for it
	// and keeps taking writes (queued) instead of lining up its own
	// commit behind it: writes that arrive during a commit share the next
	// one, as in a database's group commit, however soon their writers
	// flush. Waiting costs them nothing, since the backend would make
	// them wait anyway.
	serial bool

	mu       sync.Mutex
	pending  *batch
	running  int       // batches committing
	lastDone time.Time // when the last batch finished committing
	queued   []*batch  // serial: batches due, waiting for the running one
}

type batchCall struct {
	fn  func(Tx) error
	err chan error
}

type batch struct {
	g        *groupCommit
	timer    *time.Timer // fires at deadline (a late fire finds once done)
	deadline time.Time
	once     sync.Once
	calls    []batchCall
	queued   bool // in g.queued
}

func (g *groupCommit) do(ctx context.Context, fn func(Tx) error) error {
	errc := make(chan error, 1)
	wait := g.delay
	f, _ := ctx.Value(flushKey{}).(*flusher)
	if f != nil {
		wait = f.maxWait
	}
	deadline := time.Now().Add(wait)
	quiet := false
	g.mu.Lock()
	if g.pending == nil || len(g.pending.calls) >= g.maxBatch {
		quiet = g.pending == nil && g.running == 0 && time.Since(g.lastDone) >= wait
		b := &batch{g: g, deadline: deadline}
		b.timer = time.AfterFunc(wait, b.trigger)
		g.pending = b
	}
	b := g.pending
	b.calls = append(b.calls, batchCall{fn: fn, err: errc})
	if deadline.Before(b.deadline) {
		// The batch commits when its most hurried writer must.
		b.deadline = deadline
		b.timer.Reset(wait)
	}
	full := len(b.calls) >= g.maxBatch
	g.mu.Unlock()
	switch {
	case full:
		go b.trigger()
	case quiet && f != nil:
		// Quiet for a whole bound: waiting would most likely find no one
		// to share with, and the writer's other work hides the commit
		// best if it starts now. (Under load writes come closer together;
		// committing those alone would multiply the commits.)
		b.trigger()
	}
	if f != nil {
		f.join(b)
	}

	var err error
	select {
	case err = <-errc:
	case <-ctx.Done():
		// The batch may still commit this write; like a lost reply, the
		// caller cannot know. It stops waiting.
		return ctx.Err()
	}
	if errors.Is(err, errRunAlone) {
		err = g.update(ctx, fn)
	}
	return err
}

func (b *batch) trigger() {
	g := b.g
	if g.serial {
		g.mu.Lock()
		if g.running > 0 {
			if !b.queued {
				b.queued = true
				g.queued = append(g.queued, b)
			}
			g.mu.Unlock()
			return
		}
		g.mu.Unlock()
	}
	b.once.Do(b.run)
}

func (b *batch) run() {
	g := b.g
	g.mu.Lock()
	b.timer.Stop()
	if g.pending == b {
		g.pending = nil
	}
	g.running++
	g.mu.Unlock()
	defer func() {
		g.mu.Lock()
		g.running--
		g.lastDone = time.Now()
		var next []*batch
		if g.running == 0 {
			next, g.queued = g.queued, nil
		}
		g.mu.Unlock()
		// Several are queued only when batches filled up; the backend
		// runs them one after the other.
		for _, n := range next {
			go n.once.Do(n.run)
		}
	}()
	// Callers wait for their answer and may give up; the batch itself is
	// bounded by the backend's own timeouts.
	ctx := context.Background()
	if g.mixed != nil {
		b.runMixed(ctx)
		return
	}
	for len(b.calls) > 0 {
		// A transaction holds one partition: the first write's. A write
		// whose first key is in another leaves this transaction before it
		// has done anything and goes into the next one (see callTx).
		var (
			failed = -1
			now    []batchCall
			later  []batchCall
		)
		err := g.update(ctx, func(tx Tx) error {
			failed, now, later = -1, nil, nil
			shared := &pin{parts: g.parts}
			for i, c := range b.calls {
				ct := &callTx{tx: tx, parts: g.parts, batch: shared}
				err := safeCall(c.fn, ct)
				if ct.moved {
					later = append(later, c)
					continue
				}
				if err != nil {
					failed = i
					return err
				}
				now = append(now, c)
			}
			return nil
		})
		if failed >= 0 {
			c := b.calls[failed]
			b.calls = append(b.calls[:failed], b.calls[failed+1:]...)
			c.err <- errRunAlone
			continue
		}
		for _, c := range now {
			c.err <- err
		}
		if err != nil {
			// The moved writes never ran; they try alone rather than share
			// a failing store's next attempt.
			for _, c := range later {
				c.err <- errRunAlone
			}
			return
		}
		b.calls = later
	}
}

// runMixed commits the whole batch in one transaction that may span
// partitions; a failing write runs again alone, the rest again together.
func (b *batch) runMixed(ctx context.Context) {
	g := b.g
	for len(b.calls) > 0 {
		failed := -1
		err := g.mixed(ctx, func(tx Tx) error {
			failed = -1
			for i, c := range b.calls {
				if err := safeCall(c.fn, &pinnedTx{Tx: tx, pin: pin{parts: g.parts}}); err != nil {
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

// errMoved stops a batched write whose first key is in another partition
// than its batch's transaction; the write runs in a later transaction.
var errMoved = errors.New("kv: write moved to another transaction")

// callTx is one batched write's view of the batch's transaction.
type callTx struct {
	tx      Tx
	parts   Partitioner
	batch   *pin // the partition of the transaction, set by its first key
	started bool
	moved   bool
}

// enter decides, at the write's first key (of partition part), whether it
// belongs in this transaction. Later keys of another partition are the
// write's own mistake, which the backend's transaction refuses.
// A key that touches no partition (one Put refuses, or a scan prefix of
// several partitions, which the backend refuses) decides nothing.
func (c *callTx) enter(part string, touches bool) error {
	if c.moved {
		return errMoved
	}
	if c.started || !touches {
		return nil
	}
	c.started = true
	if c.batch.set && c.batch.part != part {
		c.moved = true
		return errMoved
	}
	c.batch.set, c.batch.part = true, part
	return nil
}

func (c *callTx) keyPart(key string) (string, bool) {
	if !validKey(key) {
		return "", false // absent or refused, whatever the partition
	}
	if c.parts == nil {
		return "", true
	}
	return c.parts.Key(key), true
}

func (c *callTx) Get(ctx context.Context, key string) ([]byte, error) {
	if err := c.enter(c.keyPart(key)); err != nil {
		return nil, err
	}
	return c.tx.Get(ctx, key)
}

func (c *callTx) Scan(ctx context.Context, prefix, after string, limit int) ([]Entry, error) {
	part, known := "", true
	if c.parts != nil {
		parts := c.parts.Prefix(prefix)
		if known = len(parts) == 1; known {
			part = parts[0]
		}
	}
	if err := c.enter(part, known); err != nil {
		return nil, err
	}
	return c.tx.Scan(ctx, prefix, after, limit)
}

func (c *callTx) Put(key string, value []byte, ttl time.Duration) error {
	if err := c.enter(c.keyPart(key)); err != nil {
		return err
	}
	return c.tx.Put(key, value, ttl)
}

func (c *callTx) Delete(key string) error {
	if err := c.enter(c.keyPart(key)); err != nil {
		return err
	}
	return c.tx.Delete(key)
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

type flushKey struct{}

// flusher remembers the batches a caller's writes joined since its last
// flush.
type flusher struct {
	maxWait time.Duration
	mu      sync.Mutex
	batches []*batch
}

func (f *flusher) join(b *batch) {
	f.mu.Lock()
	f.batches = append(f.batches, b)
	f.mu.Unlock()
}

func (f *flusher) flush() {
	f.mu.Lock()
	bs := f.batches
	f.batches = nil
	f.mu.Unlock()
	for _, b := range bs {
		go b.trigger()
	}
}

// WithFlush returns a context for Update and a flush function, for a caller
// that writes in the background while it works on something else and only
// then waits for the write. A write made with the context commits at once
// if the store has been quiet for maxWait; else it waits for others to share its commit up
// to maxWait (instead of the store's batch delay), and flush commits at
// once the batches of the writes made so far. Call flush when nothing is
// left to do but wait. A write that starts only after flush on a busy
// store (its goroutine got no CPU while the caller worked) waits up to its
// full bound, which is when sharing a commit pays most. Stores without
// group commit ignore it.
func WithFlush(ctx context.Context, maxWait time.Duration) (context.Context, func()) {
	f := &flusher{maxWait: maxWait}
	return context.WithValue(ctx, flushKey{}, f), f.flush
}
