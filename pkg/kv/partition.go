package kv

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Partitions. A service names, through a Partitioner, which keys must be
// atomic together: a transaction may touch the keys of one partition only,
// on every backend alike, while reads outside transactions may span any. On
// Redis each partition is a hash tag of its own, with its own scan and
// expiry index, so a Redis Cluster spreads a service's partitions over its
// shards; bbolt keeps one key space and only enforces the rule, so a
// transaction that would fail on a Cluster fails everywhere, in every test.

// ErrCrossPartition is a transaction touching keys of two partitions, or
// scanning a prefix whose keys may lie in several: a bug in the caller.
var ErrCrossPartition = errors.New("kv: transaction spans partitions")

// Partitioner maps keys to partitions. "" is the store's base partition,
// where every key of a store without a Partitioner lives.
type Partitioner interface {
	// Key returns the partition of key.
	Key(key string) string
	// Prefix returns the partitions that may hold keys starting with
	// prefix; nil means any partition. A transaction may only scan a prefix
	// of one.
	Prefix(prefix string) []string
}

// Segments partitions keys of the form kind/seg1/seg2/.../rest: for a kind
// (its first segment with the '/', e.g. "doc/") listed with n, the next n
// '/'-terminated segments name the partition, so doc/a/b/x and sum/a/b/y
// share partition "a/b" under Segments{"doc/": 2, "sum/": 2}. Keys of other
// kinds, and keys too short to hold n segments, are in the base partition.
type Segments map[string]int

// Key implements Partitioner.
func (s Segments) Key(key string) string {
	p, _ := s.split(key)
	return p
}

// Prefix implements Partitioner.
func (s Segments) Prefix(prefix string) []string {
	if len(s) == 0 {
		return []string{""}
	}
	i := strings.IndexByte(prefix, '/')
	if i < 0 {
		return nil // the kind itself is not fixed yet
	}
	n, ok := s[prefix[:i+1]]
	if !ok {
		return []string{""}
	}
	if p, whole := s.segments(prefix[i+1:], n); whole {
		return []string{p}
	}
	return nil
}

func (s Segments) split(key string) (string, bool) {
	i := strings.IndexByte(key, '/')
	if i < 0 {
		return "", false
	}
	n, ok := s[key[:i+1]]
	if !ok {
		return "", false
	}
	return s.segments(key[i+1:], n)
}

// segments returns the first n '/'-terminated segments of rest, joined,
// and whether rest holds that many.
func (Segments) segments(rest string, n int) (string, bool) {
	end := 0
	for range n {
		j := strings.IndexByte(rest[end:], '/')
		if j < 0 {
			return "", false
		}
		end += j + 1
	}
	return strings.TrimSuffix(rest[:end], "/"), n > 0
}

// pin holds a transaction to the partition of the first key it touches.
type pin struct {
	parts Partitioner // nil: everything is in the base partition
	set   bool
	part  string
	// free: the transaction may span partitions (a group commit's shared
	// transaction on a backend that allows it); each write in it is held
	// to one partition by a pinnedTx of its own.
	free bool
}

// key returns key's partition, pinning the transaction to it, or
// ErrCrossPartition when it is pinned to another.
func (p *pin) key(key string) (string, error) {
	part := ""
	if p.parts != nil {
		part = p.parts.Key(key)
	}
	return part, p.to(part, key)
}

// prefix is key for the keys a scan of prefix may return.
func (p *pin) prefix(prefix string) (string, error) {
	if p.parts == nil {
		return "", p.to("", prefix)
	}
	parts := p.parts.Prefix(prefix)
	if len(parts) != 1 {
		return "", fmt.Errorf("%w: scan of %q may read several", ErrCrossPartition, prefix)
	}
	return parts[0], p.to(parts[0], prefix)
}

func (p *pin) to(part, key string) error {
	if p.free {
		return nil
	}
	if !p.set {
		p.set, p.part = true, part
		return nil
	}
	if part != p.part {
		return fmt.Errorf("%w: %q is in partition %q, the transaction in %q", ErrCrossPartition, key, part, p.part)
	}
	return nil
}

// pinnedTx enforces the partition rule on a backend whose transactions
// could span partitions (bbolt), so it refuses what Redis must.
type pinnedTx struct {
	Tx
	pin pin
}

func (t *pinnedTx) Get(ctx context.Context, key string) ([]byte, error) {
	if !validKey(key) {
		return nil, ErrNotFound
	}
	if _, err := t.pin.key(key); err != nil {
		return nil, err
	}
	return t.Tx.Get(ctx, key)
}

func (t *pinnedTx) Scan(ctx context.Context, prefix, after string, limit int) ([]Entry, error) {
	if _, err := t.pin.prefix(prefix); err != nil {
		return nil, err
	}
	return t.Tx.Scan(ctx, prefix, after, limit)
}

func (t *pinnedTx) Put(key string, value []byte, ttl time.Duration) error {
	if err := checkKey(key); err != nil {
		return err
	}
	if _, err := t.pin.key(key); err != nil {
		return err
	}
	return t.Tx.Put(key, value, ttl)
}

func (t *pinnedTx) Delete(key string) error {
	if !validKey(key) {
		return nil
	}
	if _, err := t.pin.key(key); err != nil {
		return err
	}
	return t.Tx.Delete(key)
}
