package app

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

type lockedBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}
func (l *lockedBuf) String() string { l.mu.Lock(); defer l.mu.Unlock(); return l.b.String() }

// runGateway starts Run with the given flags and returns its address.
func runGateway(t *testing.T, args ...string) string {
	t.Helper()
	return runGatewayAddrs(t, args...)["http"]
}

// runGatewayAddrs starts Run with the given flags and returns the addresses
// it listens on, by name ("http", "ops").
func runGatewayAddrs(t *testing.T, args ...string) map[string]string {
	t.Helper()
	cfg := defaultConfig(t, append([]string{"-addr", "127.0.0.1:0", "-ops-addr", "127.0.0.1:0", "-jwks-url", "", "-insecure-plaintext"}, args...)...)
	var logs lockedBuf
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Run(ctx, cfg, slog.New(slog.NewJSONHandler(&logs, nil))) }()
	t.Cleanup(func() { cancel(); <-done })
	for i := 0; i < 300; i++ {
		for _, line := range strings.Split(logs.String(), "\n") {
			var rec map[string]string
			if json.Unmarshal([]byte(line), &rec) == nil && rec["msg"] == "listening" {
				return rec
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("gateway did not listen: %s", logs.String())
	return nil
}

func TestMaxConns(t *testing.T) {
	addr := runGateway(t, "-max-conns", "2")
	var held []net.Conn
	for range 2 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
	}
	time.Sleep(100 * time.Millisecond)
	quick := &http.Client{Timeout: 300 * time.Millisecond}
	if res, err := quick.Get("http://" + addr + "/healthz"); err == nil {
		res.Body.Close()
		t.Fatal("a third connection was served beside two held ones")
	}
	_ = held[0].Close()
	res, err := (&http.Client{Timeout: 5 * time.Second}).Get("http://" + addr + "/healthz")
	if err != nil {
		t.Fatalf("not served once a slot was free: %v", err)
	}
	res.Body.Close()
	_ = held[1].Close()
}

// A kept-alive connection is closed after -idle-timeout, and one that sends
// its headers too slowly after -read-header-timeout.
func TestIdleAndHeaderTimeouts(t *testing.T) {
	addr := runGateway(t, "-idle-timeout", "300ms", "-read-header-timeout", "300ms")
	closedWithin := func(t *testing.T, c net.Conn, d time.Duration) {
		t.Helper()
		_ = c.SetReadDeadline(time.Now().Add(d))
		if _, err := io.Copy(io.Discard, c); err != nil {
			t.Fatalf("connection still open after %v: %v", d, err)
		}
	}
	t.Run("Idle", func(t *testing.T) {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		_, _ = io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
		res, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil || res.StatusCode != 200 {
			t.Fatalf("%v %v", res, err)
		}
		_, _ = io.Copy(io.Discard, res.Body)
		closedWithin(t, c, 10*time.Second)
	})
	t.Run("SlowHeaders", func(t *testing.T) {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		_, _ = io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: x\r\n")
		closedWithin(t, c, 10*time.Second)
	})
}
