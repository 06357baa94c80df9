// Package kv is the storage layer every FRIS service builds its store on: an
// ordered key-value space with TTLs, prefix scans and atomic read-modify-write
// transactions. It has exactly two production backends, an embedded on-disk
// store (bbolt) and Redis (go-redis v9), which must behave identically; the
// suite in kvtest holds both to the same contract.
package kv

import (
	"context"
	"errors"
	"time"
)

// Sentinel errors shared by every service store. Services re-export them from
// their own internal/storage package; rpcerr maps them to gRPC codes.
var (
	ErrNotFound = errors.New("not found")
	ErrExists   = errors.New("already exists")
	ErrConflict = errors.New("conflict")
)

// Entry is one key and its value, as returned by scans.
type Entry struct {
	Key   string
	Value []byte
}

// Reader is the read side shared by a Store and a transaction.
type Reader interface {
	// Get returns the value of key, or ErrNotFound when it is absent or expired
	// (a key Put would refuse, empty or overlong, is absent).
	Get(ctx context.Context, key string) ([]byte, error)
	// Scan returns up to limit entries whose key starts with prefix and sorts
	// strictly after `after` (byte order); limit <= 0 means no limit.
	Scan(ctx context.Context, prefix, after string, limit int) ([]Entry, error)
}

// Tx is an atomic read-modify-write transaction. Reads see the state as of the
// transaction; writes become visible together when the function returns nil.
type Tx interface {
	Reader
	// Put stores value under key; ttl > 0 makes the key expire after ttl.
	Put(key string, value []byte, ttl time.Duration) error
	// Delete removes key; deleting an absent key (or one Put would refuse) is
	// not an error.
	Delete(key string) error
}

// Store is a key space owned by one service.
type Store interface {
	Reader
	// Update runs fn atomically. fn may be called more than once (optimistic
	// retries on Redis, batch retries on bbolt), so it must have no effects
	// outside tx. An error from fn aborts the transaction and is returned.
	Update(ctx context.Context, fn func(tx Tx) error) error
	// Ping reports whether the backend answers; used by readiness checks.
	Ping(ctx context.Context) error
	Close() error
}

// MaxKeyLen bounds keys so both backends accept every key the other does.
const MaxKeyLen = 1024

var errBadKey = errors.New("kv: key empty or longer than 1024 bytes")

// checkKey refuses keys that Put cannot store. Get and Delete do not call it:
// such a key is simply absent, and ids from outside (a client ID, a code)
// reach the store unchecked, so an overlong one must read as unknown, not
// fail as an internal error.
func checkKey(key string) error {
	if !validKey(key) {
		return errBadKey
	}
	return nil
}

func validKey(key string) bool { return key != "" && len(key) <= MaxKeyLen }

// PrefixEnd returns the smallest key greater than every key with the prefix,
// or "" when there is none (prefix of 0xff bytes).
func PrefixEnd(prefix string) string {
	b := []byte(prefix)
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] < 0xff {
			b[i]++
			return string(b[:i+1])
		}
	}
	return ""
}

// now is indirected through the store options so tests can move time.
type clock func() time.Time
