package authn

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"errors"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/lestrrat-go/jwx/v2/jwk"
	"github.com/lestrrat-go/jwx/v2/jws"
	"github.com/lestrrat-go/jwx/v2/jwt"
)

// curveKey is a published elliptic-curve key: its private half signs.
type curveKey struct {
	kid  string
	alg  jwa.SignatureAlgorithm // "" publishes the JWK without alg
	priv crypto.Signer
}

func (k curveKey) public(t testing.TB) jwk.Key {
	t.Helper()
	pk, err := jwk.FromRaw(k.priv.Public())
	if err != nil {
		t.Fatal(err)
	}
	_ = pk.Set(jwk.KeyIDKey, k.kid)
	_ = pk.Set(jwk.KeyUsageKey, "sig")
	if k.alg != "" {
		_ = pk.Set(jwk.AlgorithmKey, k.alg)
	}
	return pk
}

// signAs signs c with key under kid and header alg.
func signAs(t testing.TB, kid string, alg jwa.SignatureAlgorithm, key any, c map[string]any) string {
	t.Helper()
	tok := jwt.New()
	for name, v := range c {
		_ = tok.Set(name, v)
	}
	hdr := jws.NewHeaders()
	_ = hdr.Set(jws.KeyIDKey, kid)
	b, err := jwt.Sign(tok, jwt.WithKey(alg, key, jws.WithProtectedHeaders(hdr)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func ecKey(t testing.TB, c elliptic.Curve) *ecdsa.PrivateKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(c, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func edKey(t testing.TB) ed25519.PrivateKey {
	t.Helper()
	_, k, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestVerifyCurveAlgorithms: the gateway accepts the ES256 and EdDSA
// tokens of the auth service's published elliptic-curve keys, and refuses
// every token whose header names another algorithm than its key's (alg
// confusion in either direction), HMAC keyed with a public key, other
// curves, and a key whose JWK names an alg that does not fit it.
func TestVerifyCurveAlgorithms(t *testing.T) {
	rs := newKey(t, "rs", jwa.RS256, 0)
	es := curveKey{"es", jwa.ES256, ecKey(t, elliptic.P256())}
	ed := curveKey{"ed", jwa.EdDSA, edKey(t)}
	esNoAlg := curveKey{"es-noalg", "", ecKey(t, elliptic.P256())}
	edNoAlg := curveKey{"ed-noalg", "", edKey(t)}
	p384 := curveKey{"p384", jwa.ES256, ecKey(t, elliptic.P384())}
	mislabelled := curveKey{"mis", jwa.RS256, ecKey(t, elliptic.P256())}
	srv := newJWKSServer(t, rs.public(t), es.public(t), ed.public(t), esNoAlg.public(t), edNoAlg.public(t), p384.public(t), mislabelled.public(t))
	v := newVerifier(t, srv)
	good := claims(time.Now())
	esDER, _ := x509.MarshalPKIXPublicKey(es.priv.Public())
	other := ecKey(t, elliptic.P256())

	for _, tc := range []struct {
		name  string
		token string
		err   error // nil: accepted
	}{
		{"ES256", signAs(t, "es", jwa.ES256, es.priv, good), nil},
		{"EdDSA", signAs(t, "ed", jwa.EdDSA, ed.priv, good), nil},
		{"ES256, key without alg", signAs(t, "es-noalg", jwa.ES256, esNoAlg.priv, good), nil},
		{"EdDSA, key without alg", signAs(t, "ed-noalg", jwa.EdDSA, edNoAlg.priv, good), nil},
		{"RS256 still", sign(t, rs, jwa.RS256, good), nil},

		{"ES256 header on the RSA key's kid", signAs(t, "rs", jwa.ES256, es.priv, good), ErrAlgorithm},
		{"EdDSA header on the RSA key's kid", signAs(t, "rs", jwa.EdDSA, ed.priv, good), ErrAlgorithm},
		{"RS256 header on the ES256 key's kid", signAs(t, "es", jwa.RS256, rs.priv, good), ErrAlgorithm},
		{"EdDSA header on the ES256 key's kid", signAs(t, "es", jwa.EdDSA, ed.priv, good), ErrAlgorithm},
		{"ES256 header on the EdDSA key's kid", signAs(t, "ed", jwa.ES256, es.priv, good), ErrAlgorithm},
		{"RS256 header on an EC key without alg", signAs(t, "es-noalg", jwa.RS256, rs.priv, good), ErrAlgorithm},
		{"HS256 keyed with the EC public key", signAs(t, "es", jwa.HS256, esDER, good), ErrAlgorithm},
		{"HS256 keyed with the Ed25519 public key", signAs(t, "ed", jwa.HS256, []byte(ed.priv.Public().(ed25519.PublicKey)), good), ErrAlgorithm},
		{"ES384", signAs(t, "es", jwa.ES384, ecKey(t, elliptic.P384()), good), ErrAlgorithm},
		{"P-384 key published as ES256", signAs(t, "p384", jwa.ES256, p384.priv, good), ErrUnknownKey},
		{"EC key published as RS256", signAs(t, "mis", jwa.RS256, rs.priv, good), ErrUnknownKey},
		{"other EC key, same kid", signAs(t, "es", jwa.ES256, other, good), ErrInvalidClaims},
		{"ES256 id token", signAs(t, "es", jwa.ES256, es.priv, with(good, "type", "ID_TOKEN")), ErrTokenType},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Twice: the second answer comes from the verified-token cache.
			for range 2 {
				got, err := v.Verify(context.Background(), tc.token)
				if tc.err == nil {
					if err != nil || got.Subject != "42" {
						t.Fatalf("refused: %+v %v", got, err)
					}
					continue
				}
				if !errors.Is(err, tc.err) || !got.Anonymous() {
					t.Fatalf("Verify = %+v, %v; want %v", got, err, tc.err)
				}
			}
		})
	}

	// A remembered ES256 token is refused once its key is withdrawn.
	tok := signAs(t, "es", jwa.ES256, es.priv, good)
	if _, err := v.Verify(context.Background(), tok); err != nil {
		t.Fatal(err)
	}
	srv.setKeys(t, rs.public(t), ed.public(t))
	if err := v.refresh(context.Background(), v.gen.Load(), func(*keySet) bool { return false }); err != nil {
		t.Fatal(err)
	}
	if _, err := v.Verify(context.Background(), tok); !errors.Is(err, ErrUnknownKey) {
		t.Fatalf("token of a withdrawn key: %v", err)
	}
}
