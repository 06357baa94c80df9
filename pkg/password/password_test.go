package password

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/argon2"
)

var fast = Params{Time: 1, Memory: 1024, Threads: 1}

func TestHashAndCheck(t *testing.T) {
	h := New(fast, 0)
	enc, err := h.Hash(t.Context(), "correct horse")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(enc, "$argon2id$v=19$m=1024,t=1,p=1$") {
		t.Fatalf("encoding = %s", enc)
	}
	enc2, _ := h.Hash(t.Context(), "correct horse")
	if enc == enc2 {
		t.Fatal("no salt: equal hashes for equal secrets")
	}
	if err := h.Check(t.Context(), enc, "correct horse"); err != nil {
		t.Fatal(err)
	}
	if err := h.Check(t.Context(), enc, "correct horsE"); !errors.Is(err, ErrMismatch) {
		t.Fatalf("wrong secret = %v", err)
	}
	for _, bad := range []string{"", "plain", "$argon2i$v=19$m=1,t=1,p=1$AA$AA", "$argon2id$v=19$m=x$AA$AA", "$argon2id$v=19$m=1024,t=1,p=1$!!$AA"} {
		if err := h.Check(t.Context(), bad, "x"); err == nil || errors.Is(err, ErrMismatch) {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

func TestCacheRemembersOnlySuccess(t *testing.T) {
	h := New(Default, time.Minute)
	enc, _ := h.Hash(t.Context(), "s3cret-s3cret")
	start := time.Now()
	if err := h.Check(t.Context(), enc, "s3cret-s3cret"); err != nil {
		t.Fatal(err)
	}
	slow := time.Since(start)
	start = time.Now()
	for i := 0; i < 100; i++ {
		if err := h.Check(t.Context(), enc, "s3cret-s3cret"); err != nil {
			t.Fatal(err)
		}
	}
	if cached := time.Since(start) / 100; cached*20 > slow {
		t.Fatalf("cached check %v not much faster than a hash %v", cached, slow)
	}
	if err := h.Check(t.Context(), enc, "wrong"); !errors.Is(err, ErrMismatch) {
		t.Fatal("cache confused a wrong secret with the right one")
	}
}

// countingKey wraps argon2's derivation, recording the most computations
// that ran at once; each holds on until release is closed or nap passed, so
// concurrent callers overlap.
type countingKey struct {
	mu          sync.Mutex
	running, hi int
	nap         time.Duration
	started     chan struct{}
	release     chan struct{}
}

// newCountingHasher returns a hasher with the given limit whose
// computations ck holds; the hasher's own dummy hash has passed.
func newCountingHasher(limit int, nap time.Duration) (*Hasher, *countingKey) {
	ck := &countingKey{nap: nap, started: make(chan struct{}, 1), release: make(chan struct{})}
	close(ck.release)
	h := newHasher(fast, 0, limit, ck.key)
	ck.started, ck.release, ck.hi = make(chan struct{}, 1), make(chan struct{}), 0
	return h, ck
}

func (c *countingKey) key(secret, salt []byte, tm, mem uint32, th uint8, n uint32) []byte {
	c.mu.Lock()
	c.running++
	c.hi = max(c.hi, c.running)
	c.mu.Unlock()
	select {
	case c.started <- struct{}{}:
	default:
	}
	select {
	case <-c.release:
	case <-time.After(c.nap):
	}
	c.mu.Lock()
	c.running--
	c.mu.Unlock()
	return argon2.IDKey(secret, salt, tm, mem, th, n)
}

func TestConcurrentComputationsAreBounded(t *testing.T) {
	h, ck := newCountingHasher(2, 20*time.Millisecond)
	enc, err := h.Hash(t.Context(), "correct horse")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 8 {
		wg.Go(func() {
			if i%2 == 0 {
				h.Burn(t.Context(), "guess")
				return
			}
			errs <- h.Check(t.Context(), enc, "correct horse")
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if ck.hi != 2 {
		t.Fatalf("at most %d computations ran at once, want exactly the limit 2", ck.hi)
	}
}

func TestWaitingForASlotEndsWithTheContext(t *testing.T) {
	h, ck := newCountingHasher(1, time.Minute)
	close(ck.release)
	enc, err := h.Hash(t.Context(), "correct horse")
	if err != nil {
		t.Fatal(err)
	}
	<-ck.started
	ck.release = make(chan struct{})
	// Occupy the only slot until released.
	busy := make(chan error, 1)
	go func() { busy <- h.Check(t.Context(), enc, "correct horse") }()
	<-ck.started
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Millisecond)
	defer cancel()
	if err := h.Check(ctx, enc, "correct horse"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("check while the slot is taken = %v, want the context's deadline", err)
	}
	if _, err := h.Hash(ctx, "another"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("hash while the slot is taken = %v, want the context's deadline", err)
	}
	close(ck.release)
	if err := <-busy; err != nil {
		t.Fatal(err)
	}
	// The slot is free again.
	if err := h.Check(t.Context(), enc, "correct horse"); err != nil {
		t.Fatal(err)
	}
}

func TestMemoryIsReleasedOnceIdle(t *testing.T) {
	var released sync.WaitGroup
	released.Add(1)
	var mu sync.Mutex
	calls := 0
	h := &Hasher{p: fast, slots: make(chan struct{}, 1), key: argon2.IDKey,
		idleRelease: 100 * time.Millisecond,
		release: func() {
			mu.Lock()
			defer mu.Unlock()
			calls++
			if calls == 1 {
				released.Done()
			}
		}}
	count := func() int { mu.Lock(); defer mu.Unlock(); return calls }

	for range 3 {
		if _, err := h.Hash(context.Background(), "secret"); err != nil {
			t.Fatal(err)
		}
	}
	if n := count(); n != 0 {
		t.Fatalf("released %d times while computations were still running", n)
	}
	released.Wait()
	time.Sleep(4 * h.idleRelease)
	if n := count(); n != 1 {
		t.Fatalf("a burst of computations released %d times, want once after it", n)
	}
}

// Concurrent checks of one secret share a computation, asked of the gate
// once; a remembered secret asks nothing; a refusal computes nothing.
func TestVerifySharesAndGates(t *testing.T) {
	release := make(chan struct{})
	close(release) // the hasher's own dummy hash and the one below pass
	var held sync.Once
	started := make(chan struct{})
	h := newHasher(fast, time.Minute, 4, func(secret, salt []byte, tm, mem uint32, th uint8, n uint32) []byte {
		select {
		case <-release:
		default:
			held.Do(func() { close(started) })
			<-release
		}
		return argon2.IDKey(secret, salt, tm, mem, th, n)
	})
	var gates sync.WaitGroup
	var mu sync.Mutex
	asked, outcomes := 0, []error{}
	gate := func(ctx context.Context) (func(error), error) {
		mu.Lock()
		asked++
		mu.Unlock()
		return func(err error) {
			mu.Lock()
			outcomes = append(outcomes, err)
			mu.Unlock()
		}, nil
	}
	enc, _ := h.Hash(t.Context(), "right secret")
	release = make(chan struct{})
	before := h.Computations()
	errs := make(chan error, 32)
	for range 32 {
		gates.Go(func() { errs <- h.Verify(t.Context(), enc, "right secret", gate) })
	}
	<-started
	close(release)
	gates.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("a concurrent check of the right secret: %v", err)
		}
	}
	if n := h.Computations() - before; n != 1 || asked != 1 || len(outcomes) != 1 || outcomes[0] != nil {
		t.Fatalf("32 concurrent checks: %d computations, gate asked %d times (outcomes %v); want one", n, asked, outcomes)
	}
	// Remembered: the gate is not asked.
	if err := h.Verify(t.Context(), enc, "right secret", func(context.Context) (func(error), error) {
		t.Fatal("the gate was asked for a remembered secret")
		return nil, nil
	}); err != nil {
		t.Fatal(err)
	}
	// A refusal: no computation, the gate's error.
	refused := errors.New("refused")
	before = h.Computations()
	if err := h.Verify(t.Context(), enc, "wrong secret", func(context.Context) (func(error), error) { return nil, refused }); !errors.Is(err, refused) {
		t.Fatalf("refused check = %v", err)
	}
	if h.Computations() != before {
		t.Fatal("a refused check computed a hash")
	}
	// A wrong secret: ErrMismatch, told to the gate.
	if err := h.Verify(t.Context(), enc, "wrong secret", gate); !errors.Is(err, ErrMismatch) || !errors.Is(outcomes[len(outcomes)-1], ErrMismatch) {
		t.Fatalf("wrong secret = %v, gate told %v", err, outcomes[len(outcomes)-1])
	}
}
