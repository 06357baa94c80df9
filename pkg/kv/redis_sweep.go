package kv

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

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
