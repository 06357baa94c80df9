package keys

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"fmt"
	"time"

	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/lestrrat-go/jwx/v2/jwk"
	"google.golang.org/protobuf/proto"

	authv1 "fris.dev/proto/auth/v1"
	"fris.dev/services/auth/internal/storage"
)

// CurveAlgs are the elliptic-curve algorithms a client may have its access
// and id tokens signed with instead of RSA: each has an active key of its
// own, published like the RSA keys and rotated with them. A signature
// costs some tens of µs where an RSA-2048 one costs milliseconds.
var CurveAlgs = []jwa.SignatureAlgorithm{jwa.ES256, jwa.EdDSA}

// IsCurveAlg reports whether alg is one of CurveAlgs.
func IsCurveAlg(alg jwa.SignatureAlgorithm) bool {
	for _, a := range CurveAlgs {
		if a == alg {
			return true
		}
	}
	return false
}

// ofAlg is the part of ks of algorithm alg.
func ofAlg(ks []storage.SigningKey, alg jwa.SignatureAlgorithm) []storage.SigningKey {
	var out []storage.SigningKey
	for _, k := range ks {
		if k.Alg == alg.String() {
			out = append(out, k)
		}
	}
	return out
}

// maintainCurve is Maintain for the elliptic-curve keys: per algorithm,
// the same period and the same pruning as the RSA keys.
func (m *Manager) maintainCurve(ctx context.Context, now time.Time) error {
	cur, err := m.store.CurveKeys(ctx)
	if err != nil {
		return err
	}
	for _, alg := range CurveAlgs {
		if ks := ofAlg(cur, alg); needsKey(ks, now, m.o.RotateEvery) || needsPrune(ks, now) {
			if err := m.updateCurve(ctx, alg, now, false); err != nil {
				return err
			}
		}
	}
	return nil
}

// updateCurve is update for the keys of one curve algorithm; the other
// algorithm's keys are left as they are, so each rotates and overlaps on
// its own.
func (m *Manager) updateCurve(ctx context.Context, alg jwa.SignatureAlgorithm, now time.Time, force bool) error {
	fresh, err := generateCurve(alg, now)
	if err != nil {
		return err
	}
	return m.store.UpdateCurveKeys(ctx, func(cur []storage.SigningKey) ([]storage.SigningKey, error) {
		var out, mine []storage.SigningKey
		for _, k := range cur {
			switch {
			case k.Alg != alg.String():
				out = append(out, k)
			case !k.Active() && k.PublishUntil <= now.Unix():
				// every token it signed has expired
			default:
				mine = append(mine, k)
			}
		}
		if !force && !needsKey(mine, now, m.o.RotateEvery) {
			return append(out, mine...), nil
		}
		for i := range mine {
			if mine[i].Active() {
				mine[i].Retired = now.Unix()
				mine[i].PublishUntil = now.Add(m.o.PublishFor).Unix()
			}
		}
		m.o.Log.InfoContext(ctx, "signing key rotated", "kid", fresh.KID, "alg", fresh.Alg)
		return append(append(out, mine...), fresh), nil
	})
}

func generateCurve(alg jwa.SignatureAlgorithm, now time.Time) (storage.SigningKey, error) {
	var priv crypto.Signer
	var err error
	switch alg {
	case jwa.ES256:
		priv, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	case jwa.EdDSA:
		_, priv, err = ed25519.GenerateKey(rand.Reader)
	default:
		return storage.SigningKey{}, fmt.Errorf("no curve for %s", alg)
	}
	if err != nil {
		return storage.SigningKey{}, err
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return storage.SigningKey{}, err
	}
	k, err := jwk.FromRaw(priv.Public())
	if err != nil {
		return storage.SigningKey{}, err
	}
	tp, err := k.Thumbprint(crypto.SHA256)
	if err != nil {
		return storage.SigningKey{}, err
	}
	return storage.SigningKey{
		KID: base64.RawURLEncoding.EncodeToString(tp), Alg: alg.String(),
		PrivateDER: der, Created: now.UnixNano(),
	}, nil
}

// loadCurve adds the elliptic-curve keys to st: published in the JWKS with
// their alg, kid and curve, not in /certs (its entries are RSA keys, and
// the Samply clients that read it take every entry as one).
func (m *Manager) loadCurve(ctx context.Context, st *state, now int64) error {
	ks, err := m.store.CurveKeys(ctx)
	if err != nil {
		return err
	}
	st.curve = map[jwa.SignatureAlgorithm]*Signer{}
	for _, k := range ks {
		if !k.Active() && k.PublishUntil <= now {
			continue
		}
		alg := jwa.SignatureAlgorithm(k.Alg)
		raw, err := x509.ParsePKCS8PrivateKey(k.PrivateDER)
		if err != nil {
			return fmt.Errorf("signing key %s: %w", k.KID, err)
		}
		var pub crypto.PublicKey
		jw := &authv1.JWK{Use: "sig", Kid: k.KID, Alg: k.Alg}
		switch priv := raw.(type) {
		case *ecdsa.PrivateKey:
			if alg != jwa.ES256 || priv.Curve != elliptic.P256() {
				return fmt.Errorf("signing key %s: %s with a %s key", k.KID, alg, priv.Curve.Params().Name)
			}
			pub = &priv.PublicKey
			b, err := priv.PublicKey.Bytes() // 0x04 || X || Y, 32 bytes each
			if err != nil {
				return err
			}
			jw.Kty, jw.Crv = "EC", proto.String("P-256")
			jw.X, jw.Y = proto.String(base64.RawURLEncoding.EncodeToString(b[1:33])), proto.String(base64.RawURLEncoding.EncodeToString(b[33:]))
		case ed25519.PrivateKey:
			if alg != jwa.EdDSA {
				return fmt.Errorf("signing key %s: %s with an Ed25519 key", k.KID, alg)
			}
			p := priv.Public().(ed25519.PublicKey)
			pub = p
			jw.Kty, jw.Crv, jw.X = "OKP", proto.String("Ed25519"), proto.String(base64.RawURLEncoding.EncodeToString(p))
		default:
			return fmt.Errorf("signing key %s: %T is not an elliptic-curve key", k.KID, raw)
		}
		if _, taken := st.verify[k.KID]; taken {
			return fmt.Errorf("signing key %s: kid taken", k.KID)
		}
		pk, err := jwk.FromRaw(pub)
		if err != nil {
			return err
		}
		for _, kv := range [][2]any{{jwk.KeyIDKey, k.KID}, {jwk.AlgorithmKey, alg}, {jwk.KeyUsageKey, jwk.ForSignature}} {
			if err := pk.Set(kv[0].(string), kv[1]); err != nil {
				return err
			}
		}
		if err := st.public.AddKey(pk); err != nil {
			return err
		}
		st.verify[k.KID] = VerifyKey{Alg: alg, Key: pub}
		st.jwks.Keys = append(st.jwks.Keys, jw)
		if k.Active() {
			st.curve[alg] = &Signer{KID: k.KID, Alg: alg, Key: raw}
		}
	}
	for _, alg := range CurveAlgs {
		if st.curve[alg] == nil {
			return fmt.Errorf("no active %s signing key", alg)
		}
	}
	return nil
}

// SignerFor returns the active key of alg: an elliptic-curve one for
// ES256 and EdDSA, the RSA key for anything else (RS256, "").
func (m *Manager) SignerFor(alg jwa.SignatureAlgorithm) *Signer {
	st := m.cur()
	if s := st.curve[alg]; s != nil {
		return s
	}
	return st.signer
}

// Algs are the algorithms tokens are signed with: the RSA keys' and
// CurveAlgs (discovery's id_token_signing_alg_values_supported).
func (m *Manager) Algs() []string {
	out := []string{m.Signer().Alg.String()}
	for _, a := range CurveAlgs {
		out = append(out, a.String())
	}
	return out
}

// staleElsewhere reports whether a refresh or curve key is sealed under an
// older secret: the rewrap covers every ring, and a replica may have made
// such a key (at its upgrade, say) after the RSA keys were rewrapped.
func (m *Manager) staleElsewhere(ctx context.Context) (bool, error) {
	for _, list := range []func(context.Context) ([]storage.SigningKey, error){m.store.RefreshKeys, m.store.CurveKeys} {
		ks, err := list(ctx)
		if err != nil {
			return false, err
		}
		for _, k := range ks {
			if k.Stale {
				return true, nil
			}
		}
	}
	return false, nil
}
