package kv

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// clusterReload makes a Cluster client re-read the slot map as soon as a
// command finds a node unreachable or out of service. go-redis re-reads it
// on a MOVED answer or every 10 s, but a dead master answers nothing, and a
// WATCH transaction does not ask for a reload at all: after the cluster
// promoted its replica, commands for the dead master's slots kept going to
// its address for up to 10 s more (the replica test measured it). Reloads
// are asked for at most every interval; go-redis runs one at a time. The
// failed command still fails: the caller's retry or next request takes the
// new map.
type clusterReload struct {
	c        *redis.ClusterClient
	interval time.Duration
	last     atomic.Int64 // unix nanos of the last reload asked for
}

func (h *clusterReload) after(err error) {
	if !errors.Is(err, ErrUnavailable) {
		return
	}
	now := time.Now().UnixNano()
	last := h.last.Load()
	if now-last < int64(h.interval) || !h.last.CompareAndSwap(last, now) {
		return
	}
	h.c.ReloadState(context.Background())
}

// failure classifies err (redisFailure) and, on a Cluster, has the slot map
// read again when a node failed.
func (r *Redis) failure(ctx context.Context, err error) error {
	err = redisFailure(ctx, err)
	if r.reload != nil {
		r.reload.after(err)
	}
	return err
}

// The hook covers commands sent on the client outside the store's own
// methods (the rate limiter's scripts share the client).

func (h *clusterReload) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *clusterReload) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		h.after(redisFailure(ctx, err))
		return err
	}
}

func (h *clusterReload) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		h.after(redisFailure(ctx, err))
		return err
	}
}
