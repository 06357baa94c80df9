package keys

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v2/jwa"

	"fris.dev/pkg/kv"
	"fris.dev/services/auth/internal/storage"
)

// TestRefreshKeyLife: the refresh key is made, rotated (on the period and
// by Rotate) and pruned like the signing key, verifies only as a refresh
// key, and never shows in /certs or the JWKS.
func TestRefreshKeyLife(t *testing.T) {
	ctx := context.Background()
	db, err := kv.OpenBolt(filepath.Join(t.TempDir(), "auth.db"), kv.BoltOptions{NoSync: true, Partitions: storage.Partitions})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	store := storage.New(db, testSealer(t))
	m, err := New(ctx, store, Options{Bits: 2048, Alg: jwa.RS256, RotateEvery: time.Hour, PublishFor: 2 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	unpublished := func(kid string) {
		t.Helper()
		for _, c := range m.Certs() {
			if c.GetKeyId() == kid {
				t.Fatalf("refresh key %s in /certs", kid)
			}
		}
		for _, k := range m.JWKS().GetKeys() {
			if k.GetKid() == kid {
				t.Fatalf("refresh key %s in the JWKS", kid)
			}
		}
		if kid := m.Public().Len(); kid != len(m.JWKS().GetKeys()) || kid != len(m.Certs())*(1+len(CurveAlgs)) {
			t.Fatalf("public set has %d keys, /certs %d, the JWKS %d", kid, len(m.Certs()), len(m.JWKS().GetKeys()))
		}
	}
	first := m.RefreshSigner().KID
	unpublished(first)
	if k, ok := m.Verifier(ctx, first); !ok || !k.RefreshOnly || k.Alg != jwa.EdDSA {
		t.Fatalf("refresh key as verifier: %+v %v", k, ok)
	}
	if k, _ := m.Verifier(ctx, m.Signer().KID); k.RefreshOnly {
		t.Fatal("the signing key verifies refresh tokens only")
	}
	// A second replica finds the key.
	m2, err := New(ctx, store, Options{Bits: 2048, Alg: jwa.RS256, RotateEvery: time.Hour, PublishFor: 2 * time.Hour})
	if err != nil || m2.RefreshSigner().KID != first {
		t.Fatalf("second replica made its own refresh key: %v", err)
	}
	// Due: rotated with the signing key; the old one still verifies.
	now := time.Now()
	if err := m.Maintain(ctx, now.Add(61*time.Minute)); err != nil {
		t.Fatal(err)
	}
	second := m.RefreshSigner().KID
	if second == first || !m.Has(first) {
		t.Fatalf("after rotation: refresh signer %s, has old %v", second, m.Has(first))
	}
	unpublished(second)
	// Rotate (rotate-keys) replaces it at once.
	if _, err := m.Rotate(ctx); err != nil {
		t.Fatal(err)
	}
	if third := m.RefreshSigner().KID; third == second || !m.Has(second) {
		t.Fatalf("Rotate left the refresh key %s", third)
	}
	// Past the retired keys' keeping: pruned (the one active at the
	// time is due too, and retired now).
	if err := m.Maintain(ctx, now.Add(5*time.Hour)); err != nil {
		t.Fatal(err)
	}
	ks, err := store.RefreshKeys(ctx)
	if err != nil || len(ks) != 2 || ks[0].Active() || !ks[1].Active() {
		t.Fatalf("after pruning: %+v %v", ks, err)
	}
	for _, k := range ks {
		if k.KID == first || k.KID == second {
			t.Fatalf("refresh key %s kept past its tokens", k.KID)
		}
	}
}
