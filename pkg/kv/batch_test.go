package kv_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"fris.dev/pkg/kv"
	"fris.dev/pkg/kv/kvtest"
	"fris.dev/pkg/testredis"
)

// redisClients names the Redis setups every Redis test runs on: one
// redis-server and a Cluster.
var redisClients = []struct {
	name   string
	client func(testing.TB) redis.UniversalClient
}{{"Redis", testredis.Client}, {"Cluster", testredis.ClusterClient}}

// The conformance suite also holds for Redis without group commit
// (-batch-delay 0).
func TestConformanceRedisUnbatched(t *testing.T) {
	for _, rc := range redisClients {
		t.Run(rc.name, func(t *testing.T) {
			c := rc.client(t)
			kvtest.Run(t, func(t *testing.T) kv.Store {
				db := kv.NewRedis(c, kv.RedisOptions{Prefix: testredis.Prefix(t)})
				t.Cleanup(func() { _ = db.Close() })
				return db
			})
		})
	}
}

// execCounter counts the MULTI/EXEC transactions a client sends.
type execCounter struct {
	mu    sync.Mutex
	execs int
}

func (e *execCounter) DialHook(next redis.DialHook) redis.DialHook { return next }
func (e *execCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return next
}
func (e *execCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, c := range cmds {
			if strings.EqualFold(c.Name(), "exec") {
				e.mu.Lock()
				e.execs++
				e.mu.Unlock()
			}
		}
		return next(ctx, cmds)
	}
}

// On a Cluster every write commits alone (a batch could only queue writes
// of different partitions one behind the other): TestGroupCommitAcrossPartitions
// holds it to that.
func TestRedisGroupCommit(t *testing.T) {
	for _, rc := range redisClients[:1] {
		t.Run(rc.name, func(t *testing.T) {
			c := rc.client(t)
			hook := &execCounter{}
			addHook(t, c, hook)
			open := func(t *testing.T, delay time.Duration) kv.Store {
				db := kv.NewRedis(c, kv.RedisOptions{Prefix: testredis.Prefix(t), BatchDelay: delay})
				t.Cleanup(func() { _ = db.Close() })
				return db
			}
			groupCommitCases(t, open, hook.count)
		})
	}
}

// addHook adds h to c, and on a Cluster to the node clients, which run the
// transactions (a ClusterClient's own hooks do not see them).
func addHook(t *testing.T, c redis.UniversalClient, h redis.Hook) {
	cc, ok := c.(*redis.ClusterClient)
	if !ok {
		c.AddHook(h)
		return
	}
	var mu sync.Mutex
	seen := map[*redis.Client]bool{}
	add := func(n *redis.Client) {
		mu.Lock()
		defer mu.Unlock()
		if !seen[n] {
			seen[n] = true
			n.AddHook(h)
		}
	}
	cc.OnNewNode(add)
	if err := cc.ForEachShard(context.Background(), func(_ context.Context, n *redis.Client) error {
		add(n)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

func TestBoltGroupCommit(t *testing.T) {
	var last *kv.Bolt
	open := func(t *testing.T, delay time.Duration) kv.Store {
		db, err := kv.OpenBolt(filepath.Join(t.TempDir(), "g.db"), kv.BoltOptions{BatchDelay: delay, NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = db.Close() })
		last = db
		return db
	}
	groupCommitCases(t, open, func() int { return int(last.Commits()) })
}

func (e *execCounter) count() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.execs
}

// groupCommitCases holds a backend's group commit to the rules of batch.go,
// one subtest per rule. commits counts the commits of the store open
// returned last.
func groupCommitCases(t *testing.T, open func(t *testing.T, delay time.Duration) kv.Store, commits func() int) {
	b := gcBackend{open: open, commits: commits}
	for _, c := range []struct {
		name string
		run  func(t *testing.T, b gcBackend)
	}{
		{"batch", testBatch},
		{"a flushable write commits at once on a quiet store", testFlushableQuiet},
		{"a flushable write right after a commit waits for company", testFlushableAfterCommit},
		{"flush commits the batch at once", testFlushCommits},
		{"a batch commits at the earliest deadline of its writers", testEarliestDeadline},
		{"flush commits only the writes made before it", testFlushOnlyBefore},
	} {
		t.Run(c.name, func(t *testing.T) { c.run(t, b) })
	}
}

type gcBackend struct {
	open    func(t *testing.T, delay time.Duration) kv.Store
	commits func() int
}

func putKey(key string) func(kv.Tx) error {
	return func(tx kv.Tx) error { return tx.Put(key, []byte("v"), 0) }
}

func testBatch(t *testing.T, b gcBackend) {
	ctx := context.Background()
	db := b.open(t, 50*time.Millisecond)
	before := b.commits()
	boom := errors.New("boom")
	errs := batchOfTen(ctx, db, boom)
	for i, err := range errs {
		switch {
		case i == 3 && !errors.Is(err, boom):
			t.Errorf("writer 3: %v, want boom", err)
		case i == 7 && (err == nil || !strings.Contains(err.Error(), "panic")):
			t.Errorf("writer 7: %v, want its panic", err)
		case i != 3 && i != 7 && err != nil:
			t.Errorf("writer %d: %v", i, err)
		}
	}
	if v, err := db.Get(ctx, "count"); err != nil || string(v) != "8" {
		t.Fatalf("count = %s, %v; want 8 (no lost update)", v, err)
	}
	if _, err := db.Get(ctx, "k3"); !errors.Is(err, kv.ErrNotFound) {
		t.Fatalf("a failed writer's put landed: %v", err)
	}
	// 8 good writers in one batch (the batch's reruns after each
	// failure do not commit): far fewer commits than writers.
	if n := b.commits() - before; n < 1 || n > 3 {
		t.Fatalf("%d commits for 8 writers within one batch delay", n)
	}

	// A caller that gives up while its write waits in the batch is
	// answered at once. (A deadline of a millisecond could pass before
	// Update is entered on a busy machine, and then nothing is queued.)
	if err := db.Update(givingUp{ctx, new(atomic.Bool)}, putKey("late")); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("cancelled caller: %v", err)
	}
	// Its batch still commits; wait for it, so that the next case
	// counts only its own commits.
	for end := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if _, err := db.Get(ctx, "late"); err == nil {
			break
		} else if time.Now().After(end) {
			t.Fatalf("the abandoned write never committed: %v", err)
		}
	}
}

// batchOfTen runs ten concurrent writers, within one batch delay, and
// returns what each got: 3 fails with boom, 7 panics, the others count.
func batchOfTen(ctx context.Context, db kv.Store, boom error) []error {
	var wg sync.WaitGroup
	errs := make([]error, 10)
	for i := range errs {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			// A panicking writer panics in its own goroutine, as without
			// group commit; the batch goes on without it.
			defer func() {
				if p := recover(); p != nil {
					errs[i] = fmt.Errorf("panic: %v", p)
				}
			}()
			errs[i] = db.Update(ctx, func(tx kv.Tx) error {
				switch i {
				case 3:
					// A failing writer's own writes never land, and it
					// does not take the others down.
					_ = tx.Put("k3", []byte("no"), 0)
					return boom
				case 7:
					panic("writer bug")
				}
				// Each sees the writes of those before it in the batch.
				n := 0
				if v, err := tx.Get(ctx, "count"); err == nil {
					fmt.Sscan(string(v), &n)
				}
				if err := tx.Put("count", []byte(fmt.Sprint(n+1)), 0); err != nil {
					return err
				}
				return tx.Put(fmt.Sprintf("k%d", i), []byte("v"), 0)
			})
		}(i)
	}
	wg.Wait()
	return errs
}

// With a delay far longer than the test, a plain write keeps a batch
// pending (the store busy) until something else commits it.
const longDelay = 20 * time.Second

func waitPending(t *testing.T, db kv.Store, n int) {
	for end := time.Now().Add(10 * time.Second); kv.Pending(db) < n; time.Sleep(time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("%d writes pending, want %d", kv.Pending(db), n)
		}
	}
}

// busy starts a plain write that keeps a batch pending, and returns where
// its answer will arrive.
func busy(t *testing.T, db kv.Store, key string) <-chan error {
	done := make(chan error, 1)
	go func() { done <- db.Update(context.Background(), putKey(key)) }()
	waitPending(t, db, 1)
	return done
}

func testFlushableQuiet(t *testing.T, b gcBackend) {
	db := b.open(t, longDelay)
	before := b.commits()
	fctx, _ := kv.WithFlush(context.Background(), longDelay)
	start := time.Now()
	if err := db.Update(fctx, putKey("alone")); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > longDelay/2 {
		t.Fatalf("a flushable write on a quiet store took %v", took)
	}
	if n := b.commits() - before; n != 1 {
		t.Fatalf("%d commits, want 1", n)
	}
}

func testFlushableAfterCommit(t *testing.T, b gcBackend) {
	ctx := context.Background()
	db := b.open(t, 10*time.Millisecond)
	if err := db.Update(ctx, putKey("plain")); err != nil {
		t.Fatal(err)
	}
	fctx, _ := kv.WithFlush(ctx, 300*time.Millisecond)
	start := time.Now()
	if err := db.Update(fctx, putKey("next")); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < 300*time.Millisecond || took > longDelay/2 {
		t.Fatalf("a write with a 300ms bound, just after a commit, took %v", took)
	}
}

func testFlushCommits(t *testing.T, b gcBackend) {
	ctx := context.Background()
	db := b.open(t, longDelay)
	before := b.commits()
	rider := busy(t, db, "rider")
	fctx, flush := kv.WithFlush(ctx, longDelay)
	start := time.Now()
	done := make(chan error, 1)
	go func() { done <- db.Update(fctx, putKey("flushed")) }()
	waitPending(t, db, 2)
	time.Sleep(20 * time.Millisecond)
	select {
	case err := <-done:
		t.Fatalf("a write on a busy store committed before flush, within its bound: %v", err)
	default:
	}
	flush()
	for _, c := range []<-chan error{done, rider} {
		if err := <-c; err != nil {
			t.Fatal(err)
		}
	}
	if took := time.Since(start); took > longDelay/2 {
		t.Fatalf("flushed writes took %v", took)
	}
	if n := b.commits() - before; n != 1 {
		t.Fatalf("%d commits, want the 2 writes in one", n)
	}
	for _, k := range []string{"flushed", "rider"} {
		if _, err := db.Get(ctx, k); err != nil {
			t.Fatalf("%s: %v", k, err)
		}
	}
}

func testEarliestDeadline(t *testing.T, b gcBackend) {
	db := b.open(t, longDelay)
	before := b.commits()
	plain := busy(t, db, "plain")
	fctx, _ := kv.WithFlush(context.Background(), 300*time.Millisecond)
	start := time.Now()
	if err := db.Update(fctx, putKey("bounded")); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < 300*time.Millisecond || took > longDelay/2 {
		t.Fatalf("a write with a 300ms bound on a busy store took %v", took)
	}
	if err := <-plain; err != nil {
		t.Fatal(err)
	}
	if n := b.commits() - before; n != 1 {
		t.Fatalf("%d commits, want the 2 writes in one", n)
	}
}

func testFlushOnlyBefore(t *testing.T, b gcBackend) {
	db := b.open(t, longDelay)
	plain := busy(t, db, "plain")
	fctx, flush := kv.WithFlush(context.Background(), 300*time.Millisecond)
	flush()
	start := time.Now()
	if err := db.Update(fctx, putKey("after")); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < 300*time.Millisecond || took > longDelay/2 {
		t.Fatalf("a write after flush took %v, want its full 300ms bound", took)
	}
	if err := <-plain; err != nil {
		t.Fatal(err)
	}
}

// givingUp is a caller that gives up as soon as it waits: its Err is nil
// until its Done has been asked for, so Update queues the write first.
type givingUp struct {
	context.Context
	asked *atomic.Bool
}

func (g givingUp) Done() <-chan struct{} {
	g.asked.Store(true)
	c := make(chan struct{})
	close(c)
	return c
}

func (g givingUp) Err() error {
	if g.asked.Load() {
		return context.DeadlineExceeded
	}
	return nil
}
