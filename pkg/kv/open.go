package kv

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"time"
)

// Config selects and configures a backend. Services register its flags with
// their own names so one process can run with FRIS_<SVC>_STORE and friends.
type Config struct {
	Backend  string // "bolt" (default) or "redis"
	DataDir  string
	RedisURL string
	// RedisPrefix overrides the key prefix "fris:<service>", e.g. to run
	// several deployments (or tests) on one Redis.
	RedisPrefix string
	BatchDelay  time.Duration
	// RedisTimeout bounds each Redis dial, read, write and pool wait.
	RedisTimeout time.Duration
	// RedisWait is how long Open keeps trying a Redis that does not answer
	// yet: in a compose file or a pod, Redis may start after the service,
	// and ordering by healthchecks is not available everywhere (podman
	// without systemd never runs them). 0: one try.
	RedisWait time.Duration
	// Partitions is the service's, not a flag: which keys its
	// transactions need together (see partition.go).
	Partitions Partitioner
	// LargestWrite is the service's, not a flag: the biggest record a
	// client can make it write (an upload's largest document). After a
	// write failed for lack of space, the embedded store is ready again
	// only once a write of this size succeeds (BoltOptions.ProbeBytes).
	LargestWrite int64
}

// DefaultDataDir is -data-dir's default, below the working directory.
const DefaultDataDir = ".fris/data"

// RegisterFlags adds -store, -data-dir, -redis-url and -batch-delay to fs.
// A BatchDelay set before is the flag's default (else 1ms).
func (c *Config) RegisterFlags(fs *flag.FlagSet) {
	fs.StringVar(&c.Backend, "store", "bolt", "storage backend: bolt (embedded, on disk) or redis")
	fs.StringVar(&c.DataDir, "data-dir", DefaultDataDir, "directory of the embedded store's files")
	fs.StringVar(&c.RedisURL, "redis-url", "redis://127.0.0.1:6379/0", "Redis URL (redis://, rediss://; h1,h2 for Cluster; ?master_name= for Sentinel)")
	fs.StringVar(&c.RedisPrefix, "redis-prefix", "", "Redis key prefix (default fris:<service>)")
	fs.DurationVar(&c.RedisTimeout, "redis-timeout", DefaultRedisTimeout, "bound of each Redis dial, read, write and wait for a connection (one retry): a Redis that does not answer fails requests with 503 within about twice this")
	fs.DurationVar(&c.RedisWait, "redis-wait", 30*time.Second, "how long the service keeps trying to reach Redis at start before it gives up (Redis may start after it)")
	def := c.BatchDelay
	if def == 0 {
		def = time.Millisecond
	}
	fs.DurationVar(&c.BatchDelay, "batch-delay", def, "how long a write waits to share one commit (one fsync) with concurrent writes, on both stores; 0 on redis: no sharing")
}

// Validate reports configuration mistakes before anything is opened.
func (c *Config) Validate() error {
	switch c.Backend {
	case "bolt":
		if c.DataDir == "" {
			return fmt.Errorf("store bolt needs -data-dir")
		}
	case "redis":
		if c.RedisURL == "" {
			return fmt.Errorf("store redis needs -redis-url")
		}
		if _, err := ParseRedisURL(c.RedisURL); err != nil {
			return err
		}
		if c.RedisTimeout < 0 || c.RedisTimeout > time.Minute {
			return fmt.Errorf("-redis-timeout must be between 0 (default %s) and 1m", DefaultRedisTimeout)
		}
		if c.RedisWait < 0 {
			return fmt.Errorf("-redis-wait must not be negative")
		}
	default:
		return fmt.Errorf("unknown store %q (want bolt or redis)", c.Backend)
	}
	return nil
}

// Open opens the configured backend for the named service: the file
// <data-dir>/<name>.db, or keys under the hash tags {fris:<name>} (the base
// partition) and {fris:<name>:<partition>} in Redis (one Cluster slot per
// partition). A Redis store with partitions first moves keys an older
// layout kept in the base partition into their own (Redis.MoveToPartitions).
func Open(ctx context.Context, c Config, name string, log *slog.Logger) (Store, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if c.Backend == "redis" {
		prefix := c.RedisPrefix
		if prefix == "" {
			prefix = "fris:" + name
		}
		r, err := openRedisWaiting(ctx, c, RedisOptions{Prefix: prefix, Logger: log, BatchDelay: c.BatchDelay, Timeout: c.RedisTimeout, Partitions: c.Partitions}, log)
		if err != nil {
			return nil, err
		}
		n, err := r.MoveToPartitions(ctx)
		if err != nil {
			_ = r.Close()
			return nil, fmt.Errorf("kv: move keys to their partitions: %w", err)
		}
		if n > 0 {
			log.Info("kv: moved keys of the single-partition layout to their partitions", "keys", n)
		}
		return r, nil
	}
	return OpenBolt(BoltFile(c.DataDir, name), BoltOptions{BatchDelay: c.BatchDelay, Logger: log, Partitions: c.Partitions, ProbeBytes: c.LargestWrite})
}

// openRedisWaiting opens Redis, trying again with a growing pause for up to
// c.RedisWait while it does not answer. The URL was validated before, so
// every failure here is one of reaching the server.
func openRedisWaiting(ctx context.Context, c Config, o RedisOptions, log *slog.Logger) (*Redis, error) {
	deadline := time.Now().Add(c.RedisWait)
	pause := 250 * time.Millisecond
	for {
		r, err := OpenRedis(ctx, c.RedisURL, o)
		if err == nil || !time.Now().Add(pause).Before(deadline) {
			return r, err
		}
		log.WarnContext(ctx, "kv: redis does not answer yet, trying again", "err", err, "retry_in", pause, "gives_up_in", time.Until(deadline).Round(time.Second))
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(pause):
		}
		pause = min(2*pause, 5*time.Second)
	}
}

// OpenVolatile opens the store for short-lived, single-use records (login
// codes, sign requests) whose loss in a crash only makes a client ask again,
// next to main (what Open returned for the same config and name). The
// embedded backend keeps them in a second file, <name>-volatile.db, written
// without fsync (each such record would otherwise cost a disk flush), each
// write committed at once (no group-commit window to wait for), and
// therefore recreated at every start: a file written without fsync may be
// torn after a power loss. Redis keeps them with the service's other keys,
// where replicas share them; main is returned, and closing the result does
// not close it.
func OpenVolatile(c Config, name string, main Store, log *slog.Logger) (Store, error) {
	if c.Backend == "redis" {
		return unclosable{main}, nil
	}
	path := filepath.Join(c.DataDir, name+"-volatile.db")
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("kv: remove old %s: %w", path, err)
	}
	return OpenBolt(path, BoltOptions{NoSync: true, Unbatched: true, Logger: log, Partitions: c.Partitions})
}

// unclosable shares a store without handing over its Close.
type unclosable struct{ Store }

func (unclosable) Close() error { return nil }
