package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"fris.dev/pkg/rpcerr"
)

// find is the listed throttle of flow and kind, nil when none is.
func find(ts []Throttle, flow, kind string) *Throttle {
	for i := range ts {
		if ts[i].Flow == flow && ts[i].Kind == kind {
			return &ts[i]
		}
	}
	return nil
}

// An account slowed from one address is listed with its account, address
// and counts until it is lifted; lifting admits the next attempt at once.
func TestThrottlesListAndLift(t *testing.T) {
	eachBackend(t, func(t *testing.T, f fixture) {
		l := newLimiter(f.b, nil, nil)
		g := l.Guard("login", Policy{Limit: Limit{Events: 1, Per: 100 * f.unit, Burst: 3}, Backoff: 20 * f.unit, MaxBackoff: 40 * f.unit, Window: 100 * f.unit},
			Policy{Limit: Limit{Events: 100, Per: f.unit, Burst: 100}})
		ctx := context.Background()
		if ts, err := l.Throttled(ctx, 0); err != nil || len(ts) != 0 {
			t.Fatalf("before any failure: %v, %v", ts, err)
		}
		stranger := from("203.0.113.9")
		for i := range 2 {
			if !fail(stranger, g, "alice@example.org", false) {
				t.Fatalf("failure %d refused", i+1)
			}
		}
		if ts, _ := l.Throttled(ctx, 0); len(ts) != 0 {
			t.Fatalf("listed while within its budget: %+v", ts)
		}
		fail(stranger, g, "alice@example.org", false) // the third empties the budget
		start := time.Now()
		if fail(stranger, g, "alice@example.org", false) {
			t.Fatal("the attempt beyond the burst was admitted")
		}
		ts, err := l.Throttled(ctx, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(ts) != 1 {
			t.Fatalf("listed %+v, want the pair only", ts)
		}
		p := ts[0]
		if p.Kind != "pair" || p.Flow != "login" || p.Account != "alice@example.org" || p.Addr != "203.0.113.9" ||
			p.Failures != 3 || p.Refused != 1 || !ValidID(p.ID) {
			t.Fatalf("listed %+v", p)
		}
		now := f.clock.now()
		if !f.clock.fake {
			now = start
		}
		if until := p.Until.Sub(now); until <= 0 || until > 101*f.unit {
			t.Fatalf("until %v from now, want within the refill", until)
		}
		lifted, found, err := l.Lift(ctx, p.ID)
		if err != nil || !found || lifted.Account != "alice@example.org" {
			t.Fatalf("Lift = %+v, %v, %v", lifted, found, err)
		}
		if ts, _ := l.Throttled(ctx, 0); len(ts) != 0 {
			t.Fatalf("still listed after the lift: %+v", ts)
		}
		// The whole budget is back, not one attempt.
		for i := range 3 {
			if !fail(stranger, g, "alice@example.org", false) {
				t.Fatalf("failure %d after the lift refused", i+1)
			}
		}
		if _, found, err := l.Lift(ctx, p.ID); err != nil || !found {
			t.Fatalf("second lift: %v, %v", found, err)
		}
		if _, found, err := l.Lift(ctx, p.ID); err != nil || found {
			t.Fatalf("a lift of nothing: found %v, %v", found, err)
		}
	})
}

// The ceiling (many addresses, one account) is listed under the account
// alone; a spending key under its account; an address under itself.
func TestThrottlesKinds(t *testing.T) {
	eachBackend(t, func(t *testing.T, f fixture) {
		l := newLimiter(f.b, nil, nil)
		wide := Policy{Limit: Limit{Events: 100, Per: f.unit, Burst: 100}}
		g := l.Guard("login", wide, Policy{Limit: Limit{Events: 1, Per: 100 * f.unit, Burst: 4}}).
			WithCeiling(Policy{Limit: Limit{Events: 1, Per: 100 * f.unit, Burst: 3}})
		for i := range 3 {
			if !fail(from(fmt.Sprintf("192.0.2.%d", i+1)), g, "bob@example.org", false) {
				t.Fatalf("failure %d refused", i+1)
			}
		}
		mails := l.Guard("mail", Policy{Limit: Limit{Events: 1, Per: 100 * f.unit, Burst: 1}}, Policy{})
		ctx := from("198.51.100.7")
		if err := mails.Spend(ctx, "bank@example.org"); err != nil {
			t.Fatal(err)
		}
		retryOf(t, mails.Spend(ctx, "bank@example.org"))
		// An address out of its own budget.
		for i := range 4 {
			fail(from("198.51.100.99"), g, fmt.Sprintf("x%d@example.org", i), false)
		}
		ts, err := l.Throttled(context.Background(), 0)
		if err != nil {
			t.Fatal(err)
		}
		if c := find(ts, "login", "ceiling"); c == nil || c.Account != "bob@example.org" || c.Addr != "" || c.Failures != 3 {
			t.Fatalf("ceiling: %+v in %+v", c, ts)
		}
		if m := find(ts, "mail", "account"); m == nil || m.Account != "bank@example.org" || m.Refused != 1 {
			t.Fatalf("spending: %+v in %+v", m, ts)
		}
		if a := find(ts, "login", "addr"); a == nil || a.Addr != "198.51.100.99" || a.Account != "" || a.Failures != 4 {
			t.Fatalf("address: %+v in %+v", a, ts)
		}
		if len(ts) != 3 {
			t.Fatalf("listed %d, want 3: %+v", len(ts), ts)
		}
		// Lifting the ceiling admits the account from a new address.
		c := find(ts, "login", "ceiling")
		if _, err := g.Begin(from("192.0.2.50"), "bob@example.org", false); err == nil {
			t.Fatal("the ceiling admitted a fourth address")
		}
		if _, found, err := l.Lift(context.Background(), c.ID); err != nil || !found {
			t.Fatalf("lift: %v %v", found, err)
		}
		if _, err := g.Begin(from("192.0.2.50"), "bob@example.org", false); err != nil {
			t.Fatalf("after the lift: %v", err)
		}
	})
}

// A throttle leaves the listing when it ends.
func TestThrottlesEnd(t *testing.T) {
	eachBackend(t, func(t *testing.T, f fixture) {
		l := newLimiter(f.b, nil, nil)
		g := l.Guard("code", Policy{Limit: Limit{Events: 1, Per: 2 * f.unit, Burst: 1}}, Policy{})
		ctx := context.Background()
		fail(ctx, g, "bank@example.org", false)
		if ts, _ := l.Throttled(ctx, 0); len(ts) != 1 {
			t.Fatalf("listed %+v, want one", ts)
		}
		f.clock.advance(2*f.unit + f.unit/2)
		if ts, _ := l.Throttled(ctx, 0); len(ts) != 0 {
			t.Fatalf("still listed after it ended: %+v", ts)
		}
	})
}

// However many keys are slowed, the store keeps maxListed of them (the
// longest-running) and a listing returns at most MaxList, longest first.
func TestThrottlesBounded(t *testing.T) {
	eachBackend(t, func(t *testing.T, f fixture) {
		ctx := context.Background()
		n := maxListed + 20
		for i := range n {
			id := fmt.Sprintf("login:ad:%024x", i)
			if err := f.b.record(ctx, Throttle{ID: id, Flow: "login", Kind: "addr", Addr: "x"}, time.Duration(i+1)*time.Minute, false); err != nil {
				t.Fatal(err)
			}
		}
		ts, err := newLimiter(f.b, nil, nil).Throttled(ctx, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(ts) != MaxList {
			t.Fatalf("listed %d, want %d", len(ts), MaxList)
		}
		if want := fmt.Sprintf("login:ad:%024x", n-1); ts[0].ID != want {
			t.Fatalf("first %s, want the longest-running %s", ts[0].ID, want)
		}
		for i := 1; i < len(ts); i++ {
			if ts[i].Until.After(ts[i-1].Until) {
				t.Fatalf("not longest first at %d", i)
			}
		}
		switch b := f.b.(type) {
		case *memBackend:
			if len(b.listed) > maxListed {
				t.Fatalf("%d kept", len(b.listed))
			}
		case *redisBackend:
			if c, err := b.c.ZCard(ctx, b.indexKey()).Result(); err != nil || c > maxListed {
				t.Fatalf("%d kept (%v)", c, err)
			}
		}
	})
}

func TestLiftRefusesMalformedIDs(t *testing.T) {
	l := newLimiter(newMemBackend(time.Now), nil, nil)
	for _, id := range []string{"", "login", "login:kn:0123456789abcdef01234567", "login:dv:0123456789abcdef01234567",
		"login:pa:0123456789abcdef0123456", "Login:pa:0123456789abcdef01234567", "login:pa:0123456789abcdef01234567:f", "*"} {
		if _, _, err := l.Lift(context.Background(), id); !errors.Is(err, rpcerr.ErrInvalid) {
			t.Errorf("Lift(%q) = %v, want ErrInvalid", id, err)
		}
	}
	if !ValidID("client_secret:ce:0123456789abcdef01234567") {
		t.Fatal("a valid id refused")
	}
}

func TestShownIsBoundedUTF8(t *testing.T) {
	for _, s := range []string{strings.Repeat("ä", 200), strings.Repeat("a", 127) + "ä", "\xff\xfe", "ok"} {
		got := shown(s)
		if !utf8.ValidString(got) || len(got) > maxShown+len("…") {
			t.Errorf("shown(%q) = %q", s, got)
		}
	}
}
