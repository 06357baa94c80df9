package keys

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"path/filepath"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v2/jwa"

	"fris.dev/pkg/kv"
	"fris.dev/services/auth/internal/envelope"
	"fris.dev/services/auth/internal/storage"
)

func newCurveManager(t *testing.T) (*Manager, storage.Store) {
	t.Helper()
	db, err := kv.OpenBolt(filepath.Join(t.TempDir(), "auth.db"), kv.BoltOptions{NoSync: true, Partitions: storage.Partitions})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	store := storage.New(db, testSealer(t))
	m, err := New(context.Background(), store, Options{Bits: 2048, Alg: jwa.RS256, RotateEvery: time.Hour, PublishFor: 2 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	return m, store
}

// TestKeyPerAlgorithm: one active key per algorithm, each of its own kind,
// published in the JWKS with its alg and curve, verifying as its own
// algorithm only; /certs keeps the RSA keys.
func TestKeyPerAlgorithm(t *testing.T) {
	ctx := context.Background()
	m, _ := newCurveManager(t)
	es, ed, rs := m.SignerFor(jwa.ES256), m.SignerFor(jwa.EdDSA), m.SignerFor("")
	if k, ok := es.Key.(*ecdsa.PrivateKey); !ok || k.Curve != elliptic.P256() || es.Alg != jwa.ES256 {
		t.Fatalf("ES256 signer: %T %v", es.Key, es.Alg)
	}
	if _, ok := ed.Key.(ed25519.PrivateKey); !ok || ed.Alg != jwa.EdDSA || ed.KID == m.RefreshSigner().KID {
		t.Fatalf("EdDSA signer: %T %v (refresh key %s)", ed.Key, ed.KID, m.RefreshSigner().KID)
	}
	if rs != m.Signer() || m.SignerFor(jwa.RS256) != m.Signer() {
		t.Fatal("RS256 and the empty algorithm are not the RSA key")
	}
	if got := m.Algs(); len(got) != 3 || got[0] != "RS256" || got[1] != "ES256" || got[2] != "EdDSA" {
		t.Fatalf("Algs = %v", got)
	}
	if len(m.Certs()) != 1 || m.Certs()[0].GetKeyType() != "RSA" {
		t.Fatalf("/certs = %v", m.Certs())
	}
	byKID := map[string]string{}
	for _, k := range m.JWKS().GetKeys() {
		byKID[k.GetKid()] = k.GetAlg() + " " + k.GetKty() + " " + k.GetCrv()
		if k.GetKty() == "EC" && (len(k.GetX()) != 43 || len(k.GetY()) != 43) {
			t.Fatalf("EC JWK coordinates: %v", k)
		}
		if k.GetKty() == "OKP" && (len(k.GetX()) != 43 || k.GetY() != "") {
			t.Fatalf("OKP JWK: %v", k)
		}
	}
	if byKID[es.KID] != "ES256 EC P-256" || byKID[ed.KID] != "EdDSA OKP Ed25519" || byKID[rs.KID] != "RS256 RSA " || len(byKID) != 3 {
		t.Fatalf("JWKS = %v", byKID)
	}
	if m.Public().Len() != 3 {
		t.Fatalf("public set has %d keys", m.Public().Len())
	}
	for _, s := range []*Signer{es, ed, rs} {
		if k, ok := m.Verifier(ctx, s.KID); !ok || k.Alg != s.Alg || k.RefreshOnly {
			t.Fatalf("verifier of %s: %+v %v", s.Alg, k, ok)
		}
	}
}

// TestCurveRotationOverlapsPerAlgorithm: a rotation replaces the active key
// of every algorithm; each retired key stays published until its last
// token expires, then goes, and a second replica finds the keys and makes
// none of its own.
func TestCurveRotationOverlapsPerAlgorithm(t *testing.T) {
	ctx := context.Background()
	m, store := newCurveManager(t)
	before := map[jwa.SignatureAlgorithm]string{}
	for _, a := range CurveAlgs {
		before[a] = m.SignerFor(a).KID
	}
	m2, err := New(ctx, store, Options{Bits: 2048, Alg: jwa.RS256, RotateEvery: time.Hour, PublishFor: 2 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range CurveAlgs {
		if m2.SignerFor(a).KID != before[a] {
			t.Fatalf("second replica made its own %s key", a)
		}
	}
	if _, err := m.Rotate(ctx); err != nil {
		t.Fatal(err)
	}
	for _, a := range CurveAlgs {
		if now := m.SignerFor(a).KID; now == before[a] || !m.Has(before[a]) {
			t.Fatalf("%s after rotation: signer %s, old still published %v", a, now, m.Has(before[a]))
		}
	}
	if len(m.JWKS().GetKeys()) != 6 {
		t.Fatalf("JWKS after rotation: %d keys", len(m.JWKS().GetKeys()))
	}
	// Due by age alone: each algorithm rotates on its own schedule too.
	cs, _ := store.CurveKeys(ctx)
	var until int64
	for _, k := range cs {
		if !k.Active() {
			until = max(until, k.PublishUntil)
		}
	}
	if until == 0 {
		t.Fatalf("no retired curve key: %+v", cs)
	}
	if err := m.Maintain(ctx, time.Unix(until+1, 0)); err != nil {
		t.Fatal(err)
	}
	cs, _ = store.CurveKeys(ctx)
	for _, k := range cs {
		for _, a := range CurveAlgs {
			if k.KID == before[a] {
				t.Fatalf("%s key kept past its publication window", a)
			}
		}
	}
	per := map[string]int{}
	for _, k := range cs {
		if k.Active() {
			per[k.Alg]++
		}
	}
	if per["ES256"] != 1 || per["EdDSA"] != 1 {
		t.Fatalf("active curve keys after maintenance: %v", per)
	}
}

// TestMaintainRewrapsCurveKeys: curve keys sealed under the second secret
// (by a lagging replica) while the RSA keys are current are still moved to
// the first secret, so the old one can go.
func TestMaintainRewrapsCurveKeys(t *testing.T) {
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
	m, err := New(ctx, storage.New(db, box(2, 1)), Options{Bits: 2048, Alg: jwa.RS256, RotateEvery: time.Hour, PublishFor: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	// The lagging replica writes the curve keys, sealing them under secret 1.
	if err := storage.New(db, box(1, 2)).UpdateCurveKeys(ctx, func(ks []storage.SigningKey) ([]storage.SigningKey, error) { return ks, nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := storage.New(db, box(2)).CurveKeys(ctx); err == nil {
		t.Fatal("the new secret alone opens a key the lagging replica sealed")
	}
	if err := m.Maintain(ctx, time.Now()); err != nil {
		t.Fatal(err)
	}
	if ks, err := storage.New(db, box(2)).CurveKeys(ctx); err != nil || len(ks) != len(CurveAlgs) {
		t.Fatalf("after Maintain, the new secret alone: %+v %v", ks, err)
	}
}
