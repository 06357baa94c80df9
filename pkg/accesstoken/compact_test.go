package accesstoken

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"strings"
	"testing"

	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/lestrrat-go/jwx/v2/jws"
)

// TestSignerIsJWS: what Signer writes, jws.Verify (the library alone)
// verifies under every algorithm FRIS signs with, with the header
// {"alg","kid","typ":"JWT"}; Verify reads it back.
func TestSignerIsJWS(t *testing.T) {
	ec, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	edPub, edPriv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	rk := rsaKey(t, 0)
	mac := []byte("0123456789abcdef0123456789abcdef")
	const payload = `{"sub":"7","type":"ACCESS_TOKEN"}`
	for _, tc := range []struct {
		alg       jwa.SignatureAlgorithm
		priv, pub any
	}{
		{jwa.RS256, rk, &rk.PublicKey}, {jwa.ES256, ec, &ec.PublicKey}, {jwa.EdDSA, edPriv, edPub}, {jwa.HS256, mac, mac},
	} {
		t.Run(tc.alg.String(), func(t *testing.T) {
			s, err := NewSigner(tc.alg, "kid-1", tc.priv)
			if err != nil {
				t.Fatal(err)
			}
			tok, err := s.Sign([]byte(payload))
			if err != nil {
				t.Fatal(err)
			}
			got, err := jws.Verify([]byte(tok), jws.WithKey(tc.alg, tc.pub))
			if err != nil || string(got) != payload {
				t.Fatalf("jws.Verify = %q, %v", got, err)
			}
			hdr, _ := base64.RawURLEncoding.DecodeString(strings.Split(tok, ".")[0])
			if want := `{"alg":"` + tc.alg.String() + `","kid":"kid-1","typ":"JWT"}`; string(hdr) != want {
				t.Fatalf("header %s, want %s", hdr, want)
			}
			got, err = Verify(context.Background(), tok, func(_ context.Context, alg jwa.SignatureAlgorithm, kid string) (Key, error) {
				if kid != "kid-1" {
					return Key{}, errNoKey
				}
				return Key{Alg: tc.alg, Key: tc.pub}, nil
			})
			if err != nil || string(got) != payload {
				t.Fatalf("Verify = %q, %v", got, err)
			}
		})
	}
	if _, err := NewSigner("none", "k", nil); err == nil {
		t.Fatal("a signer for alg none")
	}
}

// TestVerifyCanonicalOnlyForItsForm: a header with any member besides
// alg, kid and typ, in another order or with escapes, or a padded part, is
// left to jws.Verify; tokens of both forms get the same answers.
func TestVerifyCanonicalOnlyForItsForm(t *testing.T) {
	k := rsaKey(t, 0)
	s, err := NewSigner(jwa.RS256, "k", k)
	if err != nil {
		t.Fatal(err)
	}
	valid, err := s.Sign([]byte(`{"sub":"7"}`))
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(valid, ".")
	enc := base64.RawURLEncoding.EncodeToString
	ko := &keyOf{k: k}
	for _, tc := range []struct {
		name    string
		token   string
		handled bool
	}{
		{"FRIS's own", valid, true},
		{"jws's, without typ", signWith(t, jwa.RS256, k, "k", `{}`), true},
		{"unknown alg", enc([]byte(`{"alg":"XX256","kid":"k"}`)) + "." + parts[1] + "." + parts[2], false},
		{"members in another order", enc([]byte(`{"kid":"k","alg":"RS256","typ":"JWT"}`)) + "." + parts[1] + "." + parts[2], false},
		{"crit", enc([]byte(`{"alg":"RS256","crit":["b64"],"b64":false,"kid":"k"}`)) + "." + parts[1] + "." + parts[2], false},
		{"escaped kid", enc([]byte(`{"alg":"RS256","kid":"\u006b"}`)) + "." + parts[1] + "." + parts[2], false},
		{"padded payload", parts[0] + "." + base64.URLEncoding.EncodeToString([]byte(`{"sub":"7"}`)) + "." + parts[2], false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, handled, _ := verifyCanonical(context.Background(), tc.token, ko.get)
			if handled != tc.handled {
				t.Fatalf("handled = %v, want %v", handled, tc.handled)
			}
			sameAnswers(t, tc.token, ko)
		})
	}
}

// sameAnswers fails when Verify and jws.Verify alone answer token
// differently (payload, error, whether the key was asked for).
func sameAnswers(t *testing.T, token string, ko *keyOf) {
	t.Helper()
	ko.calls = 0
	got, err := Verify(context.Background(), token, ko.get)
	asked := ko.calls > 0
	ko.calls = 0
	var want []byte
	wantErr := ErrMalformed
	if WellFormed(token) {
		want, wantErr = verifyJWS(context.Background(), token, ko.get)
	}
	if !bytes.Equal(got, want) || err != wantErr || asked != (ko.calls > 0) { //nolint:errorlint // the exact error is the contract
		t.Fatalf("%q: Verify = %q, %v (key asked: %v); jws.Verify = %q, %v (key asked: %v)", token, got, err, asked, want, wantErr, ko.calls > 0)
	}
}

// FuzzVerifyPaths: whatever the token, the canonical path and jws.Verify
// give the same answer; seeds include tokens that verify.
func FuzzVerifyPaths(f *testing.F) {
	k := rsaKey(f, 0)
	ko := &keyOf{k: k}
	s, err := NewSigner(jwa.RS256, "k", k)
	if err != nil {
		f.Fatal(err)
	}
	for _, p := range []string{`{}`, `{"sub":"7","type":"ACCESS_TOKEN"}`} {
		tok, err := s.Sign([]byte(p))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(tok)
	}
	f.Add(signWith(f, jwa.RS512, k, "k", `{}`))
	f.Add("eyJhbGciOiJub25lIiwia2lkIjoiayJ9.eyJzdWIiOiI3In0.")
	f.Add("eyJhbGciOiJSUzI1NiIsImtpZCI6ImsiLCJiNjQiOmZhbHNlLCJjcml0IjpbImI2NCJdfQ.x.AA")
	f.Fuzz(func(t *testing.T, token string) { sameAnswers(t, token, ko) })
}
