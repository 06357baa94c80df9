package ratelimit

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/redis/go-redis/v9"
	"google.golang.org/grpc/metadata"

	"fris.dev/pkg/identity"
	"fris.dev/pkg/kv"
	"fris.dev/pkg/rpcerr"
	"fris.dev/pkg/testredis"
)

// clock is the test's time: a fake one moved by hand for the in-process
// backend, the real one (Redis keeps its own) for Redis.
type clock struct {
	mu   sync.Mutex
	t    time.Time
	fake bool
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) advance(d time.Duration) {
	if !c.fake {
		time.Sleep(d)
		return
	}
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

type fixture struct {
	name  string
	b     backend
	clock *clock
	unit  time.Duration // the policies' time unit: long enough for Redis round trips
}

func from(addr string) context.Context {
	return metadata.NewIncomingContext(context.Background(), metadata.Pairs(identity.KeyClientAddr, addr))
}

// eachBackend runs fn on the in-process backend and, with REDIS_URL and
// REDIS_CLUSTER_URL, on Redis and on a Redis Cluster.
func eachBackend(t *testing.T, fn func(t *testing.T, f fixture)) {
	t.Run("memory", func(t *testing.T) {
		c := &clock{t: time.Unix(1_700_000_000, 0), fake: true}
		fn(t, fixture{name: "memory", b: newMemBackend(c.now), clock: c, unit: time.Second})
	})
	for _, r := range []struct {
		name   string
		client func(testing.TB) redis.UniversalClient
	}{{"redis", testredis.Client}, {"cluster", testredis.ClusterClient}} {
		t.Run(r.name, func(t *testing.T) {
			rc := r.client(t)
			// Redis keeps time itself: the test sleeps, in units short
			// enough for a quick test and long enough for loopback round
			// trips. The prefix is a hash tag, as the store's is.
			prefix := "{" + testredis.Prefix(t) + "}:"
			fn(t, fixture{name: r.name, b: newRedisBackend(rc, prefix), clock: &clock{}, unit: 150 * time.Millisecond})
		})
	}
}

func retryOf(t *testing.T, err error) time.Duration {
	t.Helper()
	d, ok := rpcerr.RetryAfter(err)
	if !ok {
		t.Fatalf("error %v is not a refusal with a retry delay", err)
	}
	return d
}

func TestFailuresSpendTheBudgetSuccessesDoNot(t *testing.T) {
	eachBackend(t, func(t *testing.T, f fixture) {
		reg := prometheus.NewRegistry()
		l := newLimiter(f.b, reg, nil)
		acct := Policy{Limit: Limit{Events: 1, Per: 4 * f.unit, Burst: 3}}
		g := l.Guard("login", acct, Policy{})
		ctx := from("192.0.2.1")
		// Checks alone (successful attempts) never run out.
		for i := 0; i < 20; i++ {
			a, err := g.Begin(ctx, "alice@example.org", false)
			if err != nil {
				t.Fatalf("check %d without failures: %v", i, err)
			}
			a.Succeeded(ctx)
		}
		for i := 0; i < 3; i++ {
			a, err := g.Begin(ctx, "alice@example.org", false)
			if err != nil {
				t.Fatalf("failure %d within the burst refused: %v", i, err)
			}
			a.Failed(ctx)
		}
		_, err := g.Begin(ctx, "alice@example.org", false)
		if d := retryOf(t, err); d <= 0 || d > 4*f.unit {
			t.Fatalf("retry after %v, want within (0, %v]", d, 4*f.unit)
		}
		// Another account is not affected, nor is the same account
		// refused for ever.
		if _, err := g.Begin(ctx, "bob@example.org", false); err != nil {
			t.Fatalf("another account: %v", err)
		}
		f.clock.advance(4*f.unit + f.unit/4)
		if _, err := g.Begin(ctx, "alice@example.org", false); err != nil {
			t.Fatalf("after the refill: %v", err)
		}
		if got := testutil.ToFloat64(l.refused.WithLabelValues("login")); got != 1 {
			t.Fatalf("fris_ratelimit_refused_total{flow=login} = %v, want 1", got)
		}
	})
}

func TestAddressKey(t *testing.T) {
	eachBackend(t, func(t *testing.T, f fixture) {
		l := newLimiter(f.b, nil, nil)
		g := l.Guard("basic", Policy{}, Policy{Limit: Limit{Events: 1, Per: 10 * f.unit, Burst: 2}})
		a, b := from("192.0.2.1"), from("2001:db8::1")
		for _, acct := range []string{"x", "y"} {
			at, err := g.Begin(a, acct, false)
			if err != nil {
				t.Fatalf("attempt on %s: %v", acct, err)
			}
			at.Failed(a)
		}
		if _, err := g.Begin(a, "z", false); err == nil {
			t.Fatal("a third account from an address that tried twice was admitted")
		}
		if _, err := g.Begin(b, "x", false); err != nil {
			t.Fatalf("another address: %v", err)
		}
		// Without a known address there is nothing to key on.
		if _, err := g.Begin(context.Background(), "x", false); err != nil {
			t.Fatalf("no address: %v", err)
		}
	})
}

// Every attempt spends the address's budget, so a flood is cut off at the
// burst even before its first failures are recorded.
func TestAddressSpentByAttempts(t *testing.T) {
	eachBackend(t, func(t *testing.T, f fixture) {
		g := newLimiter(f.b, nil, nil).Guard("login", Policy{}, Policy{Limit: Limit{Events: 3, Per: 10 * f.unit, Burst: 3}})
		ctx := from("198.51.100.4")
		for i := range 3 {
			if _, err := g.Begin(ctx, "a@example.org", false); err != nil {
				t.Fatalf("attempt %d: %v", i+1, err)
			}
		}
		_, err := g.Begin(ctx, "a@example.org", false)
		retryOf(t, err)
	})
}

// A successful attempt gives its address's attempt back: correct sign-ins
// from one address never run out.
func TestSuccessesGiveTheAddressBack(t *testing.T) {
	eachBackend(t, func(t *testing.T, f fixture) {
		g := newLimiter(f.b, nil, nil).Guard("login", Policy{}, Policy{Limit: Limit{Events: 3, Per: 100 * f.unit, Burst: 3}})
		ctx := from("198.51.100.5")
		for i := range 20 {
			a, err := g.Begin(ctx, "a@example.org", false)
			if err != nil {
				t.Fatalf("successful attempt %d: %v", i+1, err)
			}
			a.Succeeded(ctx)
		}
		// Failures are not given back.
		for range 3 {
			a, err := g.Begin(ctx, "a@example.org", false)
			if err != nil {
				t.Fatal(err)
			}
			a.Failed(ctx)
		}
		_, err := g.Begin(ctx, "a@example.org", false)
		retryOf(t, err)
	})
}

func TestBackoffGrows(t *testing.T) {
	eachBackend(t, func(t *testing.T, f fixture) {
		l := newLimiter(f.b, nil, nil)
		// A generous base rate: what refuses here is the back-off.
		p := Policy{Limit: Limit{Events: 100, Per: f.unit, Burst: 2}, Backoff: f.unit, MaxBackoff: 4 * f.unit, Window: 100 * f.unit}
		g := l.Guard("code", p, Policy{})
		ctx := context.Background()
		for range 2 {
			a, err := g.Begin(ctx, "bank@example.org", false)
			if err != nil {
				t.Fatal(err)
			}
			a.Failed(ctx)
		}
		f.clock.advance(f.unit / 40) // the base limit refills
		a, err := g.Begin(ctx, "bank@example.org", false)
		if err != nil {
			t.Fatalf("within the free failures: %v", err)
		}
		var last time.Duration
		for i, want := range []time.Duration{f.unit, 2 * f.unit, 4 * f.unit, 4 * f.unit} {
			a.Failed(ctx)
			_, err := g.Begin(ctx, "bank@example.org", false)
			d := retryOf(t, err)
			if d > want || d < want-f.unit/2 {
				t.Fatalf("failure %d beyond the burst: retry after %v, want about %v", i+1, d, want)
			}
			if d < last-f.unit/2 {
				t.Fatalf("back-off shrank: %v after %v", d, last)
			}
			last = d
			f.clock.advance(d + f.unit/5)
			if a, err = g.Begin(ctx, "bank@example.org", false); err != nil {
				t.Fatalf("after the back-off of %v: %v", d, err)
			}
		}
	})
}

func TestSpend(t *testing.T) {
	eachBackend(t, func(t *testing.T, f fixture) {
		l := newLimiter(f.b, nil, nil)
		mails := l.Guard("mail", Policy{Limit: Limit{Events: 3, Per: 30 * f.unit, Burst: 3}}, Policy{Limit: Limit{Events: 10, Per: f.unit, Burst: 10}})
		ctx := from("192.0.2.7")
		for i := 0; i < 3; i++ {
			if err := mails.Spend(ctx, "bank@example.org"); err != nil {
				t.Fatalf("mail %d: %v", i+1, err)
			}
		}
		if d := retryOf(t, mails.Spend(ctx, "bank@example.org")); d <= 0 {
			t.Fatalf("fourth mail: retry after %v", d)
		}
		if err := mails.Spend(ctx, "other@example.org"); err != nil {
			t.Fatalf("another address's first mail: %v", err)
		}
	})
}

func TestPolicy(t *testing.T) {
	p := Policy{Limit: Limit{Events: 1, Per: time.Minute, Burst: 5}, Backoff: time.Second, MaxBackoff: 10 * time.Second, Window: time.Hour}
	for n, want := range map[int64]time.Duration{1: 0, 5: 0, 6: time.Second, 7: 2 * time.Second, 9: 8 * time.Second, 10: 10 * time.Second, 1000: 10 * time.Second} {
		if got := p.backoff(n); got != want {
			t.Errorf("backoff(%d) = %v, want %v", n, got, want)
		}
	}
	if err := p.Validate("x"); err != nil {
		t.Fatal(err)
	}
	if err := (Policy{Limit: p.Limit, Backoff: time.Minute, MaxBackoff: time.Second, Window: time.Hour}).Validate("x"); err == nil {
		t.Fatal("a maximum below the back-off was accepted")
	}
	if !(Policy{}).Off() {
		t.Fatal("the zero policy limits")
	}
}

func TestNewPicksTheStoresBackend(t *testing.T) {
	bolt, err := kv.OpenBolt(t.TempDir()+"/x.db", kv.BoltOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer bolt.Close()
	if _, ok := New(bolt, nil, nil).b.(*memBackend); !ok {
		t.Fatal("the embedded store did not get the in-process backend")
	}
	rc := testredis.Client(t)
	r := kv.NewRedis(rc, kv.RedisOptions{Prefix: testredis.Prefix(t)})
	defer r.Close()
	if _, ok := New(r, nil, nil).b.(*redisBackend); !ok {
		t.Fatal("the Redis store did not get the Redis backend")
	}
}

// The in-process backend forgets buckets and counters only once they are
// full (or expired) again, however many other keys pass.
func TestMemorySweepKeepsLiveState(t *testing.T) {
	c := &clock{t: time.Unix(1_700_000_000, 0), fake: true}
	b := newMemBackend(c.now)
	g := newLimiter(b, nil, nil).Guard("login", Policy{Limit: Limit{Events: 1, Per: time.Hour, Burst: 1}, Backoff: time.Minute, MaxBackoff: time.Hour, Window: 3 * time.Hour}, Policy{})
	ctx := context.Background()
	fail := func(account string) {
		if a, err := g.Begin(ctx, account, false); err == nil {
			a.Failed(ctx)
		}
	}
	fail("locked@example.org") // the burst, and then a back-off lock
	for i := range 5000 {
		fail("other" + strconv.Itoa(i) + "@example.org")
	}
	c.advance(30 * time.Second)
	if _, err := g.Begin(ctx, "locked@example.org", false); err == nil {
		t.Fatal("the sweep forgot a locked account")
	}
	c.advance(2 * time.Hour)
	for i := range 5000 {
		fail("later" + strconv.Itoa(i) + "@example.org")
	}
	b.mu.Lock()
	n := len(b.buckets)
	b.mu.Unlock()
	if n > 5000+2048 {
		t.Fatalf("%d buckets kept: full ones are not swept", n)
	}
}
