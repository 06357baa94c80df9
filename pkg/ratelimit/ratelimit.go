// Package ratelimit bounds how often one account or one client address may
// fail a credential check (and how often a costly action such as an
// activation mail may happen), with a back-off that grows with every
// further failure. The state lives in Redis when the service's store is
// Redis, so every replica shares it (github.com/go-redis/redis_rate, GCRA),
// and in process on the embedded store (golang.org/x/time/rate).
//
// The principle is to slow the attacker and never lock out the holder. An
// attempt (Guard.Begin) reserves one event from each of its keys before
// the costly check: the pair of account and client address (so a
// stranger's failures lock only the stranger's own address out of that
// account), the client address, and a slow per-account ceiling far above
// what one address may spend, which a holder coming from an address or
// device that succeeded before skips. A success gives every reservation
// back, so only failures stay counted; back-offs grow with the failures.
// Reserving before the check means concurrent guesses can never exceed a
// budget, on any backend: each take is atomic on its own key. A refusal is
// the same whether or not the account exists, and costs no password hash.
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
	"golang.org/x/time/rate"

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

// Limiter makes a service's guards; they share its state, its metrics and
// its budget of log lines.
type Limiter struct {
	b          backend
	refused    *prometheus.CounterVec
	suppressed prometheus.Counter
	log        *slog.Logger
	// logs caps the lines refused and failed attempts write (and the
	// audit events of refusals, AllowLog): they are cheap to cause, and
	// a few clients would otherwise write gigabytes an hour.
	logs *rate.Limiter
}

// Log lines about refused and failed attempts: this many a second, in
// bursts of logBurst; the rest are counted in
// fris_ratelimit_log_suppressed_total.
const (
	logRate  = 5
	logBurst = 50
)

// KnownFor is how long an address or device that passed a credential check
// skips the account ceiling: a month, so a connector or a user who comes
// back monthly is still known after the verified-secret cache expired.
const KnownFor = 30 * 24 * time.Hour

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
	}, []string{"flow"}), suppressed: prometheus.NewCounter(prometheus.CounterOpts{
		Name: "fris_ratelimit_log_suppressed_total",
		Help: "Log lines and audit events of refused or failed attempts not written because their rate cap was reached.",
	}), logs: rate.NewLimiter(logRate, logBurst)}
	if log == nil {
		l.log = slog.New(slog.DiscardHandler)
	}
	if reg != nil {
		reg.MustRegister(l.refused, l.suppressed)
	}
	return l
}

// AllowLog reports whether one more line about a refused or failed attempt
// may be written now; when not, it counts the line as suppressed. The
// service's audit log asks it before recording a refusal.
func (l *Limiter) AllowLog() bool {
	if l == nil {
		return true
	}
	if l.logs.Allow() {
		return true
	}
	l.suppressed.Inc()
	return false
}

func (l *Limiter) warn(ctx context.Context, msg string, args ...any) {
	if l.AllowLog() {
		l.log.WarnContext(ctx, msg, args...)
	}
}

// Guard limits one flow (a sign-in form, a secret check, a mail) per
// account and client address, per address, and per account overall. A nil
// Guard limits nothing.
type Guard struct {
	l             *Limiter
	flow          string
	account, addr Policy
	ceiling       Policy
}

// Guard returns the guard of a flow: account is the policy of each pair of
// account and client address (of the account alone for a caller without
// one, and for Spend), addr the policy of each client address. A policy
// that is Off leaves its key unlimited.
func (l *Limiter) Guard(flow string, account, addr Policy) *Guard {
	l.refused.WithLabelValues(flow) // listed at 0 from the start
	return &Guard{l: l, flow: flow, account: account, addr: addr}
}

// WithCeiling sets the flow's per-account ceiling: what all addresses
// together may fail for one account, skipped for a known address or
// device. Off (the default): no ceiling.
func (g *Guard) WithCeiling(p Policy) *Guard {
	g.ceiling = p
	return g
}

// key is one limited identity. Its id is hashed into the key's name: it
// is whatever a caller typed, and the name must stay short and free of odd
// bytes.
type key struct {
	kind string // "pair", "addr", "ceiling" or, for Spend, "account"
	id   string
	p    Policy
}

func (g *Guard) name(k key, part string) string {
	sum := sha256.Sum256([]byte(k.id))
	return g.flow + ":" + k.kind[:2] + ":" + hex.EncodeToString(sum[:12]) + ":" + part
}

// lock is the back-off lock's limit: one event per d.
func lock(d time.Duration) Limit { return Limit{Events: 1, Per: d, Burst: 1} }

// refuse counts and logs a refusal by k, and records k as throttled.
func (g *Guard) refuse(ctx context.Context, k key, account, addr string, wait time.Duration) error {
	g.l.refused.WithLabelValues(g.flow).Inc()
	g.throttled(ctx, g.entry(k, account, addr), wait, true)
	g.l.warn(ctx, "attempt refused by an abuse limit", "flow", g.flow, "limited", k.kind,
		"account", clip(account), "client_addr", clientAddr(ctx), "retry_after", wait.Round(time.Millisecond))
	return rpcerr.Throttled(wait)
}

// Spend takes one event (a mail sent, a registration) from account's (when
// not "") and the address's budgets, or refuses with rpcerr.Throttled when
// either is used up.
func (g *Guard) Spend(ctx context.Context, account string) error {
	if g == nil {
		return nil
	}
	var ks []key
	if account != "" && !g.account.Off() {
		ks = append(ks, key{"account", account, g.account})
	}
	if addr := clientAddr(ctx); addr != "" && !g.addr.Off() {
		ks = append(ks, key{"addr", addr, g.addr})
	}
	for _, k := range ks {
		d, err := g.l.b.take(ctx, g.name(k, "f"), k.p.Limit)
		if err != nil {
			return err
		}
		if d > 0 {
			return g.refuse(ctx, k, account, clientAddr(ctx), d)
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
