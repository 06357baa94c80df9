package accesstoken

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"strings"

	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/lestrrat-go/jwx/v2/jws"
)

// header is the protected header FRIS writes, its members in this order.
type header struct {
	Alg string `json:"alg"`
	KID string `json:"kid,omitempty"`
	Typ string `json:"typ,omitempty"`
}

// Signer signs compact JWS with one key under the protected header
// {"alg","kid","typ":"JWT"}. The header's encoding is made once, and jws's
// signer for the algorithm signs: jws.Sign would build, merge and encode a
// header object and marshal the payload again on every token, which costs
// more than an ES256 or HMAC signature itself (BENCHMARKS.md, suite auth).
type Signer struct {
	header string // base64url of the header JSON
	signer jws.Signer
	key    any
}

// NewSigner returns the signer of key (a private key, or what jws's signer
// for alg accepts) named kid.
func NewSigner(alg jwa.SignatureAlgorithm, kid string, key any) (Signer, error) {
	s, err := jws.NewSigner(alg)
	if err != nil {
		return Signer{}, err
	}
	h, err := json.Marshal(header{Alg: alg.String(), KID: kid, Typ: "JWT"})
	if err != nil {
		return Signer{}, err
	}
	return Signer{header: base64.RawURLEncoding.EncodeToString(h), signer: s, key: key}, nil
}

// Sign returns the compact JWS of payload.
func (s Signer) Sign(payload []byte) (string, error) {
	enc := base64.RawURLEncoding
	input := make([]byte, 0, len(s.header)+2+enc.EncodedLen(len(payload))+enc.EncodedLen(512))
	input = append(input, s.header...)
	input = append(input, '.')
	input = enc.AppendEncode(input, payload)
	sig, err := s.signer.Sign(input, s.key)
	if err != nil {
		return "", err
	}
	out := append(input, '.')
	return string(enc.AppendEncode(out, sig)), nil
}

// verifyCanonical verifies raw (well formed) when its protected header is
// exactly one a Signer writes and every part is unpadded base64url: then
// nothing in the header (crit, b64, jwk, ...) can ask for other handling
// than alg and kid say, and jws's parse of the header into its object is
// skipped. handled is false for any other form, which jws.Verify then
// reads as before.
func verifyCanonical(ctx context.Context, raw string, key KeyFunc) (payload []byte, handled bool, err error) {
	enc := base64.RawURLEncoding
	h, rest, _ := strings.Cut(raw, ".")
	p, s, _ := strings.Cut(rest, ".")
	hb, err := enc.DecodeString(h)
	if err != nil {
		return nil, false, nil
	}
	var hd header
	if json.Unmarshal(hb, &hd) != nil {
		return nil, false, nil
	}
	// An algorithm jws does not know is its parse error (ErrMalformed).
	var alg jwa.SignatureAlgorithm
	if alg.Accept(hd.Alg) != nil {
		return nil, false, nil
	}
	if again, err := json.Marshal(hd); err != nil || !bytes.Equal(again, hb) {
		return nil, false, nil
	}
	payload, err = enc.DecodeString(p)
	if err != nil {
		return nil, false, nil
	}
	sig, err := enc.DecodeString(s)
	if err != nil {
		return nil, false, nil
	}
	k, err := key(ctx, alg, hd.KID)
	if err != nil {
		return nil, true, err
	}
	// As in Verify: the key's algorithm decides, and a header naming
	// another is refused.
	if k.Alg != alg {
		return nil, true, ErrSignature
	}
	v, err := jws.NewVerifier(k.Alg)
	if err != nil {
		return nil, true, ErrSignature
	}
	if v.Verify([]byte(raw[:len(h)+1+len(p)]), sig, k.Key) != nil {
		return nil, true, ErrSignature
	}
	return payload, true, nil
}
