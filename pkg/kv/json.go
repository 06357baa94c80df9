package kv

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"
)

// The services keep most records as JSON. These helpers are the one way to
// do so: a record that does not decode is reported the same everywhere,
// naming its key, and an absent one is ErrNotFound exactly as Get returns
// it, for rpcerr to map.

// GetJSON reads and decodes the record at key; an absent key is ErrNotFound.
func GetJSON[T any](ctx context.Context, r Reader, key string) (T, error) {
	var v T
	b, err := r.Get(ctx, key)
	if err != nil {
		return v, err
	}
	if err := json.Unmarshal(b, &v); err != nil {
		var zero T
		return zero, fmt.Errorf("decode %s: %w", key, err)
	}
	return v, nil
}

// PutJSON encodes v and stores it under key; ttl as for Tx.Put.
func PutJSON(tx Tx, key string, v any, ttl time.Duration) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode %s: %w", key, err)
	}
	return tx.Put(key, b, ttl)
}

// ScanJSON decodes the records Scan(prefix, after, limit) returns, in key
// order. One record that does not decode fails the whole scan: a list with a
// silent gap would be wrong in a way no caller could tell.
func ScanJSON[T any](ctx context.Context, r Reader, prefix, after string, limit int) ([]T, error) {
	es, err := r.Scan(ctx, prefix, after, limit)
	if err != nil {
		return nil, err
	}
	out := make([]T, 0, len(es))
	for _, e := range es {
		var v T
		if err := json.Unmarshal(e.Value, &v); err != nil {
			return nil, fmt.Errorf("decode %s: %w", e.Key, err)
		}
		out = append(out, v)
	}
	return out, nil
}

// JSONCache remembers, per key, the value last decoded and the stored
// bytes it came from, so that a hot record read again unchanged is not
// decoded again (auth reads the user and client of every token it issues).
// A read still reads the stored bytes and compares them: a record changed
// by any writer, another replica on Redis included, reads different bytes
// and is decoded anew, so the cache is never stale. Values are handed out
// through clone, which must copy what a caller could change in place
// (slices, maps) so that no two callers share it.
type JSONCache[T any] struct {
	clone func(T) T
	max   int

	mu sync.Mutex
	m  map[string]decoded[T]
}

type decoded[T any] struct {
	raw []byte
	v   T
}

// NewJSONCache holds at most max records; clone copies a value's slices
// and maps (nil: T has none).
func NewJSONCache[T any](max int, clone func(T) T) *JSONCache[T] {
	if clone == nil {
		clone = func(v T) T { return v }
	}
	return &JSONCache[T]{clone: clone, max: max, m: make(map[string]decoded[T])}
}

// Get is GetJSON(ctx, r, key), decoding only bytes it has not decoded for
// key before.
func (c *JSONCache[T]) Get(ctx context.Context, r Reader, key string) (T, error) {
	var v T
	b, err := r.Get(ctx, key)
	if err != nil {
		return v, err
	}
	c.mu.Lock()
	e, ok := c.m[key]
	c.mu.Unlock()
	if ok && bytes.Equal(e.raw, b) {
		return c.clone(e.v), nil
	}
	if err := json.Unmarshal(b, &v); err != nil {
		var zero T
		return zero, fmt.Errorf("decode %s: %w", key, err)
	}
	c.mu.Lock()
	if _, ok := c.m[key]; !ok && len(c.m) >= c.max {
		// Full: forget some other record (map order is arbitrary). A
		// record forgotten is only decoded again.
		for k := range c.m {
			delete(c.m, k)
			break
		}
	}
	c.m[key] = decoded[T]{raw: bytes.Clone(b), v: c.clone(v)}
	c.mu.Unlock()
	return v, nil
}
