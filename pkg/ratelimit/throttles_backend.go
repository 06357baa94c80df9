package ratelimit

import (
	"context"
	"sort"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// In Redis a throttle is a hash beside its key's state ("rate:<prefix><id>:e",
// expiring with the throttle) and a member of one sorted set per service
// ("rate:<prefix>throttled", scored by the time it ends, trimmed to
// maxListed on every write), all under the store's hash tag: one slot.

func (b *redisBackend) entryKey(id string) string { return "rate:" + b.prefix + id + ":e" }
func (b *redisBackend) indexKey() string          { return "rate:" + b.prefix + "throttled" }

func (b *redisBackend) record(ctx context.Context, t Throttle, wait time.Duration, refused bool) error {
	now := time.Now()
	until := now.Add(wait).UnixMilli()
	e, idx := b.entryKey(t.ID), b.indexKey()
	_, err := b.c.TxPipelined(ctx, func(p redis.Pipeliner) error {
		fields := []any{"flow", t.Flow, "kind", t.Kind, "account", t.Account, "addr", t.Addr, "until", until}
		if t.Failures > 0 {
			fields = append(fields, "failures", t.Failures)
		}
		p.HSet(ctx, e, fields...)
		if refused {
			p.HIncrBy(ctx, e, "refused", 1)
		}
		p.PExpire(ctx, e, wait)
		p.ZAdd(ctx, idx, redis.Z{Score: float64(until), Member: t.ID})
		p.ZRemRangeByScore(ctx, idx, "-inf", strconv.FormatInt(now.UnixMilli(), 10))
		p.ZRemRangeByRank(ctx, idx, 0, -(maxListed + 1))
		return nil
	})
	if err != nil {
		return unavailable(err)
	}
	return nil
}

func (b *redisBackend) throttles(ctx context.Context, limit int) ([]Throttle, error) {
	now := strconv.FormatInt(time.Now().UnixMilli(), 10)
	ids, err := b.c.ZRevRangeByScore(ctx, b.indexKey(), &redis.ZRangeBy{Min: "(" + now, Max: "+inf", Count: int64(limit)}).Result()
	if err != nil {
		return nil, unavailable(err)
	}
	if len(ids) == 0 {
		return nil, nil
	}
	cmds := make([]*redis.MapStringStringCmd, len(ids))
	_, err = b.c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, id := range ids {
			cmds[i] = p.HGetAll(ctx, b.entryKey(id))
		}
		return nil
	})
	if err != nil {
		return nil, unavailable(err)
	}
	out := make([]Throttle, 0, len(ids))
	for i, id := range ids {
		// Gone since: lifted, or ended between the two reads.
		if t, ok := throttleOf(id, cmds[i].Val()); ok {
			out = append(out, t)
		}
	}
	return out, nil
}

// throttleOf reads a throttle's hash; false when there is none.
func throttleOf(id string, h map[string]string) (Throttle, bool) {
	if len(h) == 0 {
		return Throttle{}, false
	}
	t := Throttle{ID: id, Flow: h["flow"], Kind: h["kind"], Account: h["account"], Addr: h["addr"]}
	t.Failures, _ = strconv.ParseInt(h["failures"], 10, 64)
	t.Refused, _ = strconv.ParseInt(h["refused"], 10, 64)
	ms, _ := strconv.ParseInt(h["until"], 10, 64)
	t.Until = time.UnixMilli(ms)
	return t, true
}

func (b *redisBackend) lift(ctx context.Context, id string) (Throttle, bool, error) {
	e := b.entryKey(id)
	var h *redis.MapStringStringCmd
	var del *redis.IntCmd
	_, err := b.c.TxPipelined(ctx, func(p redis.Pipeliner) error {
		h = p.HGetAll(ctx, e)
		state := "rate:" + b.prefix + id
		del = p.Del(ctx, state+":f", state+":b", state+":n", e)
		p.ZRem(ctx, b.indexKey(), id)
		return nil
	})
	if err != nil {
		return Throttle{}, false, unavailable(err)
	}
	t, _ := throttleOf(id, h.Val())
	t.ID = id
	return t, del.Val() > 0, nil
}

func (m *memBackend) record(_ context.Context, t Throttle, wait time.Duration, refused bool) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	e, ok := m.listed[t.ID]
	if !ok {
		if len(m.listed) >= maxListed {
			m.evictListed(now)
		}
		e = &Throttle{ID: t.ID}
		m.listed[t.ID] = e
	}
	e.Flow, e.Kind, e.Account, e.Addr, e.Until = t.Flow, t.Kind, t.Account, t.Addr, now.Add(wait)
	if t.Failures > 0 {
		e.Failures = t.Failures
	}
	if refused {
		e.Refused++
	}
	return nil
}

// evictListed makes room for one throttle: the ended ones go, else the one
// ending first (as Redis trims its set).
func (m *memBackend) evictListed(now time.Time) {
	var first *Throttle
	for id, t := range m.listed {
		if !t.Until.After(now) {
			delete(m.listed, id)
			continue
		}
		if first == nil || t.Until.Before(first.Until) {
			first = t
		}
	}
	if len(m.listed) >= maxListed && first != nil {
		delete(m.listed, first.ID)
	}
}

func (m *memBackend) throttles(_ context.Context, limit int) ([]Throttle, error) {
	m.mu.Lock()
	now := m.now()
	var out []Throttle
	for _, t := range m.listed {
		if t.Until.After(now) {
			out = append(out, *t)
		}
	}
	m.mu.Unlock()
	sort.Slice(out, func(i, j int) bool {
		if !out[i].Until.Equal(out[j].Until) {
			return out[i].Until.After(out[j].Until)
		}
		return out[i].ID < out[j].ID
	})
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

func (m *memBackend) lift(_ context.Context, id string) (Throttle, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t := Throttle{ID: id}
	found := false
	if e, ok := m.listed[id]; ok {
		t, found = *e, true
		delete(m.listed, id)
	}
	for _, k := range []string{id + ":f", id + ":b"} {
		if _, ok := m.buckets[k]; ok {
			delete(m.buckets, k)
			found = true
		}
	}
	if _, ok := m.counters[id+":n"]; ok {
		delete(m.counters, id+":n")
		found = true
	}
	return t, found, nil
}
