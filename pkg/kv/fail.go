package kv

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/redis/go-redis/v9"
)

// Backend failures that are not the caller's fault and not a bug: the store
// cannot answer (Redis unreachable or too slow), or cannot take more data (a
// full disk, Redis at maxmemory). They wrap the backend's own error, for the
// log; rpcerr maps them to codes callers can act on.
var (
	ErrUnavailable = errors.New("store unavailable")
	ErrNoSpace     = errors.New("store out of space")
)

// noSpace reports a write that failed for lack of space: ENOSPC from the
// file system, EDQUOT from a quota.
func noSpace(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)
}

// redisFailure classifies a go-redis error. Errors the transaction function
// returned and Redis's own answers (WRONGTYPE and the like) pass through;
// connection trouble becomes ErrUnavailable. An error caused by the caller's
// own context (it gave up or ran out of time) stays a context error: the
// store did not fail, the caller left.
func redisFailure(ctx context.Context, err error) error {
	if err == nil || errors.Is(err, redis.Nil) || errors.Is(err, redis.TxFailedErr) {
		return err
	}
	if ctx.Err() != nil {
		return err
	}
	var re redis.Error
	if errors.As(err, &re) {
		msg := re.Error()
		switch {
		case strings.HasPrefix(msg, "OOM "):
			return fmt.Errorf("%w: %w", ErrNoSpace, err)
		case strings.HasPrefix(msg, "LOADING "), strings.HasPrefix(msg, "MASTERDOWN "),
			strings.HasPrefix(msg, "CLUSTERDOWN "), strings.HasPrefix(msg, "TRYAGAIN "),
			strings.HasPrefix(msg, "READONLY "), strings.HasPrefix(msg, "EXECABORT "):
			// Restarting, failing over or resharding: it answers again soon.
			// EXECABORT is a MULTI whose queued commands met one of these
			// (a replica promoted mid-transaction): nothing was written.
			return fmt.Errorf("%w: %w", ErrUnavailable, err)
		}
		return err
	}
	var ne net.Error
	switch {
	case errors.As(err, &ne), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, redis.ErrPoolTimeout), errors.Is(err, redis.ErrClosed),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	return err
}
