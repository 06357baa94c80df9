// Package storage keeps the identity provider's data: clients, users and
// their public keys, single-use grants (authorization codes and sign
// requests), the RSA signing keys, and refresh-token chains.
package storage

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"fris.dev/pkg/kv"
)

// Sentinels: the shared ones, plus what refresh-token rotation detects.
var (
	ErrNotFound = kv.ErrNotFound
	ErrExists   = kv.ErrExists
	ErrConflict = kv.ErrConflict
	// ErrReused: a refresh token was presented a second time; its whole
	// chain is revoked.
	ErrReused = errors.New("refresh token reused")
	// ErrRevoked: the refresh token's chain was revoked earlier.
	ErrRevoked = errors.New("refresh token revoked")
)

// Locality is where a user belongs.
type Locality struct {
	ID          string `json:"id,omitempty"`
	Name        string `json:"name,omitempty"`
	Description string `json:"description,omitempty"`
}

// Client is an application allowed to ask for tokens.
type Client struct {
	ID           string   `json:"id"`
	Name         string   `json:"name"`
	Description  string   `json:"description,omitempty"`
	RedirectURLs []string `json:"redirect_urls,omitempty"`
	Type         string   `json:"type"`
	SecretHash   string   `json:"secret_hash"`
	Disabled     bool     `json:"disabled,omitempty"`
	Created      int64    `json:"created"`
}

// User is a person or a registry's administrator.
type User struct {
	ID            int32    `json:"id"`
	Email         string   `json:"email"`
	RealName      string   `json:"real_name,omitempty"`
	Contact       string   `json:"contact,omitempty"`
	Locality      Locality `json:"locality"`
	PasswordHash  string   `json:"password_hash,omitempty"`
	EmailVerified bool     `json:"email_verified,omitempty"`
	Disabled      bool     `json:"disabled,omitempty"`
	Scopes        []string `json:"scopes,omitempty"`
	Created       int64    `json:"created"`
}

// UserKey is a user's registered RSA public key.
type UserKey struct {
	ID          int32  `json:"id"`
	UserID      int32  `json:"user_id"`
	DER         []byte `json:"der"` // SPKI
	SHA512      string `json:"sha512"`
	Description string `json:"description,omitempty"`
	Created     int64  `json:"created"`
}

// Grant kinds.
const (
	GrantAuthorization = "authorization" // code from the browser login
	GrantSignRequest   = "sign"          // code to be signed with a user key
)

// Grant is what a single-use code stands for.
type Grant struct {
	Kind          string `json:"kind"`
	ClientID      string `json:"client_id,omitempty"`
	UserID        int32  `json:"user_id"`
	KeyID         int32  `json:"key_id,omitempty"`
	RedirectURI   string `json:"redirect_uri,omitempty"`
	Challenge     string `json:"challenge,omitempty"`
	ChallengeMeth string `json:"challenge_method,omitempty"`
	Scope         string `json:"scope,omitempty"`
	Nonce         string `json:"nonce,omitempty"`
	Expires       int64  `json:"expires"`
}

// SigningKey is one of the provider's RSA keys. PrivateDER is never stored
// as it is: see Sealer.
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

// Refresh is a refresh token as the store sees it: read from the token
// when it is presented, recorded only once it is spent.
type Refresh struct {
	JTI      string `json:"jti"`
	Chain    string `json:"chain"`
	UserID   int32  `json:"user_id"`
	ClientID string `json:"client_id"`
	Used     bool   `json:"used,omitempty"`
	Expires  int64  `json:"expires"`
}

// Store is what the identity provider needs from storage.
type Store interface {
	Ping(ctx context.Context) error

	CreateClient(ctx context.Context, c Client) error
	GetClient(ctx context.Context, id string) (Client, error)
	UpdateClient(ctx context.Context, id string, fn func(*Client) error) error
	ListClients(ctx context.Context) ([]Client, error)

	// CreateUser assigns the next user id; ErrExists when the email is
	// taken (case-insensitively). With a key, user and key are created
	// together or not at all.
	CreateUser(ctx context.Context, u User, key *UserKey) (User, *UserKey, error)
	GetUser(ctx context.Context, id int32) (User, error)
	GetUserByEmail(ctx context.Context, email string) (User, error)
	UpdateUser(ctx context.Context, id int32, fn func(*User) error) error
	ListUsers(ctx context.Context) ([]User, error)

	GetUserKey(ctx context.Context, id int32) (UserKey, error)
	GetUserKeyByHash(ctx context.Context, sha512hex string) (UserKey, error)

	// PutGrant stores a single-use code until g.Expires.
	PutGrant(ctx context.Context, code string, g Grant) error
	// TakeGrant returns and deletes a code's grant in one step, so a code
	// is good for one use even under concurrent attempts.
	TakeGrant(ctx context.Context, code string) (Grant, error)

	// SigningKeys returns the keys, decrypted; an error when one does not
	// decrypt, so a wrong secret never looks like an empty key set.
	SigningKeys(ctx context.Context) ([]SigningKey, error)
	// UpdateSigningKeys changes the key set atomically: fn gets the current
	// keys and returns the set to store (keys left out are deleted). Every
	// key stored is sealed anew.
	UpdateSigningKeys(ctx context.Context, fn func([]SigningKey) ([]SigningKey, error)) error
	// RewrapSigningKeys seals again, the way Seal seals now, every key
	// sealed under an older secret or stored in clear, atomically.
	RewrapSigningKeys(ctx context.Context) (Rewrapped, error)

	// SpendRefresh marks refresh token r used, atomically. A token carries
	// its chain, so issuing one writes nothing: only spending it does. A
	// token spent before revokes its chain until chainUntil, when the last
	// token the chain can have issued expires (ErrReused); a token of a
	// revoked chain gives ErrRevoked; an expired one, or one without a
	// chain, ErrNotFound.
	SpendRefresh(ctx context.Context, r Refresh, chainUntil time.Time) error
}

// Keys. The refresh chain's revocation marker outlives its tokens.
const (
	pClient    = "client/"
	pUser      = "user/"
	pUserEmail = "user-email/"
	pUserKey   = "ukey/"
	pKeyHash   = "ukey-hash/"
	pGrant     = "grant/"
	pSigning   = "signing-key/"
	pRefresh   = "refresh/"
	pChain     = "chain-revoked/"
	seqUser    = "seq/user"
	seqKey     = "seq/ukey"
)

// KV is the Store on a kv backend.
type KV struct {
	db kv.Store
	// codes holds the single-use grants; see kv.OpenVolatile.
	codes  kv.Store
	sealer Sealer
	now    func() time.Time
}

// New returns the auth store on db, grants included, with signing keys
// sealed by sealer.
func New(db kv.Store, sealer Sealer) *KV { return NewSplit(db, db, sealer) }

// NewSplit returns the auth store on db with the single-use grants (login
// codes, sign requests) in codes: they live minutes and are spent at once,
// so a store that does not flush them to disk saves two disk flushes per
// signature-flow token response.
func NewSplit(db, codes kv.Store, sealer Sealer) *KV {
	return &KV{db: db, codes: codes, sealer: sealer, now: time.Now}
}

func (s *KV) Ping(ctx context.Context) error {
	if err := s.db.Ping(ctx); err != nil {
		return err
	}
	return s.codes.Ping(ctx)
}

func put(tx kv.Tx, key string, v any, ttl time.Duration) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return tx.Put(key, b, ttl)
}

func get[T any](ctx context.Context, r kv.Reader, key string) (T, error) {
	var v T
	b, err := r.Get(ctx, key)
	if err != nil {
		return v, err
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return v, fmt.Errorf("decode %s: %w", key, err)
	}
	return v, nil
}

func list[T any](ctx context.Context, r kv.Reader, prefix string) ([]T, error) {
	es, err := r.Scan(ctx, prefix, "", 0)
	if err != nil {
		return nil, err
	}
	out := make([]T, 0, len(es))
	for _, e := range es {
		var v T
		if err := json.Unmarshal(e.Value, &v); err != nil {
			return nil, fmt.Errorf("decode %s: %w", e.Key, err)
		}
		out = append(out, v)
	}
	return out, nil
}

func id32(n int32) string { return fmt.Sprintf("%010d", n) }

// NormalizeEmail is the form emails are compared in.
func NormalizeEmail(e string) string { return strings.ToLower(strings.TrimSpace(e)) }

func (s *KV) CreateClient(ctx context.Context, c Client) error {
	return s.db.Update(ctx, func(tx kv.Tx) error {
		if _, err := tx.Get(ctx, pClient+c.ID); err == nil {
			return fmt.Errorf("client %q: %w", c.ID, ErrExists)
		} else if !errors.Is(err, kv.ErrNotFound) {
			return err
		}
		return put(tx, pClient+c.ID, c, 0)
	})
}

func (s *KV) GetClient(ctx context.Context, id string) (Client, error) {
	if id == "" {
		return Client{}, ErrNotFound
	}
	return get[Client](ctx, s.db, pClient+id)
}

func (s *KV) UpdateClient(ctx context.Context, id string, fn func(*Client) error) error {
	return s.db.Update(ctx, func(tx kv.Tx) error {
		c, err := get[Client](ctx, tx, pClient+id)
		if err != nil {
			return err
		}
		if err := fn(&c); err != nil {
			return err
		}
		c.ID = id
		return put(tx, pClient+id, c, 0)
	})
}

func (s *KV) ListClients(ctx context.Context) ([]Client, error) {
	return list[Client](ctx, s.db, pClient)
}

func next(ctx context.Context, tx kv.Tx, key string) (int32, error) {
	n := int64(0)
	if b, err := tx.Get(ctx, key); err == nil {
		if n, err = strconv.ParseInt(string(b), 10, 32); err != nil {
			return 0, fmt.Errorf("counter %s: %w", key, err)
		}
	} else if !errors.Is(err, kv.ErrNotFound) {
		return 0, err
	}
	n++
	return int32(n), tx.Put(key, []byte(strconv.FormatInt(n, 10)), 0)
}

func (s *KV) CreateUser(ctx context.Context, u User, key *UserKey) (User, *UserKey, error) {
	var outU User
	var outK *UserKey
	err := s.db.Update(ctx, func(tx kv.Tx) error {
		email := NormalizeEmail(u.Email)
		if _, err := tx.Get(ctx, pUserEmail+email); err == nil {
			return fmt.Errorf("user %q: %w", u.Email, ErrExists)
		} else if !errors.Is(err, kv.ErrNotFound) {
			return err
		}
		id, err := next(ctx, tx, seqUser)
		if err != nil {
			return err
		}
		nu := u
		nu.ID = id
		if err := put(tx, pUser+id32(id), nu, 0); err != nil {
			return err
		}
		if err := tx.Put(pUserEmail+email, []byte(id32(id)), 0); err != nil {
			return err
		}
		outU, outK = nu, nil
		if key == nil {
			return nil
		}
		if _, err := tx.Get(ctx, pKeyHash+key.SHA512); err == nil {
			return fmt.Errorf("public key: %w", ErrExists)
		} else if !errors.Is(err, kv.ErrNotFound) {
			return err
		}
		kid, err := next(ctx, tx, seqKey)
		if err != nil {
			return err
		}
		nk := *key
		nk.ID, nk.UserID = kid, id
		if err := put(tx, pUserKey+id32(kid), nk, 0); err != nil {
			return err
		}
		outK = &nk
		return tx.Put(pKeyHash+nk.SHA512, []byte(id32(kid)), 0)
	})
	return outU, outK, err
}

func (s *KV) GetUser(ctx context.Context, id int32) (User, error) {
	return get[User](ctx, s.db, pUser+id32(id))
}

func (s *KV) GetUserByEmail(ctx context.Context, email string) (User, error) {
	b, err := s.db.Get(ctx, pUserEmail+NormalizeEmail(email))
	if err != nil {
		return User{}, err
	}
	return get[User](ctx, s.db, pUser+string(b))
}

func (s *KV) UpdateUser(ctx context.Context, id int32, fn func(*User) error) error {
	return s.db.Update(ctx, func(tx kv.Tx) error {
		u, err := get[User](ctx, tx, pUser+id32(id))
		if err != nil {
			return err
		}
		before := NormalizeEmail(u.Email)
		if err := fn(&u); err != nil {
			return err
		}
		u.ID = id
		if after := NormalizeEmail(u.Email); after != before {
			return fmt.Errorf("the email of a user cannot change: %w", ErrConflict)
		}
		return put(tx, pUser+id32(id), u, 0)
	})
}

func (s *KV) ListUsers(ctx context.Context) ([]User, error) {
	return list[User](ctx, s.db, pUser)
}

func (s *KV) GetUserKey(ctx context.Context, id int32) (UserKey, error) {
	return get[UserKey](ctx, s.db, pUserKey+id32(id))
}

func (s *KV) GetUserKeyByHash(ctx context.Context, sha512hex string) (UserKey, error) {
	b, err := s.db.Get(ctx, pKeyHash+strings.ToLower(sha512hex))
	if err != nil {
		return UserKey{}, err
	}
	return get[UserKey](ctx, s.db, pUserKey+string(b))
}

func (s *KV) PutGrant(ctx context.Context, code string, g Grant) error {
	ttl := time.Until(time.Unix(g.Expires, 0))
	if ttl <= 0 {
		return fmt.Errorf("grant already expired")
	}
	return s.codes.Update(ctx, func(tx kv.Tx) error { return put(tx, pGrant+code, g, ttl) })
}

func (s *KV) TakeGrant(ctx context.Context, code string) (Grant, error) {
	if code == "" || len(code) > 256 {
		return Grant{}, ErrNotFound
	}
	var g Grant
	err := s.codes.Update(ctx, func(tx kv.Tx) error {
		var err error
		if g, err = get[Grant](ctx, tx, pGrant+code); err != nil {
			return err
		}
		return tx.Delete(pGrant + code)
	})
	if err == nil && s.now().Unix() >= g.Expires {
		return Grant{}, ErrNotFound
	}
	return g, err
}

func (s *KV) SigningKeys(ctx context.Context) ([]SigningKey, error) {
	return s.signingKeys(ctx, s.db)
}

func (s *KV) signingKeys(ctx context.Context, r kv.Reader) ([]SigningKey, error) {
	recs, err := list[signingRecord](ctx, r, pSigning)
	if err != nil {
		return nil, err
	}
	ks := make([]SigningKey, 0, len(recs))
	for _, rec := range recs {
		k, stale, err := s.open(rec)
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
func (s *KV) open(rec signingRecord) (k SigningKey, stale bool, err error) {
	k = rec.SigningKey
	switch {
	case len(rec.Sealed) > 0:
		der, current, err := s.sealer.Open(k.KID, rec.Sealed)
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

func (s *KV) putSigningKey(tx kv.Tx, k SigningKey) error {
	if k.KID == "" {
		return errors.New("signing key without kid")
	}
	sealed, err := s.sealer.Seal(k.KID, k.PrivateDER)
	if err != nil {
		return fmt.Errorf("signing key %s: %w", k.KID, err)
	}
	return put(tx, pSigning+k.KID, signingRecord{SigningKey: k, Sealed: sealed}, 0)
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
	return s.db.Update(ctx, func(tx kv.Tx) error {
		cur, err := s.signingKeys(ctx, tx)
		if err != nil {
			return err
		}
		want, err := fn(cur)
		if err != nil {
			return err
		}
		keep := map[string]bool{}
		for _, k := range want {
			if err := s.putSigningKey(tx, k); err != nil {
				return err
			}
			keep[k.KID] = true
		}
		for _, k := range cur {
			if !keep[k.KID] {
				if err := tx.Delete(pSigning + k.KID); err != nil {
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
		recs, err := list[signingRecord](ctx, tx, pSigning)
		if err != nil {
			return err
		}
		for _, rec := range recs {
			k, stale, err := s.open(rec)
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
			if err := s.putSigningKey(tx, k); err != nil {
				return err
			}
			done.KIDs = append(done.KIDs, k.KID)
		}
		return nil
	})
	return done, err
}

func (s *KV) SpendRefresh(ctx context.Context, r Refresh, chainUntil time.Time) error {
	if r.JTI == "" || r.Chain == "" || len(r.JTI) > 256 || len(r.Chain) > 256 {
		return ErrNotFound
	}
	var outcome error
	err := s.db.Update(ctx, func(tx kv.Tx) error {
		outcome = nil
		// Checked inside the transaction: the marker below must outlive
		// the token, and one spent at its last moment would get none.
		ttl := time.Unix(r.Expires, 0).Sub(s.now())
		if ttl <= 0 {
			return ErrNotFound
		}
		if _, err := tx.Get(ctx, pChain+r.Chain); err == nil {
			outcome = ErrRevoked
			return nil
		} else if !errors.Is(err, kv.ErrNotFound) {
			return err
		}
		if _, err := tx.Get(ctx, pRefresh+r.JTI); err == nil {
			// Someone holds a copy of a token already exchanged: the
			// legitimate holder and the thief now share a chain, so all of
			// it goes.
			outcome = ErrReused
			return put(tx, pChain+r.Chain, struct{}{}, max(chainUntil.Sub(s.now()), ttl))
		} else if !errors.Is(err, kv.ErrNotFound) {
			return err
		}
		r.Used = true
		return put(tx, pRefresh+r.JTI, r, ttl)
	})
	if err != nil {
		return err
	}
	return outcome
}
