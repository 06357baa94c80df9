// Package keys manages the identity provider's signing keys: per
// algorithm (RSA, and the elliptic-curve ones of curve.go) one active key
// signs; it is replaced on a period; retired keys stay published until
// every token they signed has expired. The keys live in the store, so all
// replicas sign with the same key and publish the same set. Beside them, a
// set of refresh keys (Ed25519, refresh.go) lives the same life but is never
// published: only the provider reads the refresh tokens signed with them
// (an HMAC under a key derived from each).
package keys

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"slices"
	"sync"
	"time"

	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/lestrrat-go/jwx/v2/jwk"
	"google.golang.org/protobuf/proto"

	authv1 "fris.dev/proto/auth/v1"
	"fris.dev/services/auth/internal/storage"
)

// Options configure the manager.
type Options struct {
	Bits        int                    // RSA modulus size, >= 2048
	Alg         jwa.SignatureAlgorithm // RS256 or RS512
	RotateEvery time.Duration          // age at which the active key is replaced; 0: never automatically
	// PublishFor is how long a retired key stays published: the longest
	// lifetime of a token it may have signed.
	PublishFor time.Duration
	Log        *slog.Logger
}

// Signer is an active key, ready to sign. Key is the parsed private key
// itself (*rsa.PrivateKey, *ecdsa.PrivateKey or ed25519.PrivateKey):
// handing jwx a jwk.Key would make it rebuild (and Go re-validate) an
// rsa.PrivateKey on every signature, ~15% of a token response.
type Signer struct {
	KID string
	Alg jwa.SignatureAlgorithm
	Key any
}

// VerifyKey is a key as token verification needs it: the algorithm is the
// key's own, and a token whose header names another is refused. Key is an
// *rsa.PublicKey, *ecdsa.PublicKey or ed25519.PublicKey, or for a refresh
// key (RefreshOnly: it verifies refresh tokens and nothing else) an
// ed25519.PublicKey (EdDSA) or its derived HMAC key, a []byte (HS256).
type VerifyKey struct {
	Alg         jwa.SignatureAlgorithm
	Key         any
	RefreshOnly bool
}

type state struct {
	signer  *Signer
	curve   map[jwa.SignatureAlgorithm]*Signer
	refresh *RefreshSigner
	verify  map[string]VerifyKey
	public  jwk.Set
	certs   []*authv1.PublicKey
	jwks    *authv1.JWKS
	fetched time.Time
}

// Manager holds the current keys in memory, refreshed from the store.
type Manager struct {
	store storage.Store
	o     Options
	mu    sync.RWMutex
	st    *state
	// reloadMu makes concurrent "unknown kid" reloads share one store read.
	reloadMu sync.Mutex
}

// New loads the keys, creating the first one when there is none.
func New(ctx context.Context, store storage.Store, o Options) (*Manager, error) {
	if o.Bits < 2048 {
		return nil, fmt.Errorf("signing keys need at least 2048 bits, got %d", o.Bits)
	}
	if o.Alg != jwa.RS256 && o.Alg != jwa.RS512 {
		return nil, fmt.Errorf("signing algorithm %s: want RS256 or RS512", o.Alg)
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	m := &Manager{store: store, o: o}
	if err := m.Maintain(ctx, time.Now()); err != nil {
		return nil, err
	}
	return m, nil
}

// Maintain makes sure an active key younger than RotateEvery exists, drops
// keys nobody can need any more, and reloads. Replicas may all call it: the
// store's transaction lets one of them add the key.
func (m *Manager) Maintain(ctx context.Context, now time.Time) error {
	cur, err := m.store.SigningKeys(ctx)
	if err != nil {
		return err
	}
	// Another replica may have sealed a key under a secret this one has
	// second (it was not restarted with the new secret first yet), so
	// every replica keeps moving keys to its first secret, not only at
	// start: once all list the new secret first, the old one can go.
	stale := func(k storage.SigningKey) bool { return k.Stale }
	others, err := m.staleElsewhere(ctx)
	if err != nil {
		return err
	}
	if others || slices.ContainsFunc(cur, stale) {
		done, err := m.store.RewrapSigningKeys(ctx)
		if err != nil {
			return err
		}
		m.o.Log.InfoContext(ctx, "signing keys re-encrypted under the first key secret", "kids", done.KIDs)
	}
	if needsKey(cur, now, m.o.RotateEvery) || needsPrune(cur, now) {
		if err := m.update(ctx, now, false); err != nil {
			return err
		}
	}
	if err := m.maintainRefresh(ctx, now); err != nil {
		return err
	}
	if err := m.maintainCurve(ctx, now); err != nil {
		return err
	}
	return m.Reload(ctx)
}

// Rotate makes a new signing key of every algorithm and a new refresh key
// active now, and returns the RSA signing key.
func (m *Manager) Rotate(ctx context.Context) (storage.SigningKey, error) {
	now := time.Now()
	if err := m.update(ctx, now, true); err != nil {
		return storage.SigningKey{}, err
	}
	if err := m.updateRefresh(ctx, now, true); err != nil {
		return storage.SigningKey{}, err
	}
	for _, alg := range CurveAlgs {
		if err := m.updateCurve(ctx, alg, now, true); err != nil {
			return storage.SigningKey{}, err
		}
	}
	if err := m.Reload(ctx); err != nil {
		return storage.SigningKey{}, err
	}
	ks, err := m.store.SigningKeys(ctx)
	if err != nil {
		return storage.SigningKey{}, err
	}
	for i := len(ks) - 1; i >= 0; i-- {
		if ks[i].Active() {
			return ks[i], nil
		}
	}
	return storage.SigningKey{}, errors.New("no active key after rotation")
}

func needsKey(ks []storage.SigningKey, now time.Time, every time.Duration) bool {
	for _, k := range ks {
		if k.Active() && (every <= 0 || now.Sub(time.Unix(0, k.Created)) < every) {
			return false
		}
	}
	return true
}

func needsPrune(ks []storage.SigningKey, now time.Time) bool {
	for _, k := range ks {
		if !k.Active() && k.PublishUntil <= now.Unix() {
			return true
		}
	}
	return false
}

// update generates a key outside the transaction (it takes a while) and
// installs it unless another replica got there first.
func (m *Manager) update(ctx context.Context, now time.Time, force bool) error {
	fresh, err := m.generate(now)
	if err != nil {
		return err
	}
	return m.store.UpdateSigningKeys(ctx, func(cur []storage.SigningKey) ([]storage.SigningKey, error) {
		var out []storage.SigningKey
		for _, k := range cur {
			if !k.Active() && k.PublishUntil <= now.Unix() {
				continue // every token it signed has expired
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
		m.o.Log.InfoContext(ctx, "signing key rotated", "kid", fresh.KID, "alg", fresh.Alg)
		return append(out, fresh), nil
	})
}

func (m *Manager) generate(now time.Time) (storage.SigningKey, error) {
	priv, err := rsa.GenerateKey(rand.Reader, m.o.Bits)
	if err != nil {
		return storage.SigningKey{}, err
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return storage.SigningKey{}, err
	}
	pub, err := jwk.FromRaw(priv.Public())
	if err != nil {
		return storage.SigningKey{}, err
	}
	tp, err := pub.Thumbprint(crypto.SHA256)
	if err != nil {
		return storage.SigningKey{}, err
	}
	return storage.SigningKey{
		KID: base64.RawURLEncoding.EncodeToString(tp), Alg: m.o.Alg.String(),
		PrivateDER: der, Created: now.UnixNano(),
	}, nil
}

// Reload reads the keys from the store and rebuilds what is served.
func (m *Manager) Reload(ctx context.Context) error {
	ks, err := m.store.SigningKeys(ctx)
	if err != nil {
		return err
	}
	st := &state{public: jwk.NewSet(), verify: map[string]VerifyKey{}, jwks: &authv1.JWKS{}, fetched: time.Now()}
	now := time.Now().Unix()
	for _, k := range ks {
		if !k.Active() && k.PublishUntil <= now {
			continue
		}
		raw, err := x509.ParsePKCS8PrivateKey(k.PrivateDER)
		if err != nil {
			return fmt.Errorf("signing key %s: %w", k.KID, err)
		}
		priv, ok := raw.(*rsa.PrivateKey)
		if !ok {
			return fmt.Errorf("signing key %s is not RSA", k.KID)
		}
		alg := jwa.SignatureAlgorithm(k.Alg)
		pub, err := jwk.FromRaw(&priv.PublicKey)
		if err != nil {
			return err
		}
		for _, kv := range [][2]any{{jwk.KeyIDKey, k.KID}, {jwk.AlgorithmKey, alg}, {jwk.KeyUsageKey, jwk.ForSignature}} {
			if err := pub.Set(kv[0].(string), kv[1]); err != nil {
				return err
			}
		}
		if err := st.public.AddKey(pub); err != nil {
			return err
		}
		st.verify[k.KID] = VerifyKey{Alg: alg, Key: &priv.PublicKey}
		spki, err := x509.MarshalPKIXPublicKey(&priv.PublicKey)
		if err != nil {
			return err
		}
		n := base64.RawURLEncoding.EncodeToString(priv.N.Bytes())
		e := base64.RawURLEncoding.EncodeToString(big.NewInt(int64(priv.E)).Bytes())
		st.certs = append(st.certs, &authv1.PublicKey{
			KeyType: "RSA", Use: "sig", KeyId: k.KID, N: n, E: e,
			DerFormat:       base64.RawURLEncoding.EncodeToString(spki),
			Base64DerFormat: base64.StdEncoding.EncodeToString(spki),
		})
		st.jwks.Keys = append(st.jwks.Keys, &authv1.JWK{Kty: "RSA", Use: "sig", Kid: k.KID, Alg: k.Alg, N: proto.String(n), E: proto.String(e)})
		if k.Active() {
			// The newest active key signs (two are active only for the
			// moment between replicas' reloads).
			st.signer = &Signer{KID: k.KID, Alg: alg, Key: priv}
		}
	}
	if st.signer == nil {
		return errors.New("no active signing key")
	}
	if err := m.loadCurve(ctx, st, now); err != nil {
		return err
	}
	if err := m.loadRefresh(ctx, st, now); err != nil {
		return err
	}
	m.mu.Lock()
	m.st = st
	m.mu.Unlock()
	return nil
}

func (m *Manager) cur() *state {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.st
}

// Signer returns the active RSA key.
func (m *Manager) Signer() *Signer { return m.cur().signer }

// RefreshSigner returns the active refresh key, ready to sign refresh
// tokens.
func (m *Manager) RefreshSigner() *RefreshSigner { return m.cur().refresh }

// Public returns the published public keys as a JWK set.
func (m *Manager) Public() jwk.Set { return m.cur().public }

// Has reports whether kid is published.
func (m *Manager) Has(kid string) bool {
	_, ok := m.cur().verify[kid]
	return ok
}

// Verifier returns the published or refresh key kid, reloading once when
// it is unknown (see ReloadFor).
func (m *Manager) Verifier(ctx context.Context, kid string) (VerifyKey, bool) {
	if kid == "" || !m.ReloadFor(ctx, kid) {
		return VerifyKey{}, false
	}
	k, ok := m.cur().verify[kid]
	return k, ok
}

// ReloadFor reloads when kid is unknown (another replica rotated), at most
// four times a second so bogus kids cannot flood the store, and reports
// whether kid is known afterwards.
func (m *Manager) ReloadFor(ctx context.Context, kid string) bool {
	if m.Has(kid) {
		return true
	}
	m.reloadMu.Lock()
	defer m.reloadMu.Unlock()
	if m.Has(kid) {
		return true
	}
	if time.Since(m.cur().fetched) < 250*time.Millisecond {
		return false
	}
	if err := m.Reload(ctx); err != nil {
		m.o.Log.WarnContext(ctx, "reloading signing keys", "err", err)
		return false
	}
	return m.Has(kid)
}

// Certs is the spec's /certs list.
func (m *Manager) Certs() []*authv1.PublicKey { return m.cur().certs }

// JWKS is the RFC 7517 key set.
func (m *Manager) JWKS() *authv1.JWKS { return m.cur().jwks }

// Run keeps the keys current until ctx ends: rotation when due, pruning,
// and picking up other replicas' rotations.
func (m *Manager) Run(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			if err := m.Maintain(ctx, now); err != nil && ctx.Err() == nil {
				m.o.Log.WarnContext(ctx, "signing key maintenance", "err", err)
			}
		}
	}
}
