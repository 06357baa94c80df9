package kv

import (
	"context"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"
)

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
