package storage

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"fris.dev/pkg/kv"
)

// SigningKey is one of the provider's private keys: an RSA key that signs
// the published tokens, or a refresh key (Ed25519, never published) from
// which the MAC key of the refresh tokens only auth reads is derived. PrivateDER is never stored as
// it is: see Sealer.
type SigningKey struct {
	KID        string `json:"kid"`
	Alg        string `json:"alg"`
	PrivateDER []byte `json:"-"` // PKCS#8
	// Created is in unix nanoseconds: keys made within one second (a forced
	// rotation right after start) must still sort by age.
	Created      int64 `json:"created_ns"`
	Retired      int64 `json:"retired,omitempty"`
	PublishUntil int64 `json:"publish_until,omitempty"`
	// Stale: read from the store sealed under an older secret;
	// RewrapSigningKeys seals it under the current one.
	Stale bool `json:"-"`
}

// Active reports whether the key still signs.
func (k SigningKey) Active() bool { return k.Retired == 0 }

// Sealer encrypts private signing keys at rest, bound to their key id.
// Open reports whether the value is sealed the way Seal seals now; when not
// (an older secret), RewrapSigningKeys seals it again.
type Sealer interface {
	Seal(kid string, plain []byte) ([]byte, error)
	Open(kid string, sealed []byte) (plain []byte, current bool, err error)
}

// Rewrapped names the keys RewrapSigningKeys sealed again.
type Rewrapped struct {
	KIDs []string
	// Plain are those of KIDs that were stored in clear: copies may
	// remain in the backend's free pages, append-only file and backups.
	Plain []string
}

// signingRecord is a SigningKey as stored.
type signingRecord struct {
	SigningKey
	Sealed []byte `json:"sealed_der,omitempty"`
	// Plain is where keys were kept in clear before encryption at rest;
	// only RewrapSigningKeys reads it, to migrate them.
	Plain []byte `json:"private_der,omitempty"`
}

// ErrPlaintextKey: a signing key is stored in clear (from before
// encryption at rest, or planted); RewrapSigningKeys, run at start,
// encrypts it.
var ErrPlaintextKey = errors.New("stored in clear (from before encryption at rest): the service encrypts it when it starts")

// ring is one set of private keys under its own prefix. The refresh keys
// are sealed bound to "refresh:" and their kid, so a record moved from
// one ring to the other does not open.
type ring struct{ prefix, seal string }

var (
	signingRing = ring{pSigning, ""}
	refreshRing = ring{pRefreshKey, "refresh:"}
	// curveRing holds the published ES256 and EdDSA signing keys, apart
	// from the RSA ones so a version that knows only RSA keys reads its
	// own ring unchanged.
	curveRing = ring{pCurveKey, "curve:"}
)

func (s *KV) SigningKeys(ctx context.Context) ([]SigningKey, error) {
	return s.keys(ctx, s.db, signingRing)
}

func (s *KV) RefreshKeys(ctx context.Context) ([]SigningKey, error) {
	return s.keys(ctx, s.db, refreshRing)
}

func (s *KV) CurveKeys(ctx context.Context) ([]SigningKey, error) {
	return s.keys(ctx, s.db, curveRing)
}

func (s *KV) keys(ctx context.Context, r kv.Reader, rg ring) ([]SigningKey, error) {
	recs, err := kv.ScanJSON[signingRecord](ctx, r, rg.prefix, "", 0)
	if err != nil {
		return nil, err
	}
	ks := make([]SigningKey, 0, len(recs))
	for _, rec := range recs {
		k, stale, err := s.open(rg, rec)
		if err != nil {
			return nil, err
		}
		k.Stale = stale
		ks = append(ks, k)
	}
	sortKeys(ks)
	return ks, nil
}

// open decrypts a stored key; stale reports that it is not sealed the way
// Seal seals now. A key in clear is an error: it can only be legacy or
// planted, and only RewrapSigningKeys takes it.
func (s *KV) open(rg ring, rec signingRecord) (k SigningKey, stale bool, err error) {
	k = rec.SigningKey
	switch {
	case len(rec.Sealed) > 0:
		der, current, err := s.sealer.Open(rg.seal+k.KID, rec.Sealed)
		if err != nil {
			return k, false, fmt.Errorf("signing key %s: %w", k.KID, err)
		}
		k.PrivateDER = der
		return k, !current, nil
	case len(rec.Plain) > 0:
		return k, true, fmt.Errorf("signing key %s: %w", k.KID, ErrPlaintextKey)
	default:
		return k, false, fmt.Errorf("signing key %s: no key material", k.KID)
	}
}

func (s *KV) putKey(tx kv.Tx, rg ring, k SigningKey) error {
	if k.KID == "" {
		return errors.New("signing key without kid")
	}
	sealed, err := s.sealer.Seal(rg.seal+k.KID, k.PrivateDER)
	if err != nil {
		return fmt.Errorf("signing key %s: %w", k.KID, err)
	}
	return kv.PutJSON(tx, rg.prefix+k.KID, signingRecord{SigningKey: k, Sealed: sealed}, 0)
}

func sortKeys(ks []SigningKey) {
	sort.Slice(ks, func(i, j int) bool {
		if ks[i].Created != ks[j].Created {
			return ks[i].Created < ks[j].Created
		}
		return ks[i].KID < ks[j].KID
	})
}

func (s *KV) UpdateSigningKeys(ctx context.Context, fn func([]SigningKey) ([]SigningKey, error)) error {
	return s.updateKeys(ctx, signingRing, fn)
}

func (s *KV) UpdateRefreshKeys(ctx context.Context, fn func([]SigningKey) ([]SigningKey, error)) error {
	return s.updateKeys(ctx, refreshRing, fn)
}

func (s *KV) UpdateCurveKeys(ctx context.Context, fn func([]SigningKey) ([]SigningKey, error)) error {
	return s.updateKeys(ctx, curveRing, fn)
}

func (s *KV) updateKeys(ctx context.Context, rg ring, fn func([]SigningKey) ([]SigningKey, error)) error {
	return s.db.Update(ctx, func(tx kv.Tx) error {
		cur, err := s.keys(ctx, tx, rg)
		if err != nil {
			return err
		}
		want, err := fn(cur)
		if err != nil {
			return err
		}
		keep := map[string]bool{}
		for _, k := range want {
			if err := s.putKey(tx, rg, k); err != nil {
				return err
			}
			keep[k.KID] = true
		}
		for _, k := range cur {
			if !keep[k.KID] {
				if err := tx.Delete(rg.prefix + k.KID); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

func (s *KV) RewrapSigningKeys(ctx context.Context) (Rewrapped, error) {
	var done Rewrapped
	err := s.db.Update(ctx, func(tx kv.Tx) error {
		done = Rewrapped{}
		for _, rg := range []ring{signingRing, refreshRing, curveRing} {
			if err := s.rewrap(ctx, tx, rg, &done); err != nil {
				return err
			}
		}
		return nil
	})
	return done, err
}

func (s *KV) rewrap(ctx context.Context, tx kv.Tx, rg ring, done *Rewrapped) error {
	recs, err := kv.ScanJSON[signingRecord](ctx, tx, rg.prefix, "", 0)
	if err != nil {
		return err
	}
	for _, rec := range recs {
		k, stale, err := s.open(rg, rec)
		if errors.Is(err, ErrPlaintextKey) {
			k.PrivateDER, err = rec.Plain, nil
			done.Plain = append(done.Plain, k.KID)
		}
		if err != nil {
			return err
		}
		if !stale {
			continue
		}
		if err := s.putKey(tx, rg, k); err != nil {
			return err
		}
		done.KIDs = append(done.KIDs, k.KID)
	}
	return nil
}
