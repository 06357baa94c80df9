package accesstoken

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/lestrrat-go/jwx/v2/jws"
)

var (
	keysOnce sync.Once
	testKeys [2]*rsa.PrivateKey
)

// rsaKey is one of two 2048-bit keys, made once per test binary.
func rsaKey(t testing.TB, i int) *rsa.PrivateKey {
	t.Helper()
	keysOnce.Do(func() {
		for n := range testKeys {
			k, err := rsa.GenerateKey(rand.Reader, 2048)
			if err != nil {
				panic(err)
			}
			testKeys[n] = k
		}
	})
	return testKeys[i]
}

func signWith(t testing.TB, alg jwa.SignatureAlgorithm, key *rsa.PrivateKey, kid, payload string) string {
	t.Helper()
	hdr := jws.NewHeaders()
	if kid != "" {
		_ = hdr.Set(jws.KeyIDKey, kid)
	}
	b, err := jws.Sign([]byte(payload), jws.WithKey(alg, key, jws.WithProtectedHeaders(hdr)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// ofLen signs payload, padded with spaces, into a token of exactly n
// bytes.
func ofLen(t testing.TB, k *rsa.PrivateKey, payload string, n int) string {
	t.Helper()
	short := signWith(t, jwa.RS256, k, "k", payload)
	// Each 3 bytes of payload add 4 of base64; a header a byte longer
	// (the alg RS512) shifts the remainder.
	for _, alg := range []jwa.SignatureAlgorithm{jwa.RS256, jwa.RS512} {
		for pad := (n - len(short)) * 3 / 4; pad > 0 && pad > (n-len(short))*3/4-4; pad-- {
			tok := signWith(t, alg, k, "k", payload+strings.Repeat(" ", pad))
			if len(tok) == n {
				return tok
			}
		}
	}
	t.Fatalf("no token of %d bytes", n)
	return ""
}

// keyOf returns k's public key for kid "k" with the algorithm the header
// names, and errNoKey for any other kid; it counts its calls.
type keyOf struct {
	k     *rsa.PrivateKey
	alg   jwa.SignatureAlgorithm // "": the header's
	calls int
}

var errNoKey = errors.New("no such key")

func (ko *keyOf) get(_ context.Context, alg jwa.SignatureAlgorithm, kid string) (Key, error) {
	ko.calls++
	if kid != "k" {
		return Key{}, errNoKey
	}
	if ko.alg != "" {
		alg = ko.alg
	}
	return Key{Alg: alg, Key: &ko.k.PublicKey}, nil
}

func TestVerify(t *testing.T) {
	k, other := rsaKey(t, 0), rsaKey(t, 1)
	const payload = `{"sub":"7"}`
	valid := signWith(t, jwa.RS256, k, "k", payload)
	parts := strings.Split(valid, ".")
	enc := base64.RawURLEncoding.EncodeToString
	long := ofLen(t, k, payload, MaxLen)
	for _, tc := range []struct {
		name   string
		token  string
		keyAlg jwa.SignatureAlgorithm
		want   error // nil: verifies
		asked  bool  // whether the key was looked up
	}{
		{name: "valid", token: valid, asked: true},
		{name: "valid RS512", token: signWith(t, jwa.RS512, k, "k", payload), asked: true},
		{name: "at the size limit", token: long, asked: true},
		{name: "empty", token: "", want: ErrMalformed},
		{name: "over the size limit", token: long + "A", want: ErrMalformed},
		{name: "two parts", token: parts[0] + "." + parts[1], want: ErrMalformed},
		{name: "JWE shape", token: "a.b.c.d.e", want: ErrMalformed},
		{name: "header not base64", token: "!!." + parts[1] + "." + parts[2], want: ErrMalformed},
		{name: "header not JSON", token: enc([]byte("x")) + "." + parts[1] + "." + parts[2], want: ErrMalformed},
		{name: "JSON serialization", token: `{"payload":"e30","signatures":[{"protected":"eyJhbGciOiJSUzI1NiJ9","signature":"AA"}]}`, want: ErrMalformed},
		{name: "unknown kid: the key's error", token: signWith(t, jwa.RS256, k, "other", payload), want: errNoKey, asked: true},
		{name: "tampered payload", token: parts[0] + "." + enc([]byte(`{"sub":"1"}`)) + "." + parts[2], want: ErrSignature, asked: true},
		{name: "no signature", token: parts[0] + "." + parts[1] + ".", want: ErrSignature, asked: true},
		{name: "other key", token: signWith(t, jwa.RS256, other, "k", payload), want: ErrSignature, asked: true},
		// The KeyFunc's algorithm is the one used, whatever the header says.
		{name: "key's alg, not the header's", token: signWith(t, jwa.RS512, k, "k", payload), keyAlg: jwa.RS256, want: ErrSignature, asked: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ko := &keyOf{k: k, alg: tc.keyAlg}
			got, err := Verify(context.Background(), tc.token, ko.get)
			if tc.want == nil {
				if err != nil || strings.TrimRight(string(got), " ") != payload {
					t.Fatalf("Verify = %q, %v", got, err)
				}
			} else if err != tc.want || got != nil { //nolint:errorlint // the exact error is the contract
				t.Fatalf("Verify = %q, %v; want %v", got, err, tc.want)
			}
			if (ko.calls > 0) != tc.asked {
				t.Fatalf("key looked up %d times, want asked=%v", ko.calls, tc.asked)
			}
		})
	}
}

func TestVerifyPassesTheContext(t *testing.T) {
	type ctxKey struct{}
	ctx := context.WithValue(context.Background(), ctxKey{}, "req")
	var seen any
	_, err := Verify(ctx, signWith(t, jwa.RS256, rsaKey(t, 0), "k", "{}"), func(ctx context.Context, alg jwa.SignatureAlgorithm, kid string) (Key, error) {
		seen = ctx.Value(ctxKey{})
		return Key{Alg: alg, Key: &rsaKey(t, 0).PublicKey}, nil
	})
	if err != nil || seen != "req" {
		t.Fatalf("err %v, context value %v", err, seen)
	}
}

// FuzzVerify: the token is what any client sends. The only key is one no
// seed is signed with, so nothing may verify, and every refusal is one of
// Verify's three answers.
func FuzzVerify(f *testing.F) {
	ko := &keyOf{k: rsaKey(f, 0)}
	forger := rsaKey(f, 1)
	for _, s := range []string{
		"", ".", "..", "a.b.c", "not-a-jwt",
		signWith(f, jwa.RS256, forger, "k", `{"sub":"7","type":"ACCESS_TOKEN"}`),
		signWith(f, jwa.RS512, forger, "k", `{}`),
		signWith(f, jwa.RS256, forger, "", `{}`),
		"eyJhbGciOiJub25lIiwia2lkIjoiayJ9.eyJzdWIiOiI3In0.",
		"eyJhbGciOiJSUzI1NiIsImtpZCI6ImsiLCJiNjQiOmZhbHNlLCJjcml0IjpbImI2NCJdfQ.x.AA",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, token string) {
		got, err := Verify(context.Background(), token, ko.get)
		if err == nil {
			t.Fatalf("verified %q: %q", token, got)
		}
		if err != ErrMalformed && err != ErrSignature && err != errNoKey { //nolint:errorlint // the exact error is the contract
			t.Fatalf("%q: unexpected error %v", token, err)
		}
	})
}

// TestVerifyRefusesAlgConfusion: a token whose header names another
// algorithm than its key's is refused before any signature check, even one
// that would verify under the header's algorithm (HS256 keyed with the
// public key's bytes, the classic confusion) or is a real signature by
// another kind of key under the RSA key's kid.
func TestVerifyRefusesAlgConfusion(t *testing.T) {
	k := rsaKey(t, 0)
	spki, err := x509.MarshalPKIXPublicKey(&k.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	_, ed, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	ec, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	sign := func(alg jwa.SignatureAlgorithm, key any) string {
		hdr := jws.NewHeaders()
		_ = hdr.Set(jws.KeyIDKey, "k")
		b, err := jws.Sign([]byte(`{"sub":"7"}`), jws.WithKey(alg, key, jws.WithProtectedHeaders(hdr)))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	rsaOnly := func(_ context.Context, _ jwa.SignatureAlgorithm, kid string) (Key, error) {
		return Key{Alg: jwa.RS256, Key: &k.PublicKey}, nil
	}
	for name, tok := range map[string]string{
		"HS256 keyed with the public key": sign(jwa.HS256, spki),
		"EdDSA":                           sign(jwa.EdDSA, ed),
		"ES256":                           sign(jwa.ES256, ec),
		"RS512 by the right key":          sign(jwa.RS512, k),
		"none": base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","kid":"k"}`)) + "." +
			base64.RawURLEncoding.EncodeToString([]byte(`{"sub":"7"}`)) + ".",
	} {
		if got, err := Verify(context.Background(), tok, rsaOnly); err != ErrSignature || got != nil { //nolint:errorlint // the exact error is the contract
			t.Errorf("%s: Verify = %q, %v; want ErrSignature", name, got, err)
		}
	}
	// The same ES256 token verifies with its own key named ES256.
	ecKey := func(context.Context, jwa.SignatureAlgorithm, string) (Key, error) {
		return Key{Alg: jwa.ES256, Key: &ec.PublicKey}, nil
	}
	if _, err := Verify(context.Background(), sign(jwa.ES256, ec), ecKey); err != nil {
		t.Fatalf("ES256 with its key: %v", err)
	}
}

// TestVerifyHMACKeyOnlyAsItself: a reader that holds an HMAC key (the auth
// service's refresh-token MAC) gets an HS256 token verified with it only
// when the key names HS256, the MAC is its own, and the header names HS256
// too: another secret, another HMAC size, a public-key signature or none
// under the same kid are refused.
func TestVerifyHMACKeyOnlyAsItself(t *testing.T) {
	secret := make([]byte, 32)
	other := make([]byte, 32)
	for _, b := range [][]byte{secret, other} {
		if _, err := rand.Read(b); err != nil {
			t.Fatal(err)
		}
	}
	_, ed, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	sign := func(alg jwa.SignatureAlgorithm, key any) string {
		hdr := jws.NewHeaders()
		_ = hdr.Set(jws.KeyIDKey, "mac")
		b, err := jws.Sign([]byte(`{"sub":"7"}`), jws.WithKey(alg, key, jws.WithProtectedHeaders(hdr)))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	mac := func(context.Context, jwa.SignatureAlgorithm, string) (Key, error) {
		return Key{Alg: jwa.HS256, Key: secret}, nil
	}
	if got, err := Verify(context.Background(), sign(jwa.HS256, secret), mac); err != nil || string(got) != `{"sub":"7"}` {
		t.Fatalf("HS256 with its key: %q %v", got, err)
	}
	for name, tok := range map[string]string{
		"HS256 under another secret": sign(jwa.HS256, other),
		"HS512 under the secret":     sign(jwa.HS512, secret),
		"EdDSA":                      sign(jwa.EdDSA, ed),
		"RS256":                      sign(jwa.RS256, rsaKey(t, 0)),
		"none": base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","kid":"mac"}`)) + "." +
			base64.RawURLEncoding.EncodeToString([]byte(`{"sub":"7"}`)) + ".",
	} {
		if got, err := Verify(context.Background(), tok, mac); err != ErrSignature || got != nil { //nolint:errorlint // the exact error is the contract
			t.Errorf("%s: Verify = %q, %v; want ErrSignature", name, got, err)
		}
	}
}
