package kv_test

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"fris.dev/pkg/kv"
	"fris.dev/pkg/testredis"
)

// proxy stands between the store and Redis so a test can make Redis stuck
// (connections accepted, nothing answered) or down (connections refused).
type proxy struct {
	target string
	addr   string

	mu     sync.Mutex
	lis    net.Listener
	stuck  bool
	conns  []net.Conn
	closed chan struct{}
}

func newProxy(t *testing.T, target string) *proxy {
	p := &proxy{target: target}
	p.listen(t, "127.0.0.1:0")
	p.addr = p.lis.Addr().String()
	t.Cleanup(p.down)
	return p
}

func (p *proxy) listen(t *testing.T, addr string) {
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	p.mu.Lock()
	p.lis, p.stuck = lis, false
	p.mu.Unlock()
	go func() {
		for {
			c, err := lis.Accept()
			if err != nil {
				return
			}
			p.mu.Lock()
			p.conns = append(p.conns, c)
			stuck := p.stuck
			p.mu.Unlock()
			if stuck {
				continue // never answered
			}
			up, err := net.Dial("tcp", p.target)
			if err != nil {
				_ = c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, up)
			p.mu.Unlock()
			go func() { _, _ = io.Copy(up, c); _ = up.Close() }()
			go func() { _, _ = io.Copy(c, up); _ = c.Close() }()
		}
	}()
}

// freeze cuts every connection's way to Redis but keeps the client side
// open, as a Redis that stopped answering would.
func (p *proxy) freeze() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stuck = true
	var keep []net.Conn
	for _, c := range p.conns {
		if c.RemoteAddr().String() == p.target {
			_ = c.Close()
		} else {
			keep = append(keep, c)
		}
	}
	p.conns = keep
}

func (p *proxy) down() {
	p.mu.Lock()
	defer p.mu.Unlock()
	_ = p.lis.Close()
	for _, c := range p.conns {
		_ = c.Close()
	}
	p.conns = nil
}

// A Redis that is stuck or down fails every operation with ErrUnavailable
// within a bounded time, and the store recovers by itself when Redis is
// back.
func TestRedisUnavailableFailsFastAndRecovers(t *testing.T) {
	url := testredis.URL(t)
	o, err := redis.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	p := newProxy(t, o.Addr)
	const timeout = 200 * time.Millisecond
	const failBound = 10 * timeout
	ctx := context.Background()
	s, err := kv.OpenRedis(ctx, strings.Replace(url, o.Addr, p.addr, 1), kv.RedisOptions{Prefix: testredis.Prefix(t), Timeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	put := func() error { return s.Update(ctx, func(tx kv.Tx) error { return tx.Put("k", []byte("v"), 0) }) }
	get := func() error { _, err := s.Get(ctx, "k"); return err }
	scan := func() error { _, err := s.Scan(ctx, "", "", 0); return err }
	ops := map[string]func() error{"Update": put, "Get": get, "Scan": scan, "Ping": func() error { return s.Ping(ctx) }}
	if err := put(); err != nil {
		t.Fatal(err)
	}

	// failing checks every operation fails with ErrUnavailable in time.
	failing := func(t *testing.T, within time.Duration) {
		t.Helper()
		for name, op := range ops {
			start := time.Now()
			err := op()
			took := time.Since(start)
			if !errors.Is(err, kv.ErrUnavailable) {
				t.Errorf("%s: %v, want ErrUnavailable", name, err)
			}
			if took > within {
				t.Errorf("%s took %v, want at most %v", name, took, within)
			}
		}
	}
	// recovers waits until every operation works again, without a reopen.
	recovers := func(t *testing.T) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for name, op := range ops {
			for {
				err := op()
				if err == nil {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("%s still fails: %v", name, err)
				}
				time.Sleep(20 * time.Millisecond)
			}
		}
	}

	t.Run("Stuck", func(t *testing.T) {
		p.freeze()
		// One attempt and one retry, each bounded by the timeout: about
		// 2*timeout. The bound leaves a busy machine room and still tells
		// the store's bound from go-redis's defaults (3 s reads, 5 s dials,
		// 3 retries) and from a hang.
		failing(t, failBound)
		p.down()
		p.listen(t, p.addr)
		recovers(t)
	})
	t.Run("Down", func(t *testing.T) {
		p.down()
		failing(t, failBound)
		p.listen(t, p.addr)
		recovers(t)
	})
}
