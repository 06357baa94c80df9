// Package testredis hands tests the Redis that `make test` provides.
package testredis

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Client returns a client for REDIS_URL. Without REDIS_URL the test is
// skipped, except under CI=true, where a missing Redis fails the run.
func Client(t testing.TB) redis.UniversalClient {
	t.Helper()
	url := os.Getenv("REDIS_URL")
	if url == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("REDIS_URL is not set; CI must run the Redis backend tests (use `make test`)")
		}
		t.Skip("REDIS_URL not set; `make test` starts a throwaway redis-server")
	}
	o, err := redis.ParseURL(url)
	if err != nil {
		t.Fatalf("REDIS_URL: %v", err)
	}
	c := redis.NewClient(o)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.Ping(ctx).Err(); err != nil {
		t.Fatalf("redis at REDIS_URL does not answer: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// URL returns REDIS_URL under the same rules as Client.
func URL(t testing.TB) string {
	t.Helper()
	Client(t)
	return os.Getenv("REDIS_URL")
}

// Prefix returns a key prefix unique to this test, so tests never share keys.
func Prefix(t testing.TB) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return "test:" + hex.EncodeToString(b[:])
}
