package storagetest

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"testing"
	"time"

	"fris.dev/pkg/kv"
	"fris.dev/services/auth/internal/envelope"
	"fris.dev/services/auth/internal/storage"
)

func testSigningKeys(t *testing.T, s storage.Store) {
	ctx := context.Background()
	now := time.Now()
	add := func(ks []storage.SigningKey) ([]storage.SigningKey, error) {
		return append(ks, storage.SigningKey{KID: fmt.Sprintf("k%d", len(ks)), Alg: "RS256", PrivateDER: []byte("x"), Created: now.Unix() + int64(len(ks))}), nil
	}
	for i := 0; i < 3; i++ {
		if err := s.UpdateSigningKeys(ctx, add); err != nil {
			t.Fatal(err)
		}
	}
	ks, err := s.SigningKeys(ctx)
	if err != nil || len(ks) != 3 || ks[0].KID != "k0" || ks[2].KID != "k2" {
		t.Fatalf("SigningKeys = %+v %v", ks, err)
	}
	// Dropping a key deletes it; an error changes nothing.
	if err := s.UpdateSigningKeys(ctx, func(ks []storage.SigningKey) ([]storage.SigningKey, error) {
		ks[1].Retired = now.Unix()
		return ks[1:], nil
	}); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	if err := s.UpdateSigningKeys(ctx, func([]storage.SigningKey) ([]storage.SigningKey, error) { return nil, boom }); !errors.Is(err, boom) {
		t.Fatal(err)
	}
	ks, _ = s.SigningKeys(ctx)
	if len(ks) != 2 || ks[0].KID != "k1" || ks[0].Active() || !ks[1].Active() {
		t.Fatalf("after update: %+v", ks)
	}
}

func testSigningKeysEncryptedAtRest(t *testing.T, b backend) {
	ctx := context.Background()
	now := time.Now()
	db := b.openKV(t)
	priv, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	s := b.on(t, db, oldSecret())
	if err := s.UpdateSigningKeys(ctx, func([]storage.SigningKey) ([]storage.SigningKey, error) {
		return []storage.SigningKey{{KID: "k0", Alg: "RS256", PrivateDER: der, Created: now.UnixNano()}}, nil
	}); err != nil {
		t.Fatal(err)
	}
	assertNoKeyInClear(t, ctx, db, priv, der)
	if ks, err := s.SigningKeys(ctx); err != nil || len(ks) != 1 || !bytes.Equal(ks[0].PrivateDER, der) {
		t.Fatalf("SigningKeys = %+v %v", ks, err)
	}

	// Another secret only: an error, never an empty key set.
	if ks, err := b.on(t, db, newSecret()).SigningKeys(ctx); !errors.Is(err, envelope.ErrUnknownSecret) {
		t.Fatalf("wrong secret: SigningKeys = %d keys, %v", len(ks), err)
	}
	if err := b.on(t, db, newSecret()).UpdateSigningKeys(ctx, func(ks []storage.SigningKey) ([]storage.SigningKey, error) {
		return nil, nil
	}); !errors.Is(err, envelope.ErrUnknownSecret) {
		t.Fatalf("wrong secret: UpdateSigningKeys = %v", err)
	}

	// Rotated (new first, old second): the old secret still opens,
	// and the rewrap moves the key to the new one.
	rotated := b.on(t, db, newSecret(), oldSecret())
	if ks, err := rotated.SigningKeys(ctx); err != nil || len(ks) != 1 || !bytes.Equal(ks[0].PrivateDER, der) || !ks[0].Stale {
		t.Fatalf("rotated: SigningKeys = %+v %v, want the key, stale", ks, err)
	}
	if done, err := rotated.RewrapSigningKeys(ctx); err != nil || len(done.KIDs) != 1 || done.KIDs[0] != "k0" || len(done.Plain) != 0 {
		t.Fatalf("RewrapSigningKeys = %v %v", done, err)
	}
	if done, err := rotated.RewrapSigningKeys(ctx); err != nil || len(done.KIDs) != 0 {
		t.Fatalf("second RewrapSigningKeys = %v %v", done, err)
	}
	if ks, err := b.on(t, db, newSecret()).SigningKeys(ctx); err != nil || len(ks) != 1 || !bytes.Equal(ks[0].PrivateDER, der) || ks[0].Stale {
		t.Fatalf("new secret alone after rewrap: %+v %v", ks, err)
	}
	assertNoKeyInClear(t, ctx, db, priv, der)
	assertMovedRecordFails(t, ctx, db, rotated)
}

// assertMovedRecordFails copies the sealed record of k0 under the id k1:
// a record moved under another key id does not open.
func assertMovedRecordFails(t *testing.T, ctx context.Context, db kv.Store, s storage.Store) {
	t.Helper()
	raw, err := db.Get(ctx, "signing-key/k0")
	if err != nil {
		t.Fatal(err)
	}
	var rec map[string]any
	_ = json.Unmarshal(raw, &rec)
	rec["kid"] = "k1"
	moved, _ := json.Marshal(rec)
	if err := db.Update(ctx, func(tx kv.Tx) error { return tx.Put("signing-key/k1", moved, 0) }); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SigningKeys(ctx); !errors.Is(err, envelope.ErrCorrupt) {
		t.Fatalf("swapped record: %v", err)
	}
}

func testPlaintextKeysMigrate(t *testing.T, b backend) {
	ctx := context.Background()
	now := time.Now()
	db := b.openKV(t)
	priv, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	der, _ := x509.MarshalPKCS8PrivateKey(priv)
	// The record as stored before encryption at rest.
	legacy, _ := json.Marshal(map[string]any{"kid": "old", "alg": "RS256", "private_der": der, "created_ns": now.UnixNano()})
	if err := db.Update(ctx, func(tx kv.Tx) error { return tx.Put("signing-key/old", legacy, 0) }); err != nil {
		t.Fatal(err)
	}
	s := b.on(t, db, newSecret())
	if _, err := s.SigningKeys(ctx); !errors.Is(err, storage.ErrPlaintextKey) {
		t.Fatalf("plaintext key read: %v", err)
	}
	if done, err := s.RewrapSigningKeys(ctx); err != nil || len(done.KIDs) != 1 || done.KIDs[0] != "old" || len(done.Plain) != 1 {
		t.Fatalf("RewrapSigningKeys = %v %v", done, err)
	}
	ks, err := s.SigningKeys(ctx)
	if err != nil || len(ks) != 1 || ks[0].KID != "old" || !bytes.Equal(ks[0].PrivateDER, der) || ks[0].Created != now.UnixNano() {
		t.Fatalf("after migration: %+v %v", ks, err)
	}
	assertNoKeyInClear(t, ctx, db, priv, der)
}

// assertNoKeyInClear reads every raw value of the backend and fails when
// the private key shows: its DER, or the modulus every private key encoding
// carries, raw or in base64 (JSON's encoding of bytes) at any alignment,
// or a PEM block.
func assertNoKeyInClear(t *testing.T, ctx context.Context, db kv.Store, priv *rsa.PrivateKey, der []byte) {
	t.Helper()
	es, err := db.Scan(ctx, "", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(es) == 0 {
		t.Fatal("nothing stored")
	}
	pkcs1 := x509.MarshalPKCS1PrivateKey(priv)
	needles := map[string][]byte{"PKCS#8 DER": der, "PKCS#1 DER": pkcs1, "modulus": priv.N.Bytes(),
		"PEM": []byte("PRIVATE KEY-----"), "PKCS#8 PEM": pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})}
	for shift := 0; shift < 3; shift++ {
		padded := append(make([]byte, shift), priv.N.Bytes()...)
		for name, enc := range map[string]*base64.Encoding{"base64": base64.StdEncoding, "base64url": base64.RawURLEncoding} {
			s := enc.EncodeToString(padded)
			// Drop the characters the padding or the neighbours touch.
			needles[fmt.Sprintf("modulus %s+%d", name, shift)] = []byte(s[4 : len(s)-4])
		}
	}
	for _, e := range es {
		for name, n := range needles {
			if bytes.Contains(e.Value, n) {
				t.Errorf("%s: the %s of the private key is stored in clear", e.Key, name)
			}
		}
	}
}
