package keys

import (
	"context"
	"crypto"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"time"

	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/lestrrat-go/jwx/v2/jwk"

	"fris.dev/services/auth/internal/storage"
)

// RefreshSigner is the active refresh key. Refresh tokens are read by
// the provider alone, so their signature need not be one that resource
// servers can check: an Ed25519 signature costs a fraction of an RSA one
// (BENCHMARKS.md, suite auth). The key is never published; it is sealed,
// rotated and kept like the signing keys.
type RefreshSigner struct {
	KID string
	Key ed25519.PrivateKey
}

// RefreshAlg is the refresh keys' JWS algorithm.
const RefreshAlg = jwa.EdDSA

// maintainRefresh is Maintain for the refresh keys: the same period,
// the same pruning.
func (m *Manager) maintainRefresh(ctx context.Context, now time.Time) error {
	cur, err := m.store.RefreshKeys(ctx)
	if err != nil {
		return err
	}
	if needsKey(cur, now, m.o.RotateEvery) || needsPrune(cur, now) {
		return m.updateRefresh(ctx, now, false)
	}
	return nil
}

// updateRefresh is update for the refresh keys. A retired refresh key is
// kept (PublishFor) until every refresh token it signed has expired.
func (m *Manager) updateRefresh(ctx context.Context, now time.Time, force bool) error {
	fresh, err := generateRefresh(now)
	if err != nil {
		return err
	}
	return m.store.UpdateRefreshKeys(ctx, func(cur []storage.SigningKey) ([]storage.SigningKey, error) {
		var out []storage.SigningKey
		for _, k := range cur {
			if !k.Active() && k.PublishUntil <= now.Unix() {
				continue
			}
			out = append(out, k)
		}
		if !force && !needsKey(out, now, m.o.RotateEvery) {
			return out, nil
		}
		for i := range out {
			if out[i].Active() {
				out[i].Retired = now.Unix()
				out[i].PublishUntil = now.Add(m.o.PublishFor).Unix()
			}
		}
		m.o.Log.InfoContext(ctx, "refresh key rotated", "kid", fresh.KID, "alg", fresh.Alg)
		return append(out, fresh), nil
	})
}

func generateRefresh(now time.Time) (storage.SigningKey, error) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return storage.SigningKey{}, err
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return storage.SigningKey{}, err
	}
	k, err := jwk.FromRaw(pub)
	if err != nil {
		return storage.SigningKey{}, err
	}
	tp, err := k.Thumbprint(crypto.SHA256)
	if err != nil {
		return storage.SigningKey{}, err
	}
	return storage.SigningKey{
		KID: base64.RawURLEncoding.EncodeToString(tp), Alg: RefreshAlg.String(),
		PrivateDER: der, Created: now.UnixNano(),
	}, nil
}

// loadRefresh adds the refresh keys to st: their public halves verify
// refresh tokens only, and none is published.
func (m *Manager) loadRefresh(ctx context.Context, st *state, now int64) error {
	ks, err := m.store.RefreshKeys(ctx)
	if err != nil {
		return err
	}
	for _, k := range ks {
		if !k.Active() && k.PublishUntil <= now {
			continue
		}
		raw, err := x509.ParsePKCS8PrivateKey(k.PrivateDER)
		if err != nil {
			return fmt.Errorf("refresh key %s: %w", k.KID, err)
		}
		priv, ok := raw.(ed25519.PrivateKey)
		if !ok || k.Alg != RefreshAlg.String() {
			return fmt.Errorf("refresh key %s is not Ed25519", k.KID)
		}
		if _, taken := st.verify[k.KID]; taken {
			return fmt.Errorf("refresh key %s has a signing key's kid", k.KID)
		}
		st.verify[k.KID] = VerifyKey{Alg: RefreshAlg, Key: priv.Public(), RefreshOnly: true}
		if k.Active() {
			st.refresh = &RefreshSigner{KID: k.KID, Key: priv}
		}
	}
	if st.refresh == nil {
		return errors.New("no active refresh key")
	}
	return nil
}
