package kv

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/url"
	"sort"
	"strconv"
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

// space is the names of one partition's keys.
type space struct {
	data, index, expires string
	// route is a key of the partition's slot that no one writes (see
	// Redis.cluster).
	route string
}

func (r *Redis) space(part string) space {
	t := strings.TrimSuffix(r.prefix, "d:")
	if part != "" {
		t = "{" + r.tag + ":" + tagEscaper.Replace(part) + "}:"
	}
	return space{data: t + "d:", index: t + "i", expires: t + "x", route: t + "route"}
}

// tagEscaper keeps a partition's name inside its hash tag, and the names
// of two partitions apart.
var tagEscaper = strings.NewReplacer("%", "%25", "{", "%7B", "}", "%7D")

func (r *Redis) keyPart(key string) string {
	if r.parts == nil {
		return ""
	}
	return r.parts.Key(key)
}

// prefixParts lists the partitions a scan of prefix reads; nil: all.
func (r *Redis) prefixParts(prefix string) []string {
	if r.parts == nil {
		return []string{""}
	}
	return r.parts.Prefix(prefix)
}

func (r *Redis) Get(ctx context.Context, key string) ([]byte, error) {
	if !validKey(key) {
		return nil, ErrNotFound
	}
	v, err := r.c.Get(ctx, r.space(r.keyPart(key)).data+key).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, ErrNotFound
	}
	return v, r.failure(ctx, err)
}

// Scan reads the partitions that may hold the prefix's keys, all when the
// Partitioner cannot say (at most limit entries of each, a few at a
// time), merged in key order.
func (r *Redis) Scan(ctx context.Context, prefix, after string, limit int) ([]Entry, error) {
	parts := r.prefixParts(prefix)
	if len(parts) == 1 {
		out, err := r.scan(ctx, r.c, r.space(parts[0]), prefix, after, limit)
		return out, r.failure(ctx, err)
	}
	if parts == nil {
		var err error
		if parts, err = r.partitions(ctx); err != nil {
			return nil, r.failure(ctx, err)
		}
	}
	res := make([][]Entry, len(parts))
	// The first failure ends the scan: when Redis does not answer, waiting
	// for the timeout of every partition in turn would multiply it.
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var first error
	var once sync.Once
	sem := make(chan struct{}, 8)
	var wg sync.WaitGroup
	for i, part := range parts {
		sem <- struct{}{}
		if sctx.Err() != nil {
			<-sem
			break
		}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			var err error
			if res[i], err = r.scan(sctx, r.c, r.space(part), prefix, after, limit); err != nil {
				once.Do(func() { first = err; cancel() })
			}
		}()
	}
	wg.Wait()
	if first != nil {
		return nil, r.failure(ctx, first)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var out []Entry
	for _, es := range res {
		out = append(out, es...)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// partitions lists the base partition and every other one written so far.
func (r *Redis) partitions(ctx context.Context) ([]string, error) {
	ps, err := r.c.SMembers(ctx, r.partsKey).Result()
	if err != nil {
		return nil, err
	}
	for _, p := range ps {
		r.known.Store(p, true)
	}
	return append([]string{""}, ps...), nil
}

// register adds part to the set of partitions before its first write, so
// a scan that spans partitions finds it. Adding twice is harmless; a crash
// after it leaves an empty partition listed, which scans skip quickly.
func (r *Redis) register(ctx context.Context, part string) error {
	if part == "" {
		return nil
	}
	if _, ok := r.known.Load(part); ok {
		return nil
	}
	if err := r.c.SAdd(ctx, r.partsKey, part).Err(); err != nil {
		return err
	}
	r.known.Store(part, true)
	return nil
}

// cmdable is what both the client and a WATCHed transaction can run.
type cmdable interface {
	ZRangeByLex(ctx context.Context, key string, opt *redis.ZRangeBy) *redis.StringSliceCmd
	MGet(ctx context.Context, keys ...string) *redis.SliceCmd
}

func (r *Redis) scan(ctx context.Context, c cmdable, sp space, prefix, after string, limit int) ([]Entry, error) {
	min := "[" + prefix
	if after >= prefix {
		min = "(" + after
	}
	max := "+"
	if end := PrefixEnd(prefix); end != "" {
		max = "(" + end
	}
	page := int64(limit)
	if limit <= 0 || page < 256 {
		page = 256
	}
	var out []Entry
	for {
		keys, err := c.ZRangeByLex(ctx, sp.index, &redis.ZRangeBy{Min: min, Max: max, Count: page}).Result()
		if err != nil {
			return nil, err
		}
		if len(keys) == 0 {
			return out, nil
		}
		full := make([]string, len(keys))
		for i, k := range keys {
			full[i] = sp.data + k
		}
		vals, err := c.MGet(ctx, full...).Result()
		if err != nil {
			return nil, err
		}
		for i, v := range vals {
			s, ok := v.(string)
			if !ok { // expired; the sweeper drops its index entry
				continue
			}
			out = append(out, Entry{Key: keys[i], Value: []byte(s)})
			if limit > 0 && len(out) >= limit {
				return out, nil
			}
		}
		if int64(len(keys)) < page {
			return out, nil
		}
		min = "(" + keys[len(keys)-1]
	}
}

// Update runs fn as an optimistic transaction: every key it reads is WATCHed,
// writes are buffered and applied in one MULTI/EXEC, and a concurrent change
// to a watched key makes the whole function run again. The index is watched
// only by transactions that scan, so writers of unrelated keys never collide.
// With group commit on, concurrent Updates share one such transaction.
func (r *Redis) Update(ctx context.Context, fn func(Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if r.group != nil {
		return r.group.do(ctx, fn)
	}
	return r.update(ctx, fn)
}

func (r *Redis) update(ctx context.Context, fn func(Tx) error) error {
	return r.run(ctx, fn, false)
}

// updateMixed is update without the one-partition rule, for a group
// commit's shared transaction on a single node (groupCommit.mixed).
func (r *Redis) updateMixed(ctx context.Context, fn func(Tx) error) error {
	return r.run(ctx, fn, true)
}

func (r *Redis) run(ctx context.Context, fn func(Tx) error, free bool) error {
	// On a Cluster the transaction must start on its partition's node,
	// before fn names a key: a dry run of fn finds the partition of its
	// first key (fn may run more than once anyway).
	routed := ""
	if r.cluster && r.parts != nil {
		p := &probeTx{r: r}
		err := fn(p)
		if !p.set {
			return err // fn touched nothing, so wrote nothing
		}
		routed = p.part
	}
	for i := 0; i < r.retries; i++ {
		var route []string
		if r.cluster {
			route = []string{r.space(routed).route}
			// Before the transaction takes its connection: registering
			// inside it would need a second one from the same pool, and
			// as many concurrent transactions as the pool holds would
			// wait for each other until the pool's timeout.
			if err := r.register(ctx, routed); err != nil {
				return r.failure(ctx, err)
			}
		}
		var t *redisTx
		err := r.c.Watch(ctx, func(rtx *redis.Tx) error {
			t = &redisTx{r: r, rtx: rtx, writes: map[string]*write{}, pin: pin{parts: r.parts, free: free}, routed: routed}
			if err := fn(t); err != nil {
				return err
			}
			if t.reroute {
				return errReroute
			}
			return t.commit(ctx)
		}, route...)
		if t != nil && t.reroute {
			// What fn read changed since the dry run, and so did its
			// first key's partition: start again on that one.
			routed = t.pin.part
			continue
		}
		if !errors.Is(err, redis.TxFailedErr) {
			return r.failure(ctx, err)
		}
		// Writers racing on one key would otherwise retry in lockstep and
		// starve each other: wait a random, growing moment first.
		backoff := time.Duration(rand.Int64N(int64(time.Millisecond) << min(i, 5)))
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(backoff):
		}
	}
	return fmt.Errorf("kv: %w: transaction retried %d times", ErrConflict, r.retries)
}

var (
	errProbe   = errors.New("kv: dry run")
	errReroute = errors.New("kv: transaction on another partition's node")
)

// probeTx is the dry run's transaction: it notes the partition of the
// first key and refuses everything, answering what the real transaction
// answers without touching a partition.
type probeTx struct {
	r    *Redis
	set  bool
	part string
}

func (p *probeTx) touch(part string) error {
	if !p.set {
		p.set, p.part = true, part
	}
	return errProbe
}

func (p *probeTx) Get(_ context.Context, key string) ([]byte, error) {
	if !validKey(key) {
		return nil, ErrNotFound
	}
	return nil, p.touch(p.r.keyPart(key))
}

func (p *probeTx) Scan(_ context.Context, prefix, _ string, _ int) ([]Entry, error) {
	parts := p.r.prefixParts(prefix)
	if len(parts) != 1 {
		return nil, fmt.Errorf("%w: scan of %q may read several", ErrCrossPartition, prefix)
	}
	return nil, p.touch(parts[0])
}

func (p *probeTx) Put(key string, _ []byte, _ time.Duration) error {
	if err := checkKey(key); err != nil {
		return err
	}
	return p.touch(p.r.keyPart(key))
}

func (p *probeTx) Delete(key string) error {
	if !validKey(key) {
		return nil
	}
	return p.touch(p.r.keyPart(key))
}

type write struct {
	value []byte
	ttl   time.Duration
	del   bool
	part  string // the key's partition
}

type redisTx struct {
	r      *Redis
	rtx    *redis.Tx
	writes map[string]*write
	pin    pin
	// routed is the partition whose node runs the transaction on a
	// Cluster; reroute is set when fn's first key is in another.
	routed  string
	reroute bool
}

// enter pins the transaction to part and says where its keys live.
func (t *redisTx) enter(part string, err error) (space, error) {
	if err != nil {
		return space{}, err
	}
	if t.reroute || (t.r.cluster && part != t.routed) {
		t.reroute = true
		return space{}, errReroute
	}
	return t.r.space(part), nil
}

func (t *redisTx) Get(ctx context.Context, key string) ([]byte, error) {
	if !validKey(key) {
		return nil, ErrNotFound
	}
	sp, err := t.enter(t.pin.key(key))
	if err != nil {
		return nil, err
	}
	if w, ok := t.writes[key]; ok {
		if w.del {
			return nil, ErrNotFound
		}
		return w.value, nil
	}
	full := sp.data + key
	if err := t.rtx.Watch(ctx, full).Err(); err != nil {
		return nil, err
	}
	v, err := t.rtx.Get(ctx, full).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, ErrNotFound
	}
	return v, err
}

// Scan inside a transaction sees the transaction's own writes. The index key
// is watched for the whole transaction, so inserts and deletes by others
// abort it; the scanned values are watched as well.
func (t *redisTx) Scan(ctx context.Context, prefix, after string, limit int) ([]Entry, error) {
	sp, err := t.enter(t.pin.prefix(prefix))
	if err != nil {
		return nil, err
	}
	if err := t.rtx.Watch(ctx, sp.index).Err(); err != nil {
		return nil, err
	}
	base, err := t.r.scan(ctx, t.rtx, sp, prefix, after, 0)
	if err != nil {
		return nil, err
	}
	if len(base) > 0 {
		keys := make([]string, len(base))
		for i, e := range base {
			keys[i] = sp.data + e.Key
		}
		if err := t.rtx.Watch(ctx, keys...).Err(); err != nil {
			return nil, err
		}
	}
	merged := make(map[string][]byte, len(base))
	for _, e := range base {
		merged[e.Key] = e.Value
	}
	for k, w := range t.writes {
		if !strings.HasPrefix(k, prefix) || k <= after {
			continue
		}
		if w.del {
			delete(merged, k)
		} else {
			merged[k] = w.value
		}
	}
	out := make([]Entry, 0, len(merged))
	for k, v := range merged {
		out = append(out, Entry{Key: k, Value: v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

func (t *redisTx) Put(key string, value []byte, ttl time.Duration) error {
	if err := checkKey(key); err != nil {
		return err
	}
	part, err := t.pin.key(key)
	if _, err := t.enter(part, err); err != nil {
		return err
	}
	t.writes[key] = &write{value: append([]byte(nil), value...), ttl: ttl, part: part}
	return nil
}

func (t *redisTx) Delete(key string) error {
	if !validKey(key) {
		return nil
	}
	part, err := t.pin.key(key)
	if _, err := t.enter(part, err); err != nil {
		return err
	}
	t.writes[key] = &write{del: true, part: part}
	return nil
}

func (t *redisTx) commit(ctx context.Context) error {
	if len(t.writes) == 0 {
		return nil
	}
	// One partition, but for a group commit's shared transaction on a
	// single Redis (pin.free), whose writes may be in several. On a
	// Cluster run registered it; on a single node the registration goes
	// into the transaction itself, on the connection it already holds.
	var unknown []any
	if !t.r.cluster {
		seen := map[string]bool{}
		for _, w := range t.writes {
			if _, ok := t.r.known.Load(w.part); !ok && w.part != "" && !seen[w.part] {
				seen[w.part] = true
				unknown = append(unknown, w.part)
			}
		}
	}
	_, err := t.rtx.TxPipelined(ctx, func(p redis.Pipeliner) error {
		if len(unknown) > 0 {
			p.SAdd(ctx, t.r.partsKey, unknown...)
		}
		for k, w := range t.writes {
			sp := t.r.space(w.part)
			full := sp.data + k
			if w.del {
				p.Del(ctx, full)
				p.ZRem(ctx, sp.index, k)
				p.ZRem(ctx, sp.expires, k)
				continue
			}
			p.Set(ctx, full, w.value, w.ttl)
			p.ZAdd(ctx, sp.index, redis.Z{Member: k})
			if w.ttl > 0 {
				at := time.Now().Add(w.ttl).UnixMilli()
				p.ZAdd(ctx, sp.expires, redis.Z{Score: float64(at), Member: k})
			} else {
				p.ZRem(ctx, sp.expires, k)
			}
		}
		return nil
	})
	if err == nil {
		for _, part := range unknown {
			t.r.known.Store(part, true)
		}
	}
	return err
}

func (r *Redis) sweepLoop(every time.Duration) {
	defer r.wg.Done()
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-r.stop:
			return
		case <-t.C:
			ctx, cancel := context.WithTimeout(context.Background(), every)
			if err := r.sweep(ctx); err != nil {
				r.log.Warn("kv: sweep redis index", "err", err)
			}
			cancel()
		}
	}
}

// sweep drops index entries of keys that Redis has expired, in every
// partition. A key re-put without TTL in the meantime is no longer in the
// expiry set, and one re-put with a later TTL has a later score, so neither
// is touched.
func (r *Redis) sweep(ctx context.Context) error {
	parts, err := r.partitions(ctx)
	if err != nil {
		return err
	}
	for _, part := range parts {
		if err := r.sweepSpace(ctx, r.space(part)); err != nil {
			return err
		}
	}
	return nil
}

func (r *Redis) sweepSpace(ctx context.Context, sp space) error {
	now := strconv.FormatInt(time.Now().UnixMilli(), 10)
	keys, err := r.c.ZRangeByScore(ctx, sp.expires, &redis.ZRangeBy{Min: "-inf", Max: now, Count: 1000}).Result()
	if err != nil {
		return err
	}
	for _, k := range keys {
		err := r.c.Watch(ctx, func(rtx *redis.Tx) error {
			n, err := rtx.Exists(ctx, sp.data+k).Result()
			if err != nil || n > 0 {
				return err
			}
			_, err = rtx.TxPipelined(ctx, func(p redis.Pipeliner) error {
				p.ZRem(ctx, sp.index, k)
				p.ZRem(ctx, sp.expires, k)
				return nil
			})
			return err
		}, sp.data+k, sp.index)
		if err != nil && !errors.Is(err, redis.TxFailedErr) {
			return err
		}
	}
	return nil
}

// MoveToPartitions moves the keys that a store written before it had
// partitions (or with other ones) kept in the base partition into their
// own, and returns how many it moved. kv.Open runs it at every start of a
// partitioned Redis store; it reads only the base partition's index when
// there is nothing to move. Each key is copied first, unless its partition
// already holds a newer version, and then deleted from the base partition
// if unchanged, so a crash in between only leaves a copy that the next run
// deletes. Stores of an older FRIS must not write meanwhile.
func (r *Redis) MoveToPartitions(ctx context.Context) (int, error) {
	if r.parts == nil {
		return 0, nil
	}
	base := r.space("")
	moved := 0
	after := "-"
	for {
		keys, err := r.c.ZRangeByLex(ctx, base.index, &redis.ZRangeBy{Min: after, Max: "+", Count: 512}).Result()
		if err != nil {
			return moved, r.failure(ctx, err)
		}
		for _, k := range keys {
			if r.keyPart(k) == "" {
				continue
			}
			if err := r.moveOne(ctx, base, k); err != nil {
				return moved, r.failure(ctx, err)
			}
			moved++
		}
		if len(keys) < 512 {
			return moved, nil
		}
		after = "(" + keys[len(keys)-1]
	}
}

func (r *Redis) moveOne(ctx context.Context, base space, k string) error {
	full := base.data + k
	v, err := r.c.Get(ctx, full).Bytes()
	if err != nil && !errors.Is(err, redis.Nil) {
		return err
	}
	if err == nil {
		ttl, err := r.c.PTTL(ctx, full).Result()
		if err != nil {
			return err
		}
		if ttl == -2*time.Nanosecond || ttl == -2*time.Millisecond {
			return nil // expired since the read: the next run drops its entry
		}
		if ttl < 0 {
			ttl = 0
		}
		if err := r.update(ctx, func(tx Tx) error {
			if _, err := tx.Get(ctx, k); err == nil || !errors.Is(err, ErrNotFound) {
				return err // a newer version is there already
			}
			return tx.Put(k, v, ttl)
		}); err != nil {
			return err
		}
	}
	err = r.c.Watch(ctx, func(rtx *redis.Tx) error {
		now, err := rtx.Get(ctx, full).Bytes()
		if err != nil && !errors.Is(err, redis.Nil) {
			return err
		}
		if err == nil && string(now) != string(v) {
			return nil // written since: moved at the next run
		}
		_, err = rtx.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.Del(ctx, full)
			p.ZRem(ctx, base.index, k)
			p.ZRem(ctx, base.expires, k)
			return nil
		})
		return err
	}, full, base.index)
	if errors.Is(err, redis.TxFailedErr) {
		return nil
	}
	return err
}

// RedisClient lends the store's client and its key prefix (with the hash
// tag, so keys made with it share the store's Cluster slot) to code that
// keeps its own state beside the store's, such as pkg/ratelimit.
func (r *Redis) RedisClient() (redis.UniversalClient, string) {
	return r.c, strings.TrimSuffix(r.prefix, "d:")
}
