package kv

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// RedisOptions tune the Redis backend.
type RedisOptions struct {
	// Prefix namespaces every key of one store, e.g. "fris:mdr". It is wrapped
	// in a hash tag, {fris:mdr}, the base partition's; partition P of the
	// store is the hash tag {fris:mdr:P}, so all keys of a partition share
	// one Cluster slot, which keeps MULTI/EXEC transactions across them
	// legal.
	Prefix string
	// Partitions, if set, maps keys to partitions (see partition.go).
	Partitions Partitioner
	// SweepEvery is the period of the index sweeper for expired keys. Zero
	// means 1 minute.
	SweepEvery time.Duration
	// MaxRetries bounds optimistic-transaction retries. Zero means 64.
	MaxRetries int
	// BatchDelay > 0 turns on group commit: concurrent Updates wait up to
	// this long to share one transaction (see batch.go).
	BatchDelay time.Duration
	// MaxBatch bounds the Updates of one shared transaction. Zero means 256.
	MaxBatch int
	// Timeout bounds every dial, read, write and wait for a pooled
	// connection of a client OpenRedis makes, with at most one retry, so a
	// Redis that is down or stuck fails a request within about twice this
	// (ErrUnavailable) instead of hanging on go-redis's defaults (5 dial
	// attempts of 5 s, 3 retries). Zero means DefaultRedisTimeout.
	Timeout time.Duration
	Logger  *slog.Logger
}

// DefaultRedisTimeout is RedisOptions.Timeout's default. A healthy Redis
// answers in well under a millisecond, and the largest value FRIS writes
// (10 MiB) takes ~0.1 s on a 1 Gbit/s link.
const DefaultRedisTimeout = time.Second

// Redis is the scale-out backend. Values live in plain string keys (with
// PEXPIRE for TTLs); per partition, a sorted set with all scores 0 indexes
// the keys so prefix scans are ZRANGEBYLEX, and a second sorted set scored
// by expiry lets the sweeper drop index entries of keys Redis has expired.
// A set in the base partition lists the other partitions ever written, for
// scans of prefixes that span partitions.
type Redis struct {
	c   redis.UniversalClient
	own bool
	// The base partition's names: the values' prefix, the index and the
	// expiry set.
	prefix  string
	index   string
	expires string
	tag     string // the hash tag's content, without braces: fris:<service>
	parts   Partitioner
	known   sync.Map // partitions known to be in the set partsKey
	// partsKey is the set of partitions other than the base one.
	partsKey string
	// cluster: a transaction's WATCH names first a key of its partition
	// that no one writes (space.route): go-redis picks the node by it and
	// refuses a WATCH of no keys there. Watching it never aborts a
	// transaction. On a single node or Sentinel a transaction that reads
	// nothing watches nothing.
	cluster bool
	retries int
	log     *slog.Logger
	stop    chan struct{}
	wg      sync.WaitGroup

	group *groupCommit // nil: each Update commits alone

	reload *clusterReload // nil unless c is a Cluster client
}

// ParseRedisURL turns a redis:// or rediss:// URL into client options. Several
// hosts (redis://h1:6379,h2:6379) select Cluster; ?master_name=X selects
// Sentinel; otherwise a single node.
func ParseRedisURL(raw string) (*redis.UniversalOptions, error) {
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok || (scheme != "redis" && scheme != "rediss") {
		return nil, fmt.Errorf("kv: redis URL must start with redis:// or rediss://, got %q", raw)
	}
	hostPart := rest
	if i := strings.IndexAny(rest, "/?"); i >= 0 {
		hostPart = rest[:i]
	}
	if at := strings.LastIndex(hostPart, "@"); at >= 0 {
		hostPart = hostPart[at+1:]
	}
	if strings.Contains(hostPart, ",") {
		// Cluster: go-redis parses one address per URL, so expand the list.
		hosts := strings.Split(hostPart, ",")
		first := strings.Replace(raw, hostPart, hosts[0], 1)
		co, err := redis.ParseClusterURL(first)
		if err != nil {
			return nil, fmt.Errorf("kv: %w", err)
		}
		co.Addrs = hosts
		return &redis.UniversalOptions{
			Addrs: co.Addrs, Username: co.Username, Password: co.Password,
			TLSConfig: co.TLSConfig, IsClusterMode: true,
		}, nil
	}
	// go-redis rejects options it does not know, so take ours out first.
	master := ""
	if base, query, ok := strings.Cut(raw, "?"); ok {
		q, err := url.ParseQuery(query)
		if err != nil {
			return nil, fmt.Errorf("kv: redis URL query: %w", err)
		}
		master = q.Get("master_name")
		q.Del("master_name")
		raw = base
		if len(q) > 0 {
			raw += "?" + q.Encode()
		}
	}
	o, err := redis.ParseURL(raw)
	if err != nil {
		return nil, fmt.Errorf("kv: %w", err)
	}
	uo := &redis.UniversalOptions{
		Addrs: []string{o.Addr}, DB: o.DB, Username: o.Username, Password: o.Password,
		TLSConfig: o.TLSConfig, PoolSize: o.PoolSize, MasterName: master,
	}
	return uo, nil
}

// OpenRedis connects to the URL and returns a store under o.Prefix.
func OpenRedis(ctx context.Context, url string, o RedisOptions) (*Redis, error) {
	uo, err := ParseRedisURL(url)
	if err != nil {
		return nil, err
	}
	t := o.Timeout
	if t <= 0 {
		t = DefaultRedisTimeout
	}
	uo.DialTimeout, uo.ReadTimeout, uo.WriteTimeout, uo.PoolTimeout = t, t, t, t
	uo.DialerRetries = 1
	uo.MaxRetries = 1
	uo.MaxRetryBackoff = 100 * time.Millisecond
	// A caller's deadline shortens a command too, so no request outlives it.
	uo.ContextTimeoutEnabled = true
	c := redis.NewUniversalClient(uo)
	r := NewRedis(c, o)
	r.own = true
	if r.reload != nil {
		r.reload.c.AddHook(r.reload)
	}
	if err := r.Ping(ctx); err != nil {
		_ = r.Close()
		return nil, fmt.Errorf("kv: redis %s: %w", redactURL(url), err)
	}
	return r, nil
}

// NewRedis wraps an existing client; Close does not close it.
func NewRedis(c redis.UniversalClient, o RedisOptions) *Redis {
	p := o.Prefix
	if p == "" {
		p = "fris"
	}
	tag := strings.NewReplacer("{", "", "}", "").Replace(p)
	if !strings.Contains(p, "{") {
		p = "{" + p + "}"
	}
	p += ":"
	r := &Redis{
		c: c, prefix: p + "d:", index: p + "i", expires: p + "x", tag: tag,
		parts: o.Partitions, partsKey: p + "parts",
		retries: o.MaxRetries, log: o.Logger, stop: make(chan struct{}),
	}
	if cc, ok := c.(*redis.ClusterClient); ok {
		r.cluster = true
		r.reload = &clusterReload{c: cc, interval: 250 * time.Millisecond}
	}
	// On a Cluster a transaction holds one partition, and a batch's writes
	// are nearly always of different ones (new patients, other users), so
	// a batch would only queue them one behind the other: each commits
	// alone, concurrently, instead.
	if o.BatchDelay > 0 && !r.cluster {
		r.group = &groupCommit{update: r.update, parts: o.Partitions, delay: o.BatchDelay, maxBatch: o.MaxBatch}
		if !r.cluster {
			// One node holds every partition, so one MULTI/EXEC may too.
			r.group.mixed = r.updateMixed
		}
		if r.group.maxBatch <= 0 {
			r.group.maxBatch = 256
		}
	}
	if r.retries <= 0 {
		r.retries = 64
	}
	if r.log == nil {
		r.log = slog.New(slog.DiscardHandler)
	}
	every := o.SweepEvery
	if every <= 0 {
		every = time.Minute
	}
	r.wg.Add(1)
	go r.sweepLoop(every)
	return r
}

func redactURL(u string) string {
	scheme, rest, ok := strings.Cut(u, "://")
	if !ok {
		return "redis"
	}
	if at := strings.LastIndex(rest, "@"); at >= 0 {
		rest = "***@" + rest[at+1:]
	}
	return scheme + "://" + rest
}

func (r *Redis) Close() error {
	close(r.stop)
	r.wg.Wait()
	if r.own {
		return r.c.Close()
	}
	return nil
}

func (r *Redis) Ping(ctx context.Context) error { return r.failure(ctx, r.c.Ping(ctx).Err()) }

// RedisClient lends the store's client and its key prefix (with the hash
// tag, so keys made with it share the store's Cluster slot) to code that
// keeps its own state beside the store's, such as pkg/ratelimit.
func (r *Redis) RedisClient() (redis.UniversalClient, string) {
	return r.c, strings.TrimSuffix(r.prefix, "d:")
}
