package accesstoken

import (
	"context"
	"errors"
	"strings"

	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/lestrrat-go/jwx/v2/jws"
)

// MaxLen bounds what a reader even looks at: real tokens are well below
// 4 KiB, and parsing (base64, JSON, RSA) an attacker's megabytes costs.
const MaxLen = 16 << 10

// Errors of Verify; a KeyFunc's own error is returned as it is.
var (
	ErrMalformed = errors.New("token is not a compact JWS")
	ErrSignature = errors.New("token signature does not verify")
)

// Key is what verifies one signature: the algorithm to verify with and the
// public key (an *rsa.PublicKey, or what jws accepts).
type Key struct {
	Alg jwa.SignatureAlgorithm
	Key any
}

// KeyFunc finds the key for a token's protected header (its alg and kid,
// both chosen by whoever sent the token). Which algorithm the returned Key
// names is the reader's policy: never trust the header's alone.
type KeyFunc func(ctx context.Context, alg jwa.SignatureAlgorithm, kid string) (Key, error)

// WellFormed reports whether raw can be a token at all: not empty, at most
// MaxLen bytes, three dot-separated parts (a compact JWS; a JWE has five).
func WellFormed(raw string) bool {
	return raw != "" && len(raw) <= MaxLen && strings.Count(raw, ".") == 2
}

// Verify checks raw's one signature with the key key finds and returns
// the payload (decode it with Parse); the header's alg must be the key's. Errors: ErrMalformed when raw is not
// a compact JWS, the KeyFunc's error when it finds no key, ErrSignature
// when the signature does not verify.
func Verify(ctx context.Context, raw string, key KeyFunc) ([]byte, error) {
	if !WellFormed(raw) {
		return nil, ErrMalformed
	}
	if payload, handled, err := verifyCanonical(ctx, raw, key); handled {
		return payload, err
	}
	return verifyJWS(ctx, raw, key)
}

// verifyJWS is Verify by jws.Verify, for every form verifyCanonical leaves.
func verifyJWS(ctx context.Context, raw string, key KeyFunc) ([]byte, error) {
	// One parse serves both the key lookup and the verification.
	var asked bool
	var keyErr error
	byHeader := jws.KeyProviderFunc(func(ctx context.Context, sink jws.KeySink, sig *jws.Signature, _ *jws.Message) error {
		asked = true
		h := sig.ProtectedHeaders()
		k, err := key(ctx, h.Algorithm(), h.KeyID())
		if err != nil {
			keyErr = err
			return err
		}
		// jws verifies with the algorithm given here whatever the header
		// names; a header naming another than the key's is a forgery or
		// a confusion (an ES256 header on an RSA key's kid): refused.
		if k.Alg != h.Algorithm() {
			return ErrSignature
		}
		sink.Key(k.Alg, k.Key)
		return nil
	})
	payload, err := jws.Verify([]byte(raw), jws.WithCompact(), jws.WithKeyProvider(byHeader), jws.WithContext(ctx))
	switch {
	case err == nil:
		return payload, nil
	case keyErr != nil:
		return nil, keyErr
	case asked:
		return nil, ErrSignature
	default:
		return nil, ErrMalformed
	}
}
