package keys

import (
	"context"
	"crypto"
	"crypto/ed25519"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"time"

	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/lestrrat-go/jwx/v2/jwk"

	"fris.dev/services/auth/internal/storage"
)

// RefreshSigner is the active refresh key as it signs refresh tokens.
// Refresh tokens are read by the provider alone, so their signature need
// not be one that resource servers can check, nor even a public-key one:
// an HMAC-SHA-256 (JWS HS256) costs about a µs, where an Ed25519
// signature and its check cost about 90 µs here (BENCHMARKS.md, suite
// auth). The HMAC key is derived from the stored Ed25519 refresh key
// (macKey), so it is sealed, rotated and pruned exactly with it and needs
// no record of its own; it is never published, and the key set holds no
// symmetric key a resource server could be confused with.
type RefreshSigner struct {
	KID string // the MAC's kid: the refresh key's and MACKIDSuffix
	Key []byte // the HMAC-SHA-256 key
	// EdKID and EdKey are the stored refresh key itself. It signs nothing
	// any more; its EdDSA signatures, made before the HMAC, verify until
	// the key is pruned.
	EdKID string
	EdKey ed25519.PrivateKey
}

const (
	// RefreshAlg signs refresh tokens: an HMAC, verifiable by its holder only.
	RefreshAlg = jwa.HS256
	// RefreshKeyAlg is the stored refresh keys' own algorithm (Ed25519),
	// that of the refresh tokens signed before the HMAC.
	RefreshKeyAlg = jwa.EdDSA
	// MACKIDSuffix makes the MAC's kid from the refresh key's: a kid of
	// its own, so the verify map holds both keys. Thumbprints (base64url)
	// have no dot, so it is no other key's kid.
	MACKIDSuffix = ".hs256"
	// macInfo is the HKDF label of the MAC key: any other key ever derived
	// from the same seed takes another label, so the two are independent.
	macInfo = "fris refresh-token HS256 v1"
)

// macKey derives the refresh-token HMAC key from an Ed25519 refresh key's
// seed (HKDF-SHA-256, RFC 5869; the seed is uniformly random, so no salt is
// needed). 32 bytes, the hash's size: the least RFC 7518 3.2 allows for
// HS256.
func macKey(priv ed25519.PrivateKey) ([]byte, error) {
	return hkdf.Key(sha256.New, priv.Seed(), nil, macInfo, 32)
}

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
		KID: base64.RawURLEncoding.EncodeToString(tp), Alg: RefreshKeyAlg.String(),
		PrivateDER: der, Created: now.UnixNano(),
	}, nil
}

// loadRefresh adds the refresh keys to st, each twice: its public half
// verifies the EdDSA refresh tokens signed before the HMAC, its MAC key
// the HS256 ones; both verify refresh tokens only, and neither is
// published. The MAC keys are derived here, once per load, not per token.
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
		if !ok || k.Alg != RefreshKeyAlg.String() {
			return fmt.Errorf("refresh key %s is not Ed25519", k.KID)
		}
		mac, err := macKey(priv)
		if err != nil {
			return fmt.Errorf("refresh key %s: %w", k.KID, err)
		}
		macKID := k.KID + MACKIDSuffix
		for _, kid := range []string{k.KID, macKID} {
			if _, taken := st.verify[kid]; taken {
				return fmt.Errorf("refresh key %s has a signing key's kid", kid)
			}
		}
		st.verify[k.KID] = VerifyKey{Alg: RefreshKeyAlg, Key: priv.Public(), RefreshOnly: true}
		st.verify[macKID] = VerifyKey{Alg: RefreshAlg, Key: mac, RefreshOnly: true}
		if k.Active() {
			st.refresh = &RefreshSigner{KID: macKID, Key: mac, EdKID: k.KID, EdKey: priv}
		}
	}
	if st.refresh == nil {
		return errors.New("no active refresh key")
	}
	return nil
}
