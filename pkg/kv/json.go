package kv

import (
	"context"
	"encoding/json"
	"fmt"
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
