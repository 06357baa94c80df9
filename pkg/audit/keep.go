package audit

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// The writer that copies recorded events into the service's store. Record
// hands it events without waiting: an event costs the action it records
// neither a store write's latency (auth audits every token it issues) nor,
// when the store fails, its success. One goroutine writes what has
// gathered in one transaction; a full queue or a failed write loses
// events from the store only, never from the audit log, with a warning.
// Anonymous refusals do not queue: they are folded into counts (fold.go)
// that the same goroutine adds to the store every foldFlush; anonymous
// successes queue only while the queue is less than anonQueue full, so a
// stranger's flood never takes the place of an operator's event.

// queueLen is how many events wait for the writer at most.
const queueLen = 4096

// batchLen is the most events one transaction writes.
const batchLen = 256

// anonQueue is how full the queue may be for an anonymous event to join.
const anonQueue = queueLen * 3 / 4

type keeper struct {
	store *Store
	log   *slog.Logger
	queue chan Stored
	// folds gathers anonymous refusals; kick tells the writer a new
	// gathering began.
	folds folder
	kick  chan struct{}
	stop  chan struct{}
	done  chan struct{}
	// dropped counts events the full queue refused since the last warning.
	dropped   atomic.Int64
	sinceKept int // events written since the last Prune
	stopOnce  sync.Once
}

// Keep makes l also store each recorded event in store, bounded by its
// retention, and returns the function that writes what is queued and stops
// (call it before the store closes). Call before the service serves. A nil
// l starts nothing; a store that keeps nothing (Keep 0) only deletes what
// it kept before.
func (l *Logger) Keep(store *Store, log *slog.Logger) (stop func()) {
	if l == nil || store == nil {
		return func() {}
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	k := &keeper{store: store, log: log, queue: make(chan Stored, queueLen), kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	if store.ret.Keep <= 0 {
		// Nothing to keep: only delete what an earlier start kept.
		go func() { defer close(k.done); k.prune() }()
	} else {
		l.keep = k
		go k.run()
	}
	return func() {
		k.stopOnce.Do(func() { close(k.stop) })
		<-k.done
	}
}

// add queues e, never waiting.
func (k *keeper) add(e Stored) {
	if e.Class == ClassAnonymous && len(k.queue) >= anonQueue {
		k.dropped.Add(1)
		return
	}
	select {
	case k.queue <- e:
	default:
		k.dropped.Add(1)
	}
}

// fold counts an anonymous refusal, never waiting.
func (k *keeper) fold(e Stored) {
	if k.folds.add(e) {
		select {
		case k.kick <- struct{}{}:
		default:
		}
	}
}

func (k *keeper) run() {
	defer close(k.done)
	// Enforce the retention as configured now (a lowered bound) at start.
	k.prune()
	var flush <-chan time.Time
	for {
		select {
		case e := <-k.queue:
			k.write(k.gather(e))
		case <-k.kick:
			if flush == nil {
				flush = time.After(foldFlush)
			}
		case <-flush:
			flush = nil
			k.flushFolds()
		case <-k.stop:
			for {
				select {
				case e := <-k.queue:
					k.write(k.gather(e))
				default:
					k.flushFolds()
					return
				}
			}
		}
	}
}

// flushFolds adds the counts gathered to the store.
func (k *keeper) flushFolds() {
	folds := k.folds.take()
	if len(folds) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	n, err := k.store.AddFolds(ctx, folds)
	if err != nil {
		k.log.Warn("audit: counts of anonymous refusals not stored (the audit log has the events)", "folds", len(folds), "err", err)
	}
	k.kept(n)
}

// gather is first and whatever else is queued, up to batchLen.
func (k *keeper) gather(first Stored) []Stored {
	batch := []Stored{first}
	for len(batch) < batchLen {
		select {
		case e := <-k.queue:
			batch = append(batch, e)
		default:
			return batch
		}
	}
	return batch
}

func (k *keeper) write(batch []Stored) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := k.store.Append(ctx, batch); err != nil {
		k.log.Warn("audit: events not stored (the audit log has them)", "events", len(batch), "err", err)
	}
	if n := k.dropped.Swap(0); n > 0 {
		k.log.Warn("audit: events not stored, the queue was full (the audit log has them)", "events", n)
	}
	k.kept(len(batch))
}

// kept counts n records written and prunes every tenth of Keep.
func (k *keeper) kept(n int) {
	k.sinceKept += n
	if k.sinceKept >= max(1, k.store.ret.Keep/10) {
		k.prune()
	}
}

func (k *keeper) prune() {
	k.sinceKept = 0
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	n, err := k.store.Prune(ctx)
	if err != nil {
		k.log.Warn("audit: pruning stored events", "err", err)
	}
	if n > 0 {
		k.log.Info("audit: stored events beyond the retention deleted", "events", n, "keep", k.store.ret.Keep, "keep_for", k.store.ret.For)
	}
}

// outcome is how err ended an action: refusals of the caller are denied,
// everything else failed.
func outcome(err error) string {
	switch {
	case err == nil:
		return OutcomeOK
	case isDenied(status.Code(err)):
		return OutcomeDenied
	}
	return OutcomeFailed
}

func isDenied(c codes.Code) bool {
	return c == codes.PermissionDenied || c == codes.Unauthenticated || c == codes.ResourceExhausted
}
