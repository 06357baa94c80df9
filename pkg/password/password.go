// Package password hashes and checks secrets (user passwords, client
// secrets) with argon2id, and remembers recent successful checks briefly so
// a client presenting its secret on every token request is not re-hashed
// each time.
package password

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/golang-lru/v2/expirable"
	"golang.org/x/crypto/argon2"
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

// Hasher hashes with its parameters and caches successful checks.
type Hasher struct {
	p     Params
	cache *expirable.LRU[[32]byte, struct{}]
	dummy string
}

// New returns a hasher; cacheTTL 0 disables the cache of checks.
func New(p Params, cacheTTL time.Duration) *Hasher {
	h := &Hasher{p: p}
	if cacheTTL > 0 {
		h.cache = expirable.NewLRU[[32]byte, struct{}](10000, nil, cacheTTL)
	}
	h.dummy, _ = h.Hash("dummy password for timing")
	return h
}

// Hash returns the PHC-style string of a new salted hash of secret.
func (h *Hasher) Hash(secret string) (string, error) {
	salt := make([]byte, 16)
	if _, err := rand.Read(salt); err != nil {
		return "", err
	}
	sum := argon2.IDKey([]byte(secret), salt, h.p.Time, h.p.Memory, h.p.Threads, 32)
	enc := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, h.p.Memory, h.p.Time, h.p.Threads, enc.EncodeToString(salt), enc.EncodeToString(sum)), nil
}

// Check reports whether secret matches encoded (ErrMismatch if not).
func (h *Hasher) Check(encoded, secret string) error {
	var key [32]byte
	if h.cache != nil {
		key = sha256.Sum256([]byte(encoded + "\x00" + secret))
		if _, ok := h.cache.Get(key); ok {
			return nil
		}
	}
	if err := check(encoded, secret); err != nil {
		return err
	}
	if h.cache != nil {
		h.cache.Add(key, struct{}{})
	}
	return nil
}

// Burn spends the time of one check; used when there is no hash to check
// against (unknown user), so timing does not tell whether an account exists.
func (h *Hasher) Burn(secret string) { _ = check(h.dummy, secret) }

func check(encoded, secret string) error {
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
	got := argon2.IDKey([]byte(secret), salt, p.Time, p.Memory, p.Threads, uint32(len(want)))
	if subtle.ConstantTimeCompare(got, want) != 1 {
		return ErrMismatch
	}
	return nil
}
