// Package ratelimit bounds how often one account or one client address may
// fail a credential check (and how often a costly action such as an
// activation mail may happen), with a back-off that grows with every
// further failure. The state lives in Redis when the service's store is
// Redis, so every replica shares it (github.com/go-redis/redis_rate, GCRA),
// and in process on the embedded store (golang.org/x/time/rate).
//
// Only failures spend a budget: a user who signs in correctly is never
// slowed by it, however often. An address's attempt is spent when it
// starts (Check) and given back when it succeeds (Succeeded), so a flood
// from one address is cut off at its burst even while its first attempts
// are still being checked; back-offs grow with the failures. A refusal is the same whether or not the
// account exists, and costs no password hash.
package ratelimit

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"fris.dev/pkg/identity"
	"fris.dev/pkg/kv"
	"fris.dev/pkg/rpcerr"
)

// Policy is what one key (an account, or a client address) may fail.
type Policy struct {
	// Limit admits failures: Burst at once, then Events per Per.
	Limit Limit
	// Backoff is the lock after a failure once Limit.Burst failures came
	// within Window of each other; it doubles with each further failure,
	// up to MaxBackoff. Zero: no back-off beyond Limit.
	Backoff    time.Duration
	MaxBackoff time.Duration
	// Window is how long failures are remembered after the last one.
	Window time.Duration
}

// Off reports a policy that limits nothing.
func (p Policy) Off() bool { return !p.Limit.valid() }

// Validate reports a policy that cannot work.
func (p Policy) Validate(name string) error {
	if p.Off() {
		return nil
	}
	if p.Backoff < 0 || p.MaxBackoff < p.Backoff || (p.Backoff > 0 && p.Window <= 0) {
		return fmt.Errorf("%s: back-off must be positive, at most its maximum, with a positive window", name)
	}
	return nil
}

// backoff is the lock after the n-th failure within the window.
func (p Policy) backoff(n int64) time.Duration {
	over := n - int64(p.Limit.Burst)
	if p.Backoff <= 0 || over <= 0 {
		return 0
	}
	d := p.Backoff
	for i := int64(1); i < over && d < p.MaxBackoff; i++ {
		d *= 2
	}
	return min(d, p.MaxBackoff)
}

// Limiter makes a service's guards; they share its state and its metric.
type Limiter struct {
	b       backend
	refused *prometheus.CounterVec
	log     *slog.Logger
}

// redisStore is a store that can lend its Redis client (kv.Redis).
type redisStore interface {
	RedisClient() (redis.UniversalClient, string)
}

// New returns the limiter of a service whose store is store: shared
// through Redis when it is Redis, in process otherwise. The refusals are
// counted in reg as fris_ratelimit_refused_total{flow}.
func New(store kv.Store, reg prometheus.Registerer, log *slog.Logger) *Limiter {
	var b backend
	if rs, ok := store.(redisStore); ok {
		c, prefix := rs.RedisClient()
		b = newRedisBackend(c, prefix+"rl:")
	} else {
		b = newMemBackend(time.Now)
	}
	return newLimiter(b, reg, log)
}

func newLimiter(b backend, reg prometheus.Registerer, log *slog.Logger) *Limiter {
	l := &Limiter{b: b, log: log, refused: prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "fris_ratelimit_refused_total",
		Help: "Attempts refused by an abuse limit (429), by flow.",
	}, []string{"flow"})}
	if log == nil {
		l.log = slog.New(slog.DiscardHandler)
	}
	if reg != nil {
		reg.MustRegister(l.refused)
	}
	return l
}

// Guard limits one flow (a sign-in form, a secret check, a mail) per
// account and per client address. A nil Guard limits nothing.
type Guard struct {
	l             *Limiter
	flow          string
	account, addr Policy
}

// Guard returns the guard of a flow; a policy that is Off leaves its key
// unlimited.
func (l *Limiter) Guard(flow string, account, addr Policy) *Guard {
	l.refused.WithLabelValues(flow) // listed at 0 from the start
	return &Guard{l: l, flow: flow, account: account, addr: addr}
}

// key is one limited identity. Accounts are hashed: they are whatever a
// caller typed, and the key must stay short and free of odd bytes.
type key struct {
	kind string // "account" or "addr"
	id   string
	p    Policy
}

func (g *Guard) keys(ctx context.Context, account string) []key {
	var ks []key
	if g == nil {
		return nil
	}
	if account != "" && !g.account.Off() {
		ks = append(ks, key{"account", account, g.account})
	}
	if addr := identity.Incoming(ctx, identity.KeyClientAddr); addr != "" && !g.addr.Off() {
		ks = append(ks, key{"addr", addr, g.addr})
	}
	return ks
}

func (g *Guard) name(k key, part string) string {
	sum := sha256.Sum256([]byte(k.id))
	return g.flow + ":" + k.kind[:2] + ":" + hex.EncodeToString(sum[:12]) + ":" + part
}

// lock is the back-off lock's limit: one event per d.
func lock(d time.Duration) Limit { return Limit{Events: 1, Per: d, Burst: 1} }

// Check refuses an attempt on account (may be "") from the caller's
// address while either has failed too often (or the address tried too
// often), before anything costly is done: an error of rpcerr.Throttled.
// It spends one attempt of the address's budget, none of the account's;
// call Succeeded when the attempt succeeds, Failed when it fails.
func (g *Guard) Check(ctx context.Context, account string) error {
	var wait time.Duration
	var which string
	for _, k := range g.keys(ctx, account) {
		spend := g.l.b.peek
		if k.kind == "addr" {
			spend = g.l.b.take
		}
		d, err := spend(ctx, g.name(k, "f"), k.p.Limit)
		if err != nil {
			return err
		}
		if k.p.Backoff > 0 {
			// The lock's own limit does not matter to a peek: it holds
			// until the time it was set for.
			ld, err := g.l.b.peek(ctx, g.name(k, "b"), lock(k.p.Backoff))
			if err != nil {
				return err
			}
			d = max(d, ld)
		}
		if d > wait {
			wait, which = d, k.kind
		}
	}
	if wait > 0 {
		return g.refuse(ctx, account, which, wait)
	}
	return nil
}

func (g *Guard) refuse(ctx context.Context, account, which string, wait time.Duration) error {
	g.l.refused.WithLabelValues(g.flow).Inc()
	g.l.log.WarnContext(ctx, "attempt refused by an abuse limit", "flow", g.flow, "limited", which,
		"account", clip(account), "client_addr", identity.Incoming(ctx, identity.KeyClientAddr), "retry_after", wait.Round(time.Millisecond))
	return rpcerr.Throttled(wait)
}

// Failed records a failed attempt on account from the caller's address.
// It never fails the request: an error is logged (the attempt failed
// anyway).
func (g *Guard) Failed(ctx context.Context, account string) {
	for _, k := range g.keys(ctx, account) {
		if err := g.fail(ctx, k); err != nil {
			g.l.log.WarnContext(ctx, "recording a failed attempt", "flow", g.flow, "err", err)
		}
	}
}

func (g *Guard) fail(ctx context.Context, k key) error {
	// The address spent its attempt in Check already.
	if k.kind != "addr" {
		if _, err := g.l.b.take(ctx, g.name(k, "f"), k.p.Limit); err != nil {
			return err
		}
	}
	if k.p.Backoff <= 0 {
		return nil
	}
	n, err := g.l.b.count(ctx, g.name(k, "n"), k.p.Window)
	if err != nil {
		return err
	}
	if d := k.p.backoff(n); d > 0 {
		_, err = g.l.b.take(ctx, g.name(k, "b"), lock(d))
	}
	return err
}

// Succeeded gives the caller's address back the attempt Check spent: only
// failures stay counted against an address, and a busy address (many
// users behind one proxy) is not refused for signing in correctly. The
// attempt was spent meanwhile, so a flood is still cut off at the burst
// while its first attempts are checked.
func (g *Guard) Succeeded(ctx context.Context) {
	for _, k := range g.keys(ctx, "") {
		if err := g.l.b.refund(ctx, g.name(k, "f"), k.p.Limit); err != nil {
			g.l.log.WarnContext(ctx, "returning a successful attempt", "flow", g.flow, "err", err)
		}
	}
}

// Spend takes one event (a mail sent) from account's and the address's
// budgets, or refuses with rpcerr.Throttled when either is used up.
func (g *Guard) Spend(ctx context.Context, account string) error {
	for _, k := range g.keys(ctx, account) {
		d, err := g.l.b.take(ctx, g.name(k, "f"), k.p.Limit)
		if err != nil {
			return err
		}
		if d > 0 {
			return g.refuse(ctx, account, k.kind, d)
		}
	}
	return nil
}

// IsThrottled reports an error of a refusal.
func IsThrottled(err error) bool {
	_, ok := rpcerr.RetryAfter(err)
	return ok
}

func clip(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}
