package keys

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v2/jwa"

	"fris.dev/pkg/kv"
	"fris.dev/services/auth/internal/storage"
)

// TestRefreshKeyLife: the refresh key is made, rotated (on the period and
// by Rotate) and pruned like the signing key, and its MAC key with it;
// both verify only as refresh keys, and neither ever shows in /certs or
// the JWKS (which hold no symmetric key at all).
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
	unpublished := func(rs *RefreshSigner) {
		t.Helper()
		for _, kid := range []string{rs.EdKID, rs.KID} {
			for _, c := range m.Certs() {
				if c.GetKeyId() == kid {
					t.Fatalf("refresh key %s in /certs", kid)
				}
			}
			for _, k := range m.JWKS().GetKeys() {
				if k.GetKid() == kid || k.GetKty() == "oct" {
					t.Fatalf("refresh key %s in the JWKS (%v)", kid, k)
				}
			}
			if _, ok := m.Public().LookupKeyID(kid); ok {
				t.Fatalf("refresh key %s in the public set", kid)
			}
		}
		if n := m.Public().Len(); n != len(m.JWKS().GetKeys()) || n != len(m.Certs())*(1+len(CurveAlgs)) {
			t.Fatalf("public set has %d keys, /certs %d, the JWKS %d", n, len(m.Certs()), len(m.JWKS().GetKeys()))
		}
		for i := range m.Public().Len() {
			if k, _ := m.Public().Key(i); k.KeyType() == jwa.OctetSeq {
				t.Fatalf("a symmetric key in the public set: %s", k.KeyID())
			}
		}
	}
	rs := m.RefreshSigner()
	first := rs.EdKID
	unpublished(rs)
	if k, ok := m.Verifier(ctx, first); !ok || !k.RefreshOnly || k.Alg != jwa.EdDSA {
		t.Fatalf("refresh key as verifier: %+v %v", k, ok)
	}
	// The MAC key, derived from the refresh key under its own kid.
	if k, ok := m.Verifier(ctx, rs.KID); !ok || !k.RefreshOnly || k.Alg != jwa.HS256 || !bytes.Equal(k.Key.([]byte), rs.Key) ||
		rs.KID != first+MACKIDSuffix || len(rs.Key) != 32 || bytes.Equal(rs.Key, rs.EdKey.Seed()) {
		t.Fatalf("refresh MAC key as verifier: %+v %v (signer kid %s)", k, ok, rs.KID)
	}
	if k, _ := m.Verifier(ctx, m.Signer().KID); k.RefreshOnly {
		t.Fatal("the signing key verifies refresh tokens only")
	}
	// A second replica finds the key and derives the same MAC key.
	m2, err := New(ctx, store, Options{Bits: 2048, Alg: jwa.RS256, RotateEvery: time.Hour, PublishFor: 2 * time.Hour})
	if err != nil || m2.RefreshSigner().EdKID != first || m2.RefreshSigner().KID != rs.KID || !bytes.Equal(m2.RefreshSigner().Key, rs.Key) {
		t.Fatalf("second replica made its own refresh key or MAC: %v", err)
	}
	// Due: rotated with the signing key; the old one still verifies.
	now := time.Now()
	if err := m.Maintain(ctx, now.Add(61*time.Minute)); err != nil {
		t.Fatal(err)
	}
	second := m.RefreshSigner().EdKID
	if second == first || !m.Has(first) || !m.Has(rs.KID) || bytes.Equal(m.RefreshSigner().Key, rs.Key) {
		t.Fatalf("after rotation: refresh signer %s, has old %v", second, m.Has(first))
	}
	unpublished(m.RefreshSigner())
	// Rotate (rotate-keys) replaces it at once.
	if _, err := m.Rotate(ctx); err != nil {
		t.Fatal(err)
	}
	if third := m.RefreshSigner().EdKID; third == second || !m.Has(second) || !m.Has(second+MACKIDSuffix) {
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
	if m.Has(first) || m.Has(rs.KID) {
		t.Fatal("a pruned refresh key or its MAC key still verifies")
	}
}
