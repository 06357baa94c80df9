package service

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"testing"

	"github.com/fxamacker/cbor/v2"
)

// authenticator is a software passkey authenticator for the tests: one
// ES256 credential per registration, user verification always done, a
// signature counter that counts up (or, set back, down).
type authenticator struct {
	origin string
	creds  map[string]*testCred // by base64url id
}

type testCred struct {
	id     []byte
	key    *ecdsa.PrivateKey
	rpID   string
	handle []byte
	count  uint32
}

func newAuthenticator(origin string) *authenticator {
	return &authenticator{origin: origin, creds: map[string]*testCred{}}
}

var b64 = base64.RawURLEncoding

type creationOptions struct {
	PublicKey struct {
		Challenge string `json:"challenge"`
		RP        struct {
			ID string `json:"id"`
		} `json:"rp"`
		User struct {
			ID string `json:"id"`
		} `json:"user"`
	} `json:"publicKey"`
}

type requestOptions struct {
	PublicKey struct {
		Challenge string `json:"challenge"`
		RPID      string `json:"rpId"`
	} `json:"publicKey"`
}

func (a *authenticator) clientData(t testing.TB, typ, challenge string) []byte {
	t.Helper()
	b, err := json.Marshal(map[string]any{"type": typ, "challenge": challenge, "origin": a.origin, "crossOrigin": false})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func authData(rpID string, flags byte, count uint32, attested []byte) []byte {
	h := sha256.Sum256([]byte(rpID))
	out := append(h[:0:0], h[:]...)
	out = append(out, flags)
	out = binary.BigEndian.AppendUint32(out, count)
	return append(out, attested...)
}

// create answers navigator.credentials.create's options (their JSON) with
// a new credential's JSON, as a browser sends it.
func (a *authenticator) create(t testing.TB, options string) (string, *testCred) {
	t.Helper()
	var o creationOptions
	if err := json.Unmarshal([]byte(options), &o); err != nil {
		t.Fatal(err)
	}
	handle, err := b64.DecodeString(o.PublicKey.User.ID)
	if err != nil {
		t.Fatalf("user id %q: %v", o.PublicKey.User.ID, err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	c := &testCred{id: make([]byte, 16), key: key, rpID: o.PublicKey.RP.ID, handle: handle}
	_, _ = rand.Read(c.id)
	pub, err := key.PublicKey.Bytes() // 0x04 || X || Y
	if err != nil {
		t.Fatal(err)
	}
	cose, err := cbor.Marshal(map[int]any{1: 2, 3: -7, -1: 1, -2: pub[1:33], -3: pub[33:65]})
	if err != nil {
		t.Fatal(err)
	}
	attested := make([]byte, 16) // AAGUID
	attested = binary.BigEndian.AppendUint16(attested, uint16(len(c.id)))
	attested = append(append(attested, c.id...), cose...)
	const up, uv, at = 0x01, 0x04, 0x40
	obj, err := cbor.Marshal(map[string]any{"fmt": "none", "attStmt": map[string]any{}, "authData": authData(c.rpID, up|uv|at, 0, attested)})
	if err != nil {
		t.Fatal(err)
	}
	a.creds[b64.EncodeToString(c.id)] = c
	return credentialJSON(t, c.id, map[string]any{
		"clientDataJSON":    b64.EncodeToString(a.clientData(t, "webauthn.create", o.PublicKey.Challenge)),
		"attestationObject": b64.EncodeToString(obj),
		"transports":        []string{"internal"},
	}), c
}

// get answers navigator.credentials.get's options with credential c.
func (a *authenticator) get(t testing.TB, options string, c *testCred) string {
	t.Helper()
	var o requestOptions
	if err := json.Unmarshal([]byte(options), &o); err != nil {
		t.Fatal(err)
	}
	c.count++
	data := authData(c.rpID, 0x01|0x04, c.count, nil)
	cd := a.clientData(t, "webauthn.get", o.PublicKey.Challenge)
	sum := sha256.Sum256(cd)
	digest := sha256.Sum256(append(append([]byte{}, data...), sum[:]...))
	sig, err := ecdsa.SignASN1(rand.Reader, c.key, digest[:])
	if err != nil {
		t.Fatal(err)
	}
	return credentialJSON(t, c.id, map[string]any{
		"clientDataJSON":    b64.EncodeToString(cd),
		"authenticatorData": b64.EncodeToString(data),
		"signature":         b64.EncodeToString(sig),
		"userHandle":        b64.EncodeToString(c.handle),
	})
}

func credentialJSON(t testing.TB, id []byte, response map[string]any) string {
	t.Helper()
	b, err := json.Marshal(map[string]any{"id": b64.EncodeToString(id), "rawId": b64.EncodeToString(id), "type": "public-key",
		"response": response, "clientExtensionResults": map[string]any{}, "authenticatorAttachment": "platform"})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
