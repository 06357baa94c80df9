package storagetest

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"errors"
	"testing"
	"time"

	"fris.dev/pkg/kv"
	"fris.dev/services/auth/internal/envelope"
	"fris.dev/services/auth/internal/storage"
)

// testCurveKeys: the elliptic-curve signing keys are a set of their own
// beside the RSA and refresh keys, sealed at rest, moved to a new secret by
// the same rewrap, and a record moved into another set does not open.
func testCurveKeys(t *testing.T, b backend) {
	ctx := context.Background()
	now := time.Now()
	db := b.openKV(t)
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	s := b.on(t, db, oldSecret())
	if err := s.UpdateCurveKeys(ctx, func(ks []storage.SigningKey) ([]storage.SigningKey, error) {
		if len(ks) != 0 {
			t.Errorf("curve keys of an empty store: %+v", ks)
		}
		return []storage.SigningKey{{KID: "c0", Alg: "ES256", PrivateDER: der, Created: now.UnixNano()}}, nil
	}); err != nil {
		t.Fatal(err)
	}
	if ks, err := s.SigningKeys(ctx); err != nil || len(ks) != 0 {
		t.Fatalf("a curve key among the RSA keys: %+v %v", ks, err)
	}
	if ks, err := s.RefreshKeys(ctx); err != nil || len(ks) != 0 {
		t.Fatalf("a curve key among the refresh keys: %+v %v", ks, err)
	}
	if ks, err := s.CurveKeys(ctx); err != nil || len(ks) != 1 || ks[0].KID != "c0" || ks[0].Alg != "ES256" || !bytes.Equal(ks[0].PrivateDER, der) {
		t.Fatalf("CurveKeys = %+v %v", ks, err)
	}
	es, err := db.Scan(ctx, "", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range es {
		if bytes.Contains(e.Value, der) || bytes.Contains(e.Value, priv.D.Bytes()) {
			t.Errorf("%s: the curve key is stored in clear", e.Key)
		}
	}
	if _, err := b.on(t, db, newSecret()).CurveKeys(ctx); !errors.Is(err, envelope.ErrUnknownSecret) {
		t.Fatalf("wrong secret: CurveKeys = %v", err)
	}
	rotated := b.on(t, db, newSecret(), oldSecret())
	if done, err := rotated.RewrapSigningKeys(ctx); err != nil || len(done.KIDs) != 1 || done.KIDs[0] != "c0" {
		t.Fatalf("RewrapSigningKeys = %v %v", done, err)
	}
	if ks, err := b.on(t, db, newSecret()).CurveKeys(ctx); err != nil || len(ks) != 1 || ks[0].Stale {
		t.Fatalf("new secret alone after rewrap: %+v %v", ks, err)
	}
	// A curve key's record planted among the RSA keys does not open.
	raw, err := db.Get(ctx, "curve-key/c0")
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(ctx, func(tx kv.Tx) error { return tx.Put("signing-key/c0", raw, 0) }); err != nil {
		t.Fatal(err)
	}
	if _, err := rotated.SigningKeys(ctx); !errors.Is(err, envelope.ErrCorrupt) {
		t.Fatalf("curve key moved among the signing keys: %v", err)
	}
	if err := db.Update(ctx, func(tx kv.Tx) error { return tx.Delete("signing-key/c0") }); err != nil {
		t.Fatal(err)
	}
	// Dropping a key deletes it.
	if err := rotated.UpdateCurveKeys(ctx, func([]storage.SigningKey) ([]storage.SigningKey, error) { return nil, nil }); err != nil {
		t.Fatal(err)
	}
	if ks, err := rotated.CurveKeys(ctx); err != nil || len(ks) != 0 {
		t.Fatalf("after dropping: %+v %v", ks, err)
	}
}
