package keys

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v2/jwa"

	"fris.dev/pkg/kv"
	"fris.dev/services/auth/internal/envelope"
	"fris.dev/services/auth/internal/storage"
)

func TestRotationAndPruning(t *testing.T) {
	ctx := context.Background()
	db, err := kv.OpenBolt(filepath.Join(t.TempDir(), "auth.db"), kv.BoltOptions{NoSync: true, Partitions: storage.Partitions})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	store := storage.New(db, testSealer(t))
	if _, err := New(ctx, store, Options{Bits: 1024, Alg: jwa.RS256}); err == nil {
		t.Fatal("1024-bit keys accepted")
	}
	if _, err := New(ctx, store, Options{Bits: 2048, Alg: jwa.HS256}); err == nil {
		t.Fatal("HS256 accepted")
	}
	m, err := New(ctx, store, Options{Bits: 2048, Alg: jwa.RS512, RotateEvery: time.Hour, PublishFor: 2 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	first := m.Signer().KID
	if m.Signer().Alg != jwa.RS512 || len(m.Certs()) != 1 || m.JWKS().GetKeys()[0].GetAlg() != "RS512" {
		t.Fatalf("initial state: %v %v", m.Signer(), m.JWKS())
	}
	// A second replica starting now finds the key and adds none.
	m2, err := New(ctx, store, Options{Bits: 2048, Alg: jwa.RS512, RotateEvery: time.Hour, PublishFor: 2 * time.Hour})
	if err != nil || m2.Signer().KID != first {
		t.Fatalf("second replica made its own key: %v", err)
	}
	// Not due yet: nothing changes.
	now := time.Now()
	if err := m.Maintain(ctx, now.Add(30*time.Minute)); err != nil || m.Signer().KID != first {
		t.Fatalf("early maintenance rotated: %v", err)
	}
	// Due: a new key signs, the old one stays published.
	if err := m.Maintain(ctx, now.Add(61*time.Minute)); err != nil {
		t.Fatal(err)
	}
	second := m.Signer().KID
	if second == first || !m.Has(first) || len(m.Certs()) != 2 {
		t.Fatalf("after rotation: signer %s, has old %v, certs %d", second, m.Has(first), len(m.Certs()))
	}
	// The other replica learns about the new key when it meets its kid.
	time.Sleep(300 * time.Millisecond)
	if !m2.ReloadFor(ctx, second) || m2.Signer().KID != second {
		t.Fatal("replica did not pick up the rotation")
	}
	// Past the publication window the old key is gone.
	ks, _ := store.SigningKeys(ctx)
	old := ks[0]
	if old.Active() || old.PublishUntil == 0 {
		t.Fatalf("old key record = %+v", old)
	}
	if err := m.Maintain(ctx, time.Unix(old.PublishUntil+1, 0)); err != nil {
		t.Fatal(err)
	}
	ks, _ = store.SigningKeys(ctx)
	for _, k := range ks {
		if k.KID == first {
			t.Fatal("expired key still stored")
		}
	}
}

// RotateEvery 0 keeps one key for good (clients that pin the server's key
// never see another), while an operator's rotation still works.
func TestNoAutomaticRotation(t *testing.T) {
	ctx := context.Background()
	db, err := kv.OpenBolt(filepath.Join(t.TempDir(), "auth.db"), kv.BoltOptions{NoSync: true, Partitions: storage.Partitions})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	m, err := New(ctx, storage.New(db, testSealer(t)), Options{Bits: 2048, Alg: jwa.RS256, PublishFor: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	first := m.Signer().KID
	for _, later := range []time.Duration{time.Hour, 24 * time.Hour, 10 * 365 * 24 * time.Hour} {
		if err := m.Maintain(ctx, time.Now().Add(later)); err != nil || m.Signer().KID != first {
			t.Fatalf("maintenance %v later: signer %s, want %s (%v)", later, m.Signer().KID, first, err)
		}
	}
	if _, err := m.Rotate(ctx); err != nil || m.Signer().KID == first {
		t.Fatalf("manual rotation: %v", err)
	}
}

// testSealer seals signing keys under a fixed secret: tests here are not
// about encryption at rest (see envelope and storagetest).
func testSealer(t testing.TB) storage.Sealer {
	t.Helper()
	b, err := envelope.New([][]byte{make([]byte, envelope.SecretSize)})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestMaintainRewraps: a replica moves keys sealed under its second secret
// (by a replica not yet restarted with the new secret first) to its first,
// so the old secret can go.
func TestMaintainRewraps(t *testing.T) {
	ctx := context.Background()
	db, err := kv.OpenBolt(filepath.Join(t.TempDir(), "auth.db"), kv.BoltOptions{NoSync: true, Partitions: storage.Partitions})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	box := func(secrets ...byte) storage.Sealer {
		var ss [][]byte
		for _, b := range secrets {
			ss = append(ss, bytes.Repeat([]byte{b}, envelope.SecretSize))
		}
		b, err := envelope.New(ss)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	o := Options{Bits: 2048, Alg: jwa.RS256, RotateEvery: time.Hour, PublishFor: time.Hour}
	m, err := New(ctx, storage.New(db, box(2, 1)), o)
	if err != nil {
		t.Fatal(err)
	}
	// A replica still on the old order seals under the old secret.
	lagging, err := New(ctx, storage.New(db, box(1, 2)), o)
	if err != nil || lagging.Signer().KID != m.Signer().KID {
		t.Fatalf("lagging replica: %v", err)
	}
	if _, err := storage.New(db, box(2)).SigningKeys(ctx); err == nil {
		t.Fatal("the new secret alone opens a key the lagging replica sealed")
	}
	if err := m.Maintain(ctx, time.Now()); err != nil {
		t.Fatal(err)
	}
	ks, err := storage.New(db, box(2)).SigningKeys(ctx)
	if err != nil || len(ks) != 1 || ks[0].KID != m.Signer().KID {
		t.Fatalf("after Maintain, the new secret alone: %+v %v", ks, err)
	}
}
