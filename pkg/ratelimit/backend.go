package ratelimit

import (
	"context"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"
	"golang.org/x/time/rate"

	"fris.dev/pkg/kv"
)

// Limit is a GCRA (token bucket) limit: Burst events at once, refilled at
// Events per Per.
type Limit struct {
	Events int
	Per    time.Duration
	Burst  int
}

// interval is the time one event's budget takes to come back.
func (l Limit) interval() time.Duration { return l.Per / time.Duration(max(l.Events, 1)) }

// valid reports a limit that can admit anything.
func (l Limit) valid() bool { return l.Events > 0 && l.Per > 0 && l.Burst > 0 }

// backend keeps the limiters' state: in Redis when the service's store is
// Redis (shared by every replica), else in process.
type backend interface {
	// peek reports how long until one event of key fits l, without
	// spending it (0: it fits now).
	peek(ctx context.Context, key string, l Limit) (time.Duration, error)
	// take spends one event of key under l; >0 is the wait when it does
	// not fit (nothing is spent then).
	take(ctx context.Context, key string, l Limit) (time.Duration, error)
	// refund gives back one event taken from key under l (never beyond
	// its burst).
	refund(ctx context.Context, key string, l Limit) error
	// count adds one to key's counter and returns it; the counter is
	// forgotten window after its last increment.
	count(ctx context.Context, key string, window time.Duration) (int64, error)
	// mark remembers key for ttl (a known address or device);
	// marked reports whether it is remembered.
	mark(ctx context.Context, key string, ttl time.Duration) error
	marked(ctx context.Context, key string) (bool, error)
	// record lists t as throttled for wait from now (throttles.go):
	// its failures when it counts some, one more refusal when refused.
	record(ctx context.Context, t Throttle, wait time.Duration, refused bool) error
	// throttles lists at most limit throttles of now, the longest-running
	// first.
	throttles(ctx context.Context, limit int) ([]Throttle, error)
	// lift deletes the state of the key id names (its budget, back-off
	// lock, failure count and listing) and returns what was listed.
	lift(ctx context.Context, id string) (Throttle, bool, error)
}

// redisBackend is redis_rate's GCRA over the service's Redis client.
type redisBackend struct {
	c      redis.UniversalClient
	lim    *redis_rate.Limiter
	prefix string
}

func newRedisBackend(c redis.UniversalClient, prefix string) *redisBackend {
	return &redisBackend{c: c, lim: redis_rate.NewLimiter(c), prefix: prefix}
}

func unavailable(err error) error {
	return fmt.Errorf("%w: rate limiter: %v", kv.ErrUnavailable, err)
}

func (b *redisBackend) limit(l Limit) redis_rate.Limit {
	return redis_rate.Limit{Rate: l.Events, Period: l.Per, Burst: l.Burst}
}

func (b *redisBackend) peek(ctx context.Context, key string, l Limit) (time.Duration, error) {
	// A cost of 0 spends nothing and reports ResetAfter, the time until
	// the bucket is full. One event fits once the bucket holds one, that
	// is ResetAfter less the other Burst-1 events' intervals. (Remaining
	// is no help: the script's float arithmetic on epoch seconds can
	// truncate an exact 1 to 0.)
	res, err := b.lim.AllowN(ctx, b.prefix+key, b.limit(l), 0)
	if err != nil {
		return 0, unavailable(err)
	}
	wait := res.ResetAfter - time.Duration(l.Burst-1)*l.interval()
	if wait <= floatSlack {
		return 0, nil
	}
	return wait, nil
}

// floatSlack absorbs the rounding of redis_rate's float seconds.
const floatSlack = 100 * time.Microsecond

func (b *redisBackend) take(ctx context.Context, key string, l Limit) (time.Duration, error) {
	res, err := b.lim.Allow(ctx, b.prefix+key, b.limit(l))
	if err != nil {
		return 0, unavailable(err)
	}
	if res.Allowed > 0 {
		return 0, nil
	}
	return max(res.RetryAfter, time.Millisecond), nil
}

func (b *redisBackend) refund(ctx context.Context, key string, l Limit) error {
	// A negative cost moves the bucket's time back by one interval. The
	// script stores the new time only while it is ahead of now; when it
	// is not, the bucket is full again, which deleting the key says.
	res, err := b.lim.AllowN(ctx, b.prefix+key, b.limit(l), -1)
	if err != nil {
		return unavailable(err)
	}
	if res.ResetAfter <= 0 {
		if err := b.lim.Reset(ctx, b.prefix+key); err != nil {
			return unavailable(err)
		}
	}
	return nil
}

func (b *redisBackend) count(ctx context.Context, key string, window time.Duration) (int64, error) {
	k := "rate:" + b.prefix + key
	var incr *redis.IntCmd
	_, err := b.c.TxPipelined(ctx, func(p redis.Pipeliner) error {
		incr = p.Incr(ctx, k)
		p.PExpire(ctx, k, window)
		return nil
	})
	if err != nil {
		return 0, unavailable(err)
	}
	return incr.Val(), nil
}

func (b *redisBackend) mark(ctx context.Context, key string, ttl time.Duration) error {
	if err := b.c.Set(ctx, "rate:"+b.prefix+key, "1", ttl).Err(); err != nil {
		return unavailable(err)
	}
	return nil
}

func (b *redisBackend) marked(ctx context.Context, key string) (bool, error) {
	n, err := b.c.Exists(ctx, "rate:"+b.prefix+key).Result()
	if err != nil {
		return false, unavailable(err)
	}
	return n > 0, nil
}

// memBackend is golang.org/x/time/rate in process, for the embedded store:
// one process is the whole deployment there.
type memBackend struct {
	mu       sync.Mutex
	now      func() time.Time
	buckets  map[string]*bucket
	counters map[string]*counter
	marks    map[string]time.Time // key -> when it is forgotten
	// listed are the throttles of now (throttles.go), at most maxListed.
	listed map[string]*Throttle
	ops    int
}

// maxMarks bounds the in-process known addresses and devices. Only
// successful checks add one, so strangers cannot fill it; past the bound
// the expired go first, then arbitrary ones (their holders meet the
// account ceiling again, nothing worse).
const maxMarks = 100_000

type bucket struct {
	lim  *rate.Limiter
	l    Limit
	idle time.Time // after this the bucket is full again and may go
}

type counter struct {
	n     int64
	until time.Time
}

func newMemBackend(now func() time.Time) *memBackend {
	return &memBackend{now: now, buckets: map[string]*bucket{}, counters: map[string]*counter{}, marks: map[string]time.Time{}, listed: map[string]*Throttle{}}
}

// bucketFor returns key's limiter under l; a limiter made under another
// limit (a longer back-off) is replaced by one under l that starts where it
// was: the back-off's limit changes with the failure count.
func (m *memBackend) bucketFor(key string, l Limit, now time.Time) *bucket {
	b, ok := m.buckets[key]
	if !ok || b.l != l {
		lim := rate.NewLimiter(rate.Every(l.interval()), l.Burst)
		if ok {
			// Carry the deficit over, so a longer interval starts from the
			// same empty bucket.
			if t := b.lim.TokensAt(now); t < float64(l.Burst) {
				lim.AllowN(now, l.Burst-int(math.Floor(t)))
			}
		}
		// Until it is full again it must not be swept: a refused take
		// does not move this.
		b = &bucket{lim: lim, l: l, idle: now.Add(time.Duration(l.Burst) * l.interval())}
		m.buckets[key] = b
	}
	return b
}

// sweep drops full buckets and expired counters now and then, so keys of
// past attackers do not pile up.
func (m *memBackend) sweep(now time.Time) {
	m.ops++
	if m.ops < 1024 {
		return
	}
	m.ops = 0
	for k, b := range m.buckets {
		if now.After(b.idle) {
			delete(m.buckets, k)
		}
	}
	for k, c := range m.counters {
		if now.After(c.until) {
			delete(m.counters, k)
		}
	}
	for k, t := range m.listed {
		if !t.Until.After(now) {
			delete(m.listed, k)
		}
	}
}

func wait(tokens float64, l Limit) time.Duration {
	return max(time.Duration((1-tokens)*float64(l.interval())), time.Millisecond)
}

func (m *memBackend) peek(_ context.Context, key string, _ Limit) (time.Duration, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	b, ok := m.buckets[key]
	if !ok {
		return 0, nil
	}
	// The bucket's own limit: a back-off lock lasts as long as it was set
	// for, as in Redis, where the state is the time the next event fits.
	if t := b.lim.TokensAt(now); t < 1 {
		return wait(t, b.l), nil
	}
	return 0, nil
}

func (m *memBackend) take(_ context.Context, key string, l Limit) (time.Duration, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	m.sweep(now)
	b := m.bucketFor(key, l, now)
	if !b.lim.AllowN(now, 1) {
		return wait(b.lim.TokensAt(now), l), nil
	}
	// Full again at the latest after Burst intervals from now.
	b.idle = now.Add(time.Duration(l.Burst) * l.interval())
	return 0, nil
}

func (m *memBackend) refund(_ context.Context, key string, l Limit) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	if b, ok := m.buckets[key]; ok && b.l == l && b.lim.TokensAt(now) < float64(l.Burst) {
		// A negative event adds a token; the limiter caps the bucket at
		// its burst.
		b.lim.AllowN(now, -1)
	}
	return nil
}

func (m *memBackend) count(_ context.Context, key string, window time.Duration) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	m.sweep(now)
	c, ok := m.counters[key]
	if !ok || now.After(c.until) {
		c = &counter{}
		m.counters[key] = c
	}
	c.n++
	c.until = now.Add(window)
	return c.n, nil
}

func (m *memBackend) mark(_ context.Context, key string, ttl time.Duration) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	if _, ok := m.marks[key]; !ok && len(m.marks) >= maxMarks {
		for k, until := range m.marks {
			if now.After(until) {
				delete(m.marks, k)
			}
		}
		for k := range m.marks {
			if len(m.marks) < maxMarks {
				break
			}
			delete(m.marks, k)
		}
	}
	m.marks[key] = now.Add(ttl)
	return nil
}

func (m *memBackend) marked(_ context.Context, key string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	until, ok := m.marks[key]
	if ok && m.now().After(until) {
		delete(m.marks, key)
		return false, nil
	}
	return ok, nil
}
