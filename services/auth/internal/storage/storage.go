// Package storage keeps the identity provider's data: clients, users and
// their public keys, single-use grants (authorization codes and sign
// requests), the RSA signing keys, and refresh-token chains.
package storage

import (
	"context"
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
	// RevokedBefore (unix seconds): tokens issued to the client before it
	// (iat < RevokedBefore) are revoked; see UpdateClient.
	RevokedBefore int64 `json:"revoked_before,omitempty"`
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
	// RevokedBefore (unix seconds): the user's tokens issued before it
	// (iat < RevokedBefore) are revoked; see UpdateUser.
	RevokedBefore int64 `json:"revoked_before,omitempty"`
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

// Kinds of revocation log entries.
const (
	RevokeUser   = "user"   // ID: the user id as the tokens' sub writes it
	RevokeClient = "client" // ID: the client id
	RevokeChain  = "chain"  // ID: a refresh chain (sid)
	RevokeToken  = "token"  // ID: a token's jti
)

// Revocation is one entry of the revocation log, which resource servers
// read to refuse revoked access tokens without asking the service each
// time. Version orders the entries: every change gets the next one.
type Revocation struct {
	Version uint32 `json:"v"`
	Kind    string `json:"kind"`
	ID      string `json:"id"`
	// NotBefore (user, client): tokens issued before it are revoked.
	NotBefore int64 `json:"nbf,omitempty"`
	// Until: when no token the entry revokes is valid any more; the entry
	// is dropped then.
	Until int64 `json:"until"`
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

	// RevokeChain revokes a refresh chain until until (its newest token's
	// expiry): its refresh tokens are refused, and so are its access
	// tokens (they carry the chain). RevokeToken revokes one token by its
	// jti until it expires. Both log the revocation.
	RevokeChain(ctx context.Context, chain string, until time.Time) error
	RevokeToken(ctx context.Context, jti string, until time.Time) error
	// Revoked reports whether the chain or the token (either may be
	// empty) has been revoked, or the token is a refresh token already
	// spent.
	Revoked(ctx context.Context, chain, jti string) (bool, error)
	// Revocations returns the log entries after version since and the
	// version to ask for next. When since is 0 or beyond the log (the store
	// was reset or restored), it returns every entry in force and full.
	Revocations(ctx context.Context, since uint32) (entries []Revocation, version uint32, full bool, err error)
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
	pJTI       = "token-revoked/"
	pRevLog    = "revlog/"
	seqRevLog  = "seq/revlog"
	seqUser    = "seq/user"
	seqKey     = "seq/ukey"
)

// KV is the Store on a kv backend.
type KV struct {
	// LogRetention is how long a user's or client's revocation stays in
	// the log resource servers read: the longest lifetime of a token they
	// accept (the record keeps RevokedBefore for good).
	LogRetention time.Duration

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
	return &KV{db: db, codes: codes, sealer: sealer, now: time.Now, LogRetention: defaultLogRetention}
}

func (s *KV) Ping(ctx context.Context) error {
	if err := s.db.Ping(ctx); err != nil {
		return err
	}
	return s.codes.Ping(ctx)
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
		return kv.PutJSON(tx, pClient+c.ID, c, 0)
	})
}

func (s *KV) GetClient(ctx context.Context, id string) (Client, error) {
	if id == "" {
		return Client{}, ErrNotFound
	}
	return kv.GetJSON[Client](ctx, s.db, pClient+id)
}

func (s *KV) UpdateClient(ctx context.Context, id string, fn func(*Client) error) error {
	return s.db.Update(ctx, func(tx kv.Tx) error {
		c, err := kv.GetJSON[Client](ctx, tx, pClient+id)
		if err != nil {
			return err
		}
		before := c.RevokedBefore
		if err := fn(&c); err != nil {
			return err
		}
		c.ID = id
		if c.RevokedBefore < before {
			c.RevokedBefore = before // a revocation is never undone
		} else if c.RevokedBefore > before {
			if err := s.logRevocation(ctx, tx, Revocation{Kind: RevokeClient, ID: id, NotBefore: c.RevokedBefore}); err != nil {
				return err
			}
		}
		return kv.PutJSON(tx, pClient+id, c, 0)
	})
}

func (s *KV) ListClients(ctx context.Context) ([]Client, error) {
	return kv.ScanJSON[Client](ctx, s.db, pClient, "", 0)
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
		if err := kv.PutJSON(tx, pUser+id32(id), nu, 0); err != nil {
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
		if err := kv.PutJSON(tx, pUserKey+id32(kid), nk, 0); err != nil {
			return err
		}
		outK = &nk
		return tx.Put(pKeyHash+nk.SHA512, []byte(id32(kid)), 0)
	})
	return outU, outK, err
}

func (s *KV) GetUser(ctx context.Context, id int32) (User, error) {
	return kv.GetJSON[User](ctx, s.db, pUser+id32(id))
}

func (s *KV) GetUserByEmail(ctx context.Context, email string) (User, error) {
	b, err := s.db.Get(ctx, pUserEmail+NormalizeEmail(email))
	if err != nil {
		return User{}, err
	}
	return kv.GetJSON[User](ctx, s.db, pUser+string(b))
}

func (s *KV) UpdateUser(ctx context.Context, id int32, fn func(*User) error) error {
	return s.db.Update(ctx, func(tx kv.Tx) error {
		u, err := kv.GetJSON[User](ctx, tx, pUser+id32(id))
		if err != nil {
			return err
		}
		before, revoked := NormalizeEmail(u.Email), u.RevokedBefore
		if err := fn(&u); err != nil {
			return err
		}
		u.ID = id
		if after := NormalizeEmail(u.Email); after != before {
			return fmt.Errorf("the email of a user cannot change: %w", ErrConflict)
		}
		if u.RevokedBefore < revoked {
			u.RevokedBefore = revoked // a revocation is never undone
		} else if u.RevokedBefore > revoked {
			if err := s.logRevocation(ctx, tx, Revocation{Kind: RevokeUser, ID: strconv.Itoa(int(id)), NotBefore: u.RevokedBefore}); err != nil {
				return err
			}
		}
		return kv.PutJSON(tx, pUser+id32(id), u, 0)
	})
}

func (s *KV) ListUsers(ctx context.Context) ([]User, error) {
	return kv.ScanJSON[User](ctx, s.db, pUser, "", 0)
}

func (s *KV) GetUserKey(ctx context.Context, id int32) (UserKey, error) {
	return kv.GetJSON[UserKey](ctx, s.db, pUserKey+id32(id))
}

func (s *KV) GetUserKeyByHash(ctx context.Context, sha512hex string) (UserKey, error) {
	b, err := s.db.Get(ctx, pKeyHash+strings.ToLower(sha512hex))
	if err != nil {
		return UserKey{}, err
	}
	return kv.GetJSON[UserKey](ctx, s.db, pUserKey+string(b))
}

func (s *KV) PutGrant(ctx context.Context, code string, g Grant) error {
	ttl := time.Until(time.Unix(g.Expires, 0))
	if ttl <= 0 {
		return fmt.Errorf("grant already expired")
	}
	return s.codes.Update(ctx, func(tx kv.Tx) error { return kv.PutJSON(tx, pGrant+code, g, ttl) })
}

func (s *KV) TakeGrant(ctx context.Context, code string) (Grant, error) {
	if code == "" || len(code) > 256 {
		return Grant{}, ErrNotFound
	}
	var g Grant
	err := s.codes.Update(ctx, func(tx kv.Tx) error {
		var err error
		if g, err = kv.GetJSON[Grant](ctx, tx, pGrant+code); err != nil {
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
	recs, err := kv.ScanJSON[signingRecord](ctx, r, pSigning, "", 0)
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
	return kv.PutJSON(tx, pSigning+k.KID, signingRecord{SigningKey: k, Sealed: sealed}, 0)
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
		recs, err := kv.ScanJSON[signingRecord](ctx, tx, pSigning, "", 0)
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
			until := s.now().Add(max(chainUntil.Sub(s.now()), ttl))
			return s.revokeChain(ctx, tx, r.Chain, until)
		} else if !errors.Is(err, kv.ErrNotFound) {
			return err
		}
		r.Used = true
		return kv.PutJSON(tx, pRefresh+r.JTI, r, ttl)
	})
	if err != nil {
		return err
	}
	return outcome
}

// defaultLogRetention covers the default access token lifetime many times
// over; the service sets the real one.
const defaultLogRetention = 24 * time.Hour

// maxRevokedID bounds the ids of revoked chains and tokens, which come from
// tokens the service verified but are stored as keys.
const maxRevokedID = 256

// logRevocation appends r to the revocation log under the next version, in
// tx: the counter is read and written in the same transaction as the
// entry, so versions become visible in order. An entry is kept at most
// LogRetention (a user's or client's: that long after its NotBefore):
// resource servers check access tokens only, and the service checks
// refresh tokens against the records and markers, which live longer.
func (s *KV) logRevocation(ctx context.Context, tx kv.Tx, r Revocation) error {
	if r.Until == 0 {
		r.Until = time.Unix(r.NotBefore, 0).Add(s.LogRetention).Unix()
	} else {
		r.Until = min(r.Until, s.now().Add(s.LogRetention).Unix())
	}
	ttl := time.Unix(r.Until, 0).Sub(s.now())
	if ttl <= 0 {
		return nil
	}
	v, err := next(ctx, tx, seqRevLog)
	if err != nil {
		return err
	}
	r.Version = uint32(v)
	return kv.PutJSON(tx, pRevLog+id32(v), r, ttl)
}

func (s *KV) revokeChain(ctx context.Context, tx kv.Tx, chain string, until time.Time) error {
	ttl := until.Sub(s.now())
	if ttl <= 0 {
		return nil
	}
	if err := kv.PutJSON(tx, pChain+chain, struct{}{}, ttl); err != nil {
		return err
	}
	return s.logRevocation(ctx, tx, Revocation{Kind: RevokeChain, ID: chain, Until: until.Unix()})
}

func (s *KV) RevokeChain(ctx context.Context, chain string, until time.Time) error {
	if chain == "" || len(chain) > maxRevokedID {
		return nil
	}
	return s.db.Update(ctx, func(tx kv.Tx) error {
		if _, err := tx.Get(ctx, pChain+chain); err == nil {
			return nil // revoked already (reuse, or an earlier call)
		} else if !errors.Is(err, kv.ErrNotFound) {
			return err
		}
		return s.revokeChain(ctx, tx, chain, until)
	})
}

func (s *KV) RevokeToken(ctx context.Context, jti string, until time.Time) error {
	if jti == "" || len(jti) > maxRevokedID {
		return nil
	}
	return s.db.Update(ctx, func(tx kv.Tx) error {
		if _, err := tx.Get(ctx, pJTI+jti); err == nil {
			return nil
		} else if !errors.Is(err, kv.ErrNotFound) {
			return err
		}
		ttl := until.Sub(s.now())
		if ttl <= 0 {
			return nil
		}
		if err := kv.PutJSON(tx, pJTI+jti, struct{}{}, ttl); err != nil {
			return err
		}
		return s.logRevocation(ctx, tx, Revocation{Kind: RevokeToken, ID: jti, Until: until.Unix()})
	})
}

func (s *KV) Revoked(ctx context.Context, chain, jti string) (bool, error) {
	for _, key := range []string{pChain + chain, pJTI + jti, pRefresh + jti} {
		if key == pChain || key == pJTI || key == pRefresh {
			continue
		}
		if _, err := s.db.Get(ctx, key); err == nil {
			return true, nil
		} else if !errors.Is(err, kv.ErrNotFound) {
			return false, err
		}
	}
	return false, nil
}

func (s *KV) Revocations(ctx context.Context, since uint32) ([]Revocation, uint32, bool, error) {
	// The counter is read before the scan: an entry it counts is visible
	// to the scan (same transaction), and one written after it is either
	// seen by the scan or has a higher version than what is answered.
	var seq uint32
	if b, err := s.db.Get(ctx, seqRevLog); err == nil {
		n, err := strconv.ParseUint(string(b), 10, 32)
		if err != nil {
			return nil, 0, false, fmt.Errorf("counter %s: %w", seqRevLog, err)
		}
		seq = uint32(n)
	} else if !errors.Is(err, kv.ErrNotFound) {
		return nil, 0, false, err
	}
	full := since == 0 || since > seq
	after := ""
	version := since
	if full {
		version = seq
	} else {
		after = pRevLog + id32(int32(since))
	}
	rs, err := kv.ScanJSON[Revocation](ctx, s.db, pRevLog, after, 0)
	if err != nil {
		return nil, 0, false, err
	}
	now := s.now().Unix()
	out := make([]Revocation, 0, len(rs))
	for _, r := range rs {
		version = max(version, r.Version)
		if r.Until > now {
			out = append(out, r)
		}
	}
	return out, version, full, nil
}
