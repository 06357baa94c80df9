package kv_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"fris.dev/pkg/kv"
	"fris.dev/pkg/kv/kvtest"
	"fris.dev/pkg/testredis"
)

// The conformance suite also holds for Redis without group commit
// (-batch-delay 0).
func TestConformanceRedisUnbatched(t *testing.T) {
	c := testredis.Client(t)
	kvtest.Run(t, func(t *testing.T) kv.Store {
		db := kv.NewRedis(c, kv.RedisOptions{Prefix: testredis.Prefix(t)})
		t.Cleanup(func() { _ = db.Close() })
		return db
	})
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

func TestRedisGroupCommit(t *testing.T) {
	c := testredis.Client(t)
	hook := &execCounter{}
	c.AddHook(hook)
	db := kv.NewRedis(c, kv.RedisOptions{Prefix: testredis.Prefix(t), BatchDelay: 50 * time.Millisecond})
	defer db.Close()
	ctx := context.Background()
	boom := errors.New("boom")

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
	hook.mu.Lock()
	execs := hook.execs
	hook.mu.Unlock()
	// 8 good writers in one batch (plus the batch's reruns after each
	// failure, which do not commit): far fewer EXECs than writers.
	if execs < 1 || execs > 3 {
		t.Fatalf("%d EXECs for 8 writers within one batch delay", execs)
	}

	// A caller that gives up is answered at once.
	short, cancel := context.WithTimeout(ctx, time.Millisecond)
	defer cancel()
	if err := db.Update(short, func(tx kv.Tx) error { return tx.Put("late", []byte("v"), 0) }); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("cancelled caller: %v", err)
	}
}
