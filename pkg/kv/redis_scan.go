package kv

import (
	"context"
	"errors"
	"sort"
	"sync"

	"github.com/redis/go-redis/v9"
)

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
