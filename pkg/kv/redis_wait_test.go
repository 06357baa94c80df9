package kv_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"fris.dev/pkg/kv"
	"fris.dev/pkg/testredis"
)

// signalHandler closes retried at the first "trying again" record.
type signalHandler struct {
	slog.Handler
	retried chan struct{}
}

func (signalHandler) Enabled(context.Context, slog.Level) bool { return true }

func (h signalHandler) Handle(ctx context.Context, r slog.Record) error {
	if strings.Contains(r.Message, "trying again") {
		select {
		case <-h.retried:
		default:
			close(h.retried)
		}
	}
	return nil
}

// A service started before its Redis keeps trying for -redis-wait and opens
// the store once Redis answers; with no wait it fails at the first try.
func TestOpenWaitsForRedis(t *testing.T) {
	url := testredis.URL(t)
	o, err := redis.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	p := newProxy(t, o.Addr)
	p.down() // Redis "not started yet": the port refuses connections
	cfg := kv.Config{Backend: "redis", RedisURL: strings.Replace(url, o.Addr, p.addr, 1), RedisPrefix: testredis.Prefix(t)}

	if _, err := kv.Open(context.Background(), cfg, "wait", nil); err == nil {
		t.Fatal("Open without -redis-wait succeeded against a closed port")
	}

	cfg.RedisWait = 10 * time.Minute // generous: the test ends as soon as Redis answers
	h := signalHandler{Handler: slog.DiscardHandler, retried: make(chan struct{})}
	type result struct {
		s   kv.Store
		err error
	}
	done := make(chan result, 1)
	go func() {
		s, err := kv.Open(context.Background(), cfg, "wait", slog.New(h))
		done <- result{s, err}
	}()
	<-h.retried
	p.listen(t, p.addr) // Redis comes up
	r := <-done
	if r.err != nil {
		t.Fatalf("Open after Redis came up: %v", r.err)
	}
	defer r.s.Close()
	ctx := context.Background()
	if err := r.s.Update(ctx, func(tx kv.Tx) error { return tx.Put("k", []byte("v"), 0) }); err != nil {
		t.Fatalf("write after the wait: %v", err)
	}
}

// The wait ends with the caller's context (a stop during the wait).
func TestOpenWaitEndsWithContext(t *testing.T) {
	url := testredis.URL(t)
	o, err := redis.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	p := newProxy(t, o.Addr)
	p.down()
	cfg := kv.Config{Backend: "redis", RedisURL: strings.Replace(url, o.Addr, p.addr, 1), RedisWait: 10 * time.Minute}
	ctx, cancel := context.WithCancel(context.Background())
	h := signalHandler{Handler: slog.DiscardHandler, retried: make(chan struct{})}
	done := make(chan error, 1)
	go func() {
		_, err := kv.Open(ctx, cfg, "wait", slog.New(h))
		done <- err
	}()
	<-h.retried
	cancel()
	if err := <-done; err == nil {
		t.Fatal("Open succeeded after its context ended, with Redis down")
	}
}
