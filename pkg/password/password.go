// Package password hashes and checks secrets (user passwords, client
// secrets) with argon2id, and remembers recent successful checks briefly so
// a client presenting its secret on every token request is not re-hashed
// each time.
package password

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/golang-lru/v2/expirable"
	"golang.org/x/crypto/argon2"
	"golang.org/x/sync/singleflight"
)

// Params are argon2id's cost parameters.
type Params struct {
	Time    uint32
	Memory  uint32 // KiB
	Threads uint8
}

// Default follows OWASP's argon2id recommendation (19 MiB, 2 passes).
var Default = Params{Time: 2, Memory: 19 * 1024, Threads: 1}

// ErrMismatch: the secret does not match the hash.
var ErrMismatch = errors.New("secret does not match")

// Hasher hashes with its parameters, caches successful checks, and runs a
// bounded number of argon2 computations at once.
type Hasher struct {
	p     Params
	cache *expirable.LRU[[32]byte, struct{}]
	dummy string
	// slots holds one token per argon2 computation allowed to run. Each
	// computation holds Memory KiB (19 MiB by default) for its whole run, so
	// a burst of logins or of password guesses, which anyone can send,
	// would otherwise hold that many times over and could exhaust the
	// service's memory. More single-threaded computations than CPUs gain
	// no throughput: the others wait their turn.
	slots chan struct{}
	key   func(secret, salt []byte, time, memory uint32, threads uint8, keyLen uint32) []byte
	// flight lets concurrent checks of one secret against one hash share
	// a computation (Verify): a client sending many requests at once
	// when its cached check expired costs one hash, not one each.
	flight singleflight.Group
	// computed counts argon2 computations (Computations).
	computed atomic.Uint64

	// Go's scavenger hands freed heap back to the operating system only
	// slowly, so the megabytes of a burst of computations (the demo's
	// seeding, a wave of logins) stayed resident for as long as the process
	// ran, doubling an idle service's memory. Once no computation has run
	// for idleRelease, release forces it back.
	idleMu      sync.Mutex
	idle        *time.Timer
	idleRelease time.Duration
	release     func()
}

// idleRelease is how long after its last argon2 computation a hasher hands
// the memory back: long enough that a stream of logins does not pay a
// forced collection each, short enough that an idle service is small.
const idleRelease = 2 * time.Second

// New returns a hasher; cacheTTL 0 disables the cache of checks. At most
// GOMAXPROCS argon2 computations run at once (Go sets GOMAXPROCS to a
// container's CPU limit), so the memory they hold is bounded by
// GOMAXPROCS × the memory cost.
func New(p Params, cacheTTL time.Duration) *Hasher {
	return newHasher(p, cacheTTL, runtime.GOMAXPROCS(0), argon2.IDKey)
}

func newHasher(p Params, cacheTTL time.Duration, limit int, key func([]byte, []byte, uint32, uint32, uint8, uint32) []byte) *Hasher {
	h := &Hasher{p: p, slots: make(chan struct{}, max(limit, 1)), key: key,
		idleRelease: idleRelease, release: debug.FreeOSMemory}
	if cacheTTL > 0 {
		h.cache = expirable.NewLRU[[32]byte, struct{}](10000, nil, cacheTTL)
	}
	h.dummy, _ = h.Hash(context.Background(), "dummy password for timing")
	return h
}

// derive computes argon2id in one of the slots, waiting for a free one
// until ctx ends.
func (h *Hasher) derive(ctx context.Context, secret, salt []byte, p Params, keyLen uint32) ([]byte, error) {
	select {
	case h.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-h.slots }()
	defer h.releaseWhenIdle()
	h.computed.Add(1)
	return h.key(secret, salt, p.Time, p.Memory, p.Threads, keyLen), nil
}

// releaseWhenIdle (re)starts the countdown to handing the computations'
// memory back to the operating system.
func (h *Hasher) releaseWhenIdle() {
	h.idleMu.Lock()
	defer h.idleMu.Unlock()
	if h.idle == nil {
		h.idle = time.AfterFunc(h.idleRelease, h.release)
		return
	}
	h.idle.Reset(h.idleRelease)
}

// Hash returns the PHC-style string of a new salted hash of secret. Its
// error is ctx's when ctx ends while it waits for a slot.
func (h *Hasher) Hash(ctx context.Context, secret string) (string, error) {
	salt := make([]byte, 16)
	if _, err := rand.Read(salt); err != nil {
		return "", err
	}
	sum, err := h.derive(ctx, []byte(secret), salt, h.p, 32)
	if err != nil {
		return "", err
	}
	enc := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, h.p.Memory, h.p.Time, h.p.Threads, enc.EncodeToString(salt), enc.EncodeToString(sum)), nil
}

// Check reports whether secret matches encoded: nil, ErrMismatch, ctx's
// error when ctx ends while it waits for a slot, or an error for a
// malformed hash.
func (h *Hasher) Check(ctx context.Context, encoded, secret string) error {
	var key [32]byte
	if h.cache != nil {
		key = sha256.Sum256([]byte(encoded + "\x00" + secret))
		if _, ok := h.cache.Get(key); ok {
			return nil
		}
	}
	if err := h.check(ctx, encoded, secret); err != nil {
		return err
	}
	if h.cache != nil {
		h.cache.Add(key, struct{}{})
	}
	return nil
}

// Gate is asked before Verify computes a hash: it may refuse (an abuse
// limit, pkg/ratelimit's Guard.Gate), else it returns what is told the
// check's outcome (nil, ErrMismatch, a context's or another error).
type Gate func(ctx context.Context) (done func(error), err error)

// Verify is Check for credentials presented over and over (client
// secrets, connectors' Basic passwords, passwords): a secret remembered
// from a successful check within the cache's TTL is accepted without
// asking gate, and concurrent checks of the same secret against the same
// hash share one computation, for which gate is asked once. A caller that
// joined a shared computation is not charged: only the one that ran it
// asked gate. When the shared run ended in anything but a verdict (its
// gate refused, its caller gave up), each waiting caller checks on its
// own. gate may be nil.
func (h *Hasher) Verify(ctx context.Context, encoded, secret string, gate Gate) error {
	key := sha256.Sum256([]byte(encoded + "\x00" + secret))
	if h.cache != nil {
		if _, ok := h.cache.Get(key); ok {
			return nil
		}
	}
	ran := false
	ch := h.flight.DoChan(string(key[:]), func() (any, error) {
		// A caller that missed the cache just before a shared run of the
		// same check remembered it, and came after that run ended, finds
		// it here instead of computing it again.
		if h.cache != nil {
			if _, ok := h.cache.Get(key); ok {
				return nil, nil
			}
		}
		ran = true
		return nil, h.verify(ctx, key, encoded, secret, gate)
	})
	var err error
	select {
	case r := <-ch:
		err = r.Err
	case <-ctx.Done():
		return ctx.Err()
	}
	if ran || err == nil || errors.Is(err, ErrMismatch) {
		return err
	}
	return h.verify(ctx, key, encoded, secret, gate)
}

func (h *Hasher) verify(ctx context.Context, key [32]byte, encoded, secret string, gate Gate) error {
	done := func(error) {}
	if gate != nil {
		d, err := gate(ctx)
		if err != nil {
			return err
		}
		done = d
	}
	err := h.check(ctx, encoded, secret)
	done(err)
	if err == nil && h.cache != nil {
		h.cache.Add(key, struct{}{})
	}
	return err
}

// Computations is how many argon2id computations the hasher ran (hashes,
// checks, burns): the cost that abuse limits bound.
func (h *Hasher) Computations() uint64 { return h.computed.Load() }

// Remembered reports whether secret was checked against encoded
// successfully within the cache's TTL, at no cost: callers skip what only
// guards a costly or failing check (pkg/ratelimit) for a credential known
// to be right.
func (h *Hasher) Remembered(encoded, secret string) bool {
	if h.cache == nil {
		return false
	}
	_, ok := h.cache.Get(sha256.Sum256([]byte(encoded + "\x00" + secret)))
	return ok
}

// Burn spends the time of one check; used when there is no hash to check
// against (unknown user), so timing does not tell whether an account exists.
func (h *Hasher) Burn(ctx context.Context, secret string) { _ = h.check(ctx, h.dummy, secret) }

func (h *Hasher) check(ctx context.Context, encoded, secret string) error {
	parts := strings.Split(encoded, "$")
	if len(parts) != 6 || parts[1] != "argon2id" {
		return errors.New("password: not an argon2id hash")
	}
	var v int
	if _, err := fmt.Sscanf(parts[2], "v=%d", &v); err != nil || v != argon2.Version {
		return errors.New("password: unsupported argon2 version")
	}
	var p Params
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &p.Memory, &p.Time, &p.Threads); err != nil {
		return errors.New("password: bad parameters")
	}
	salt, err := base64.RawStdEncoding.DecodeString(parts[4])
	if err != nil {
		return errors.New("password: bad salt")
	}
	want, err := base64.RawStdEncoding.DecodeString(parts[5])
	if err != nil || len(want) == 0 {
		return errors.New("password: bad hash")
	}
	got, err := h.derive(ctx, []byte(secret), salt, p, uint32(len(want)))
	if err != nil {
		return err
	}
	if subtle.ConstantTimeCompare(got, want) != 1 {
		return ErrMismatch
	}
	return nil
}
