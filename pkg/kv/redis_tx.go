package kv

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

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
