// Package envelope encrypts the identity provider's private signing keys at
// rest: AES-256-GCM under a system secret, with several secrets accepted so
// the secret can rotate without losing a key.
package envelope

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"
)

// SecretSize is the length of a system secret: an AES-256 key.
const SecretSize = 32

// Sealed layout: version | secret id | nonce | ciphertext and tag. The
// header travels in the clear so Open can pick the secret without trying
// each one, and it is authenticated along with the key id.
const (
	version  = 1
	idSize   = 4
	hdrSize  = 1 + idSize
	aadLabel = "fris-auth signing key\x00"
)

var (
	// ErrUnknownSecret: the value was sealed under a secret that is not
	// among the configured ones.
	ErrUnknownSecret = errors.New("sealed under a key secret that is not configured")
	// ErrCorrupt: the value does not decrypt under the secret it names:
	// altered, truncated, or moved from another key's record.
	ErrCorrupt = errors.New("does not decrypt: altered, or sealed for another key id")
)

type secret struct {
	id   [idSize]byte
	aead cipher.AEAD
}

// Box seals with its first secret and opens with any of them.
type Box struct {
	secrets []secret
}

// New returns a box over secrets, each SecretSize bytes; the first seals.
func New(secrets [][]byte) (*Box, error) {
	if len(secrets) == 0 {
		return nil, errors.New("no key secret")
	}
	b := &Box{}
	seen := map[[idSize]byte]bool{}
	for i, s := range secrets {
		if len(s) != SecretSize {
			return nil, fmt.Errorf("key secret %d has %d bytes, want %d (make one with: head -c 32 /dev/urandom | base64)", i+1, len(s), SecretSize)
		}
		block, err := aes.NewCipher(s)
		if err != nil {
			return nil, err
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, err
		}
		id := ID(s)
		var sid [idSize]byte
		copy(sid[:], id)
		if seen[sid] {
			return nil, fmt.Errorf("key secret %d repeats an earlier one (id %x)", i+1, sid)
		}
		seen[sid] = true
		b.secrets = append(b.secrets, secret{id: sid, aead: aead})
	}
	return b, nil
}

// ID is a secret's short public name: the first bytes of its SHA-256. It
// is stored with every value the secret seals and shown in logs; it tells
// nothing useful about a 32-byte random secret.
func ID(s []byte) []byte {
	sum := sha256.Sum256(s)
	return sum[:idSize]
}

// Current is the hex id of the sealing secret.
func (b *Box) Current() string { return hex.EncodeToString(b.secrets[0].id[:]) }

// IDs are the hex ids of all secrets, the sealing one first.
func (b *Box) IDs() []string {
	out := make([]string, len(b.secrets))
	for i, s := range b.secrets {
		out[i] = hex.EncodeToString(s.id[:])
	}
	return out
}

// aad binds a sealed value to its header and to the key id, so a
// ciphertext copied into another key's record fails to open.
func aad(hdr []byte, kid string) []byte {
	return append(append(append([]byte(aadLabel), hdr...), 0), kid...)
}

// Seal encrypts plain for the key kid under the first secret.
func (b *Box) Seal(kid string, plain []byte) ([]byte, error) {
	s := b.secrets[0]
	hdr := append([]byte{version}, s.id[:]...)
	nonce := make([]byte, s.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return nil, err
	}
	out := append(bytes.Clone(hdr), nonce...)
	return s.aead.Seal(out, nonce, plain, aad(hdr, kid)), nil
}

// Open decrypts what Seal made for kid. current reports whether the first
// secret sealed it; when not, the value should be sealed again (rewrap).
func (b *Box) Open(kid string, sealed []byte) (plain []byte, current bool, err error) {
	if len(sealed) < hdrSize || sealed[0] != version {
		return nil, false, fmt.Errorf("%w (unknown format)", ErrCorrupt)
	}
	hdr, rest := sealed[:hdrSize], sealed[hdrSize:]
	for i, s := range b.secrets {
		if !bytes.Equal(s.id[:], hdr[1:]) {
			continue
		}
		n := s.aead.NonceSize()
		if len(rest) < n+s.aead.Overhead() {
			return nil, false, fmt.Errorf("%w (truncated)", ErrCorrupt)
		}
		plain, err := s.aead.Open(nil, rest[:n], rest[n:], aad(hdr, kid))
		if err != nil {
			return nil, false, fmt.Errorf("key secret %x: %w", s.id, ErrCorrupt)
		}
		return plain, i == 0, nil
	}
	return nil, false, fmt.Errorf("secret id %x, configured %s: %w", hdr[1:], strings.Join(b.IDs(), ", "), ErrUnknownSecret)
}

// Parse reads secrets written as standard base64 (the URL alphabet and
// missing padding are accepted too), separated by commas or whitespace;
// lines starting with # are comments.
func Parse(text string) ([][]byte, error) {
	var out [][]byte
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		for _, f := range strings.FieldsFunc(line, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\r' }) {
			s, err := decode(f)
			if err != nil {
				return nil, fmt.Errorf("key secret %d: not base64", len(out)+1)
			}
			out = append(out, s)
		}
	}
	return out, nil
}

func decode(s string) ([]byte, error) {
	s = strings.TrimRight(strings.NewReplacer("-", "+", "_", "/").Replace(s), "=")
	return base64.RawStdEncoding.DecodeString(s)
}

// ReadFile reads secrets from a file in Parse's format.
func ReadFile(path string) ([][]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	s, err := Parse(string(b))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(s) == 0 {
		return nil, fmt.Errorf("%s holds no key secret (one base64 secret a line; make one with: head -c 32 /dev/urandom | base64)", path)
	}
	return s, nil
}
