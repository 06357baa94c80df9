package tokens

import (
	"crypto/rand"
	"fmt"

	"github.com/lestrrat-go/jwx/v2/jwa"

	"fris.dev/services/auth/internal/keys"
)

// BenchNullKID is the kid of the benchmark's stub signatures. No key of
// that kid is ever published or loaded, so nothing verifies such a token:
// not the gateway (which refuses HS256 outright), not auth's own Read
// (which takes HS256 only under a refresh key's MAC kid, and then only for
// a refresh token: ErrMalformed), not a relying party.
const BenchNullKID = "bench-null-unverifiable"

// benchNull is the stub signer of the benchmark's "pure protocol cost":
// an HMAC under a random key nobody else holds (about a µs, where an
// RS256 signature costs milliseconds).
type benchNull struct {
	client string
	key    []byte
}

// SetBenchNull makes the access and id tokens of clientID signed by the
// stub instead of a key: for the benchmark that measures a token
// response's cost without its signatures. Only the auth service built
// with the fris_bench_null tag can call it (its -bench-null-signer
// flag); see docs/decisions.md, "The benchmark's stub signer".
func (i *Issuer) SetBenchNull(clientID string) {
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		panic(fmt.Sprintf("crypto/rand failed: %v", err))
	}
	i.null = &benchNull{client: clientID, key: key}
}

// nullFor reports whether the tokens of a client are the stub's.
func (i *Issuer) nullFor(clientID string) bool {
	return i.null != nil && clientID != "" && clientID == i.null.client
}

// nullSigner is the stub as a signing key.
func (i *Issuer) nullSigner() *keys.Signer {
	return &keys.Signer{KID: BenchNullKID, Alg: jwa.HS256, Key: i.null.key}
}
