// Package testredis hands tests the Redis servers that `make test` provides:
// a single redis-server (REDIS_URL) and a Redis Cluster of three masters
// with a replica each (REDIS_CLUSTER_URL, redis://h1:p1,h2:p2,...).
package testredis

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Client returns a client for REDIS_URL. Without REDIS_URL the test is
// skipped, except under CI=true, where a missing Redis fails the run.
func Client(t testing.TB) redis.UniversalClient {
	t.Helper()
	url := need(t, "REDIS_URL", "a throwaway redis-server")
	o, err := redis.ParseURL(url)
	if err != nil {
		t.Fatalf("REDIS_URL: %v", err)
	}
	return ping(t, "REDIS_URL", redis.NewClient(o))
}

// URL returns REDIS_URL under the same rules as Client.
func URL(t testing.TB) string {
	t.Helper()
	Client(t)
	return os.Getenv("REDIS_URL")
}

// ClusterClient returns a Cluster client for REDIS_CLUSTER_URL, under the
// same rules as Client.
func ClusterClient(t testing.TB) redis.UniversalClient {
	t.Helper()
	url := need(t, "REDIS_CLUSTER_URL", "a throwaway Redis Cluster")
	// The URL form kv.ParseRedisURL reads as Cluster; kv is not imported
	// here because kv's own tests use this package.
	hosts, ok := strings.CutPrefix(url, "redis://")
	if !ok || strings.ContainsAny(hosts, "/?@") {
		t.Fatalf("REDIS_CLUSTER_URL %q: want redis://host:port,host:port,...", url)
	}
	return ping(t, "REDIS_CLUSTER_URL", redis.NewClusterClient(&redis.ClusterOptions{Addrs: strings.Split(hosts, ",")}))
}

// ClusterURL returns REDIS_CLUSTER_URL under the same rules as Client.
func ClusterURL(t testing.TB) string {
	t.Helper()
	ClusterClient(t)
	return os.Getenv("REDIS_CLUSTER_URL")
}

func need(t testing.TB, env, what string) string {
	t.Helper()
	url := os.Getenv(env)
	if url == "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is not set; CI must run the Redis backend tests (use `make test`)", env)
		}
		t.Skipf("%s not set; `make test` starts %s", env, what)
	}
	return url
}

func ping(t testing.TB, env string, c redis.UniversalClient) redis.UniversalClient {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.Ping(ctx).Err(); err != nil {
		_ = c.Close()
		t.Fatalf("redis at %s does not answer: %v", env, err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// Prefix returns a key prefix unique to this test, so tests never share keys.
func Prefix(t testing.TB) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return "test:" + hex.EncodeToString(b[:])
}
