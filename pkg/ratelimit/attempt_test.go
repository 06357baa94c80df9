package ratelimit

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"golang.org/x/time/rate"
)

// fail makes one failed attempt and reports whether it was admitted.
func fail(ctx context.Context, g *Guard, account string, known bool) bool {
	a, err := g.Begin(ctx, account, known)
	if err != nil {
		return false
	}
	a.Failed(ctx)
	return true
}

// A stranger's failures lock only the stranger's own address out of the
// account: the holder from another address is admitted.
func TestStrangersDoNotLockTheHolder(t *testing.T) {
	eachBackend(t, func(t *testing.T, f fixture) {
		g := newLimiter(f.b, nil, nil).Guard("login", Policy{Limit: Limit{Events: 1, Per: 100 * f.unit, Burst: 3}, Backoff: f.unit, MaxBackoff: 10 * f.unit, Window: 100 * f.unit},
			Policy{Limit: Limit{Events: 100, Per: f.unit, Burst: 100}})
		stranger, holder := from("203.0.113.9"), from("198.51.100.1")
		for i := range 3 {
			if !fail(stranger, g, "alice@example.org", false) {
				t.Fatalf("the stranger's failure %d was refused within the burst", i+1)
			}
		}
		for i := range 5 {
			if fail(stranger, g, "alice@example.org", false) {
				t.Fatalf("the stranger's attempt %d beyond the burst was admitted", i+4)
			}
		}
		for i := range 10 {
			a, err := g.Begin(holder, "alice@example.org", false)
			if err != nil {
				t.Fatalf("the holder's sign-in %d from its own address: %v", i+1, err)
			}
			a.Succeeded(holder)
		}
	})
}

// The ceiling bounds what all addresses together may fail for one
// account; an address that succeeded before, and a caller that recognised
// the holder (known), skip it.
func TestCeiling(t *testing.T) {
	eachBackend(t, func(t *testing.T, f fixture) {
		reg := newLimiter(f.b, nil, nil)
		g := reg.Guard("login", Policy{Limit: Limit{Events: 1, Per: 100 * f.unit, Burst: 3}}, Policy{Limit: Limit{Events: 100, Per: f.unit, Burst: 100}}).
			WithCeiling(Policy{Limit: Limit{Events: 1, Per: 100 * f.unit, Burst: 5}})
		home := from("198.51.100.1")
		a, err := g.Begin(home, "alice@example.org", false)
		if err != nil {
			t.Fatal(err)
		}
		a.Succeeded(home) // the holder's address is known from now on
		admitted := 0
		for i := range 10 {
			if fail(from(fmt.Sprintf("203.0.113.%d", i+1)), g, "alice@example.org", false) {
				admitted++
			}
		}
		if admitted != 5 {
			t.Fatalf("%d failures from 10 addresses admitted, want the ceiling's 5", admitted)
		}
		_, err = g.Begin(from("203.0.113.99"), "alice@example.org", false)
		retryOf(t, err)
		// The holder: from the known address, and with a known device
		// from a new one.
		if a, err := g.Begin(home, "alice@example.org", false); err != nil {
			t.Fatalf("the known address under the ceiling: %v", err)
		} else {
			a.Succeeded(home)
		}
		newPlace := from("192.0.2.77")
		a, err = g.Begin(newPlace, "alice@example.org", true)
		if err != nil {
			t.Fatalf("a known device from a new address under the ceiling: %v", err)
		}
		a.Succeeded(newPlace)
		// Another account has its own ceiling.
		if !fail(from("203.0.113.1"), g, "bob@example.org", false) {
			t.Fatal("another account was refused")
		}
	})
}

// A key that refuses gives back what the attempt took from the others:
// refusals by the ceiling cost the address and the pair nothing.
func TestRefusalGivesBack(t *testing.T) {
	eachBackend(t, func(t *testing.T, f fixture) {
		g := newLimiter(f.b, nil, nil).Guard("login", Policy{Limit: Limit{Events: 1, Per: 100 * f.unit, Burst: 2}}, Policy{Limit: Limit{Events: 1, Per: 100 * f.unit, Burst: 2}}).
			WithCeiling(Policy{Limit: Limit{Events: 1, Per: 100 * f.unit, Burst: 1}})
		if !fail(from("203.0.113.1"), g, "alice@example.org", false) {
			t.Fatal("the first failure was refused")
		}
		ctx := from("198.51.100.2")
		for range 5 {
			if fail(ctx, g, "alice@example.org", false) {
				t.Fatal("admitted beyond the ceiling")
			}
		}
		for i := range 2 {
			if !fail(ctx, g, "alice@example.org", true) {
				t.Fatalf("attempt %d of the pair's 2: the refusals spent its budget", i+1)
			}
		}
	})
}

// Concurrent attempts reserve before their check: however many run at
// once, no more are admitted than the budget, from many addresses (the
// ceiling) or from one (the pair).
func TestConcurrentAttemptsStayWithinTheBudget(t *testing.T) {
	eachBackend(t, func(t *testing.T, f fixture) {
		g := newLimiter(f.b, nil, nil).Guard("login", Policy{Limit: Limit{Events: 1, Per: 1000 * f.unit, Burst: 5}}, Policy{Limit: Limit{Events: 1000, Per: f.unit, Burst: 1000}}).
			WithCeiling(Policy{Limit: Limit{Events: 1, Per: 1000 * f.unit, Burst: 10}})
		run := func(addr func(i int) string, account string) int64 {
			var admitted atomic.Int64
			var wg sync.WaitGroup
			start := make(chan struct{})
			for i := range 50 {
				wg.Go(func() {
					<-start
					ctx := from(addr(i))
					if a, err := g.Begin(ctx, account, false); err == nil {
						admitted.Add(1)
						a.Failed(ctx) // the check ran and failed
					}
				})
			}
			close(start)
			wg.Wait()
			return admitted.Load()
		}
		if n := run(func(i int) string { return fmt.Sprintf("203.0.113.%d", i+1) }, "alice@example.org"); n != 10 {
			t.Fatalf("50 concurrent attempts from 50 addresses: %d admitted, want the ceiling's 10", n)
		}
		if n := run(func(int) string { return "198.51.100.3" }, "bob@example.org"); n != 5 {
			t.Fatalf("50 concurrent attempts from one address: %d admitted, want the pair's 5", n)
		}
	})
}

func TestIPv6SharesItsSlash64(t *testing.T) {
	eachBackend(t, func(t *testing.T, f fixture) {
		g := newLimiter(f.b, nil, nil).Guard("basic", Policy{}, Policy{Limit: Limit{Events: 1, Per: 100 * f.unit, Burst: 3}})
		for i := range 3 {
			if !fail(from(fmt.Sprintf("2001:db8:0:1::%x", i+1)), g, "x", false) {
				t.Fatalf("failure %d refused", i+1)
			}
		}
		if fail(from("2001:db8:0:1:ffff::1"), g, "x", false) {
			t.Fatal("another address of the same /64 got a budget of its own")
		}
		if !fail(from("2001:db8:0:2::1"), g, "x", false) {
			t.Fatal("another /64 was refused")
		}
	})
}

func TestKnownDevice(t *testing.T) {
	eachBackend(t, func(t *testing.T, f fixture) {
		g := newLimiter(f.b, nil, nil).Guard("login", Policy{}, Policy{})
		ctx := context.Background()
		tok, err := g.RememberDevice(ctx, "alice@example.org", "")
		if err != nil || len(tok) < 43 {
			t.Fatalf("RememberDevice = %q, %v; want a token of 256 bits", tok, err)
		}
		for _, c := range []struct {
			account, token string
			want           bool
		}{{"alice@example.org", tok, true}, {"bob@example.org", tok, false}, {"alice@example.org", tok[:42] + "x", false}, {"alice@example.org", "", false}} {
			if got, err := g.KnownDevice(ctx, c.account, c.token); err != nil || got != c.want {
				t.Errorf("KnownDevice(%s, %.8s…) = %v, %v; want %v", c.account, c.token, got, err, c.want)
			}
		}
		again, err := g.RememberDevice(ctx, "alice@example.org", tok)
		if err != nil || again != tok {
			t.Fatalf("a known device got a new token: %v", err)
		}
		other, err := g.RememberDevice(ctx, "bob@example.org", tok)
		if err != nil || other == tok {
			t.Fatalf("another account's sign-in reused the token: %v", err)
		}
	})
}

// Lines about refused attempts are capped; the rest are counted.
func TestRefusalLogIsCapped(t *testing.T) {
	var buf bytes.Buffer
	var mu sync.Mutex
	log := slog.New(slog.NewTextHandler(&lockedWriter{w: &buf, mu: &mu}, nil))
	c := &clock{t: time.Unix(1_700_000_000, 0), fake: true}
	l := newLimiter(newMemBackend(c.now), nil, log)
	l.logs = rate.NewLimiter(0, 3) // three lines, then none
	g := l.Guard("login", Policy{Limit: Limit{Events: 1, Per: time.Hour, Burst: 1}}, Policy{})
	ctx := from("203.0.113.5")
	fail(ctx, g, "a@example.org", false)
	for range 100 {
		fail(ctx, g, "a@example.org", false)
	}
	mu.Lock()
	lines := strings.Count(buf.String(), "attempt refused by an abuse limit")
	mu.Unlock()
	if lines != 3 {
		t.Fatalf("%d refusal lines, want the cap's 3", lines)
	}
	if got := testutil.ToFloat64(l.suppressed); got != 97 {
		t.Fatalf("fris_ratelimit_log_suppressed_total = %v, want 97", got)
	}
	if got := testutil.ToFloat64(l.refused.WithLabelValues("login")); got != 100 {
		t.Fatalf("refusals counted: %v, want 100", got)
	}
}

type lockedWriter struct {
	w  *bytes.Buffer
	mu *sync.Mutex
}

func (w *lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.w.Write(p)
}
