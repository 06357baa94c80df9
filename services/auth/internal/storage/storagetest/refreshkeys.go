package storagetest

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"fris.dev/pkg/kv"
	"fris.dev/services/auth/internal/envelope"
	"fris.dev/services/auth/internal/storage"
)

// testRefreshKeys: the refresh keys are a set of their own beside the
// signing keys, sealed at rest like them, moved to a new secret by the same
// rewrap, and a record moved from one set to the other does not open.
func testRefreshKeys(t *testing.T, b backend) {
	ctx := context.Background()
	now := time.Now()
	db := b.openKV(t)
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	s := b.on(t, db, oldSecret())
	if err := s.UpdateRefreshKeys(ctx, func(ks []storage.SigningKey) ([]storage.SigningKey, error) {
		if len(ks) != 0 {
			t.Errorf("refresh keys of an empty store: %+v", ks)
		}
		return []storage.SigningKey{{KID: "r0", Alg: "EdDSA", PrivateDER: der, Created: now.UnixNano()}}, nil
	}); err != nil {
		t.Fatal(err)
	}
	if ks, err := s.SigningKeys(ctx); err != nil || len(ks) != 0 {
		t.Fatalf("a refresh key among the signing keys: %+v %v", ks, err)
	}
	if ks, err := s.RefreshKeys(ctx); err != nil || len(ks) != 1 || ks[0].KID != "r0" || ks[0].Alg != "EdDSA" || !bytes.Equal(ks[0].PrivateDER, der) {
		t.Fatalf("RefreshKeys = %+v %v", ks, err)
	}
	es, err := db.Scan(ctx, "", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range es {
		if bytes.Contains(e.Value, priv.Seed()) || bytes.Contains(e.Value, der) {
			t.Errorf("%s: the refresh key is stored in clear", e.Key)
		}
	}
	if _, err := b.on(t, db, newSecret()).RefreshKeys(ctx); !errors.Is(err, envelope.ErrUnknownSecret) {
		t.Fatalf("wrong secret: RefreshKeys = %v", err)
	}
	rotated := b.on(t, db, newSecret(), oldSecret())
	if done, err := rotated.RewrapSigningKeys(ctx); err != nil || len(done.KIDs) != 1 || done.KIDs[0] != "r0" {
		t.Fatalf("RewrapSigningKeys = %v %v", done, err)
	}
	if ks, err := b.on(t, db, newSecret()).RefreshKeys(ctx); err != nil || len(ks) != 1 || ks[0].Stale {
		t.Fatalf("new secret alone after rewrap: %+v %v", ks, err)
	}
	// Dropping a key deletes it.
	if err := rotated.UpdateRefreshKeys(ctx, func([]storage.SigningKey) ([]storage.SigningKey, error) { return nil, nil }); err != nil {
		t.Fatal(err)
	}
	if ks, err := rotated.RefreshKeys(ctx); err != nil || len(ks) != 0 {
		t.Fatalf("after dropping: %+v %v", ks, err)
	}

	// A refresh key's record planted among the signing keys, same kid.
	if err := rotated.UpdateRefreshKeys(ctx, func([]storage.SigningKey) ([]storage.SigningKey, error) {
		return []storage.SigningKey{{KID: "r1", Alg: "EdDSA", PrivateDER: der, Created: now.UnixNano()}}, nil
	}); err != nil {
		t.Fatal(err)
	}
	raw, err := db.Get(ctx, "refresh-key/r1")
	if err != nil {
		t.Fatal(err)
	}
	var rec map[string]any
	if err := json.Unmarshal(raw, &rec); err != nil {
		t.Fatal(err)
	}
	if err := db.Update(ctx, func(tx kv.Tx) error { return tx.Put("signing-key/r1", raw, 0) }); err != nil {
		t.Fatal(err)
	}
	if _, err := rotated.SigningKeys(ctx); !errors.Is(err, envelope.ErrCorrupt) {
		t.Fatalf("refresh key moved among the signing keys: %v", err)
	}
}
