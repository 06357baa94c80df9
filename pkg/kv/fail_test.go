package kv

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"testing"

	"github.com/redis/go-redis/v9"
)

type fakeRedisError string

func (e fakeRedisError) Error() string { return string(e) }
func (fakeRedisError) RedisError()     {}

func TestRedisFailure(t *testing.T) {
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	fnErr := errors.New("the transaction's own error")
	for _, tc := range []struct {
		name string
		ctx  context.Context
		err  error
		want error // nil: passed through unchanged
	}{
		{"refused", context.Background(), &net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}, ErrUnavailable},
		{"reset", context.Background(), fmt.Errorf("read: %w", syscall.ECONNRESET), ErrUnavailable},
		{"eof", context.Background(), io.EOF, ErrUnavailable},
		{"pool timeout", context.Background(), redis.ErrPoolTimeout, ErrUnavailable},
		{"dial timeout", context.Background(), context.DeadlineExceeded, ErrUnavailable},
		{"loading", context.Background(), fakeRedisError("LOADING Redis is loading the dataset in memory"), ErrUnavailable},
		{"execabort", context.Background(), fakeRedisError("EXECABORT Transaction discarded because of previous errors."), ErrUnavailable},
		{"oom", context.Background(), fakeRedisError("OOM command not allowed when used memory > 'maxmemory'."), ErrNoSpace},
		{"wrongtype", context.Background(), fakeRedisError("WRONGTYPE Operation against a key"), nil},
		{"caller left", canceled, &net.OpError{Op: "read", Err: context.Canceled}, nil},
		{"fn error", context.Background(), fnErr, nil},
		{"tx failed", context.Background(), redis.TxFailedErr, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := redisFailure(tc.ctx, tc.err)
			if tc.want == nil {
				if got != tc.err {
					t.Fatalf("got %v, want %v unchanged", got, tc.err)
				}
				return
			}
			if !errors.Is(got, tc.want) || !errors.Is(got, tc.err) {
				t.Fatalf("got %v, want %v wrapping %v", got, tc.want, tc.err)
			}
		})
	}
}
