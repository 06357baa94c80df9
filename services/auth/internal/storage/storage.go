// Package storage keeps the identity provider's data: clients, users and
// their public keys, single-use grants (authorization codes and sign
// requests), the RSA signing keys, refresh-token chains and the revocation
// log, a file for each; this file holds the Store interface, the key table
// and KV.
package storage

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
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
	// SealSecret and OpenSecret keep a user's secret (a TOTP secret)
	// encrypted at rest, as the signing keys are.
	SealSecret(user int32, plain []byte) ([]byte, error)
	OpenSecret(user int32, sealed []byte) ([]byte, error)
	ListUsers(ctx context.Context) ([]User, error)
	// RecordSignIn, SignIns and UserSignIns keep each user's recent
	// sign-ins, in the volatile store (signins.go).
	RecordSignIn(ctx context.Context, id int32, ev SignInEvent) error
	SignIns(ctx context.Context) (map[int32]SignIn, error)
	UserSignIns(ctx context.Context, id int32) (SignIn, error)

	GetUserKey(ctx context.Context, id int32) (UserKey, error)
	GetUserKeyByHash(ctx context.Context, sha512hex string) (UserKey, error)
	// UserKeys, AllUserKeys, UpdateUserKey, DeleteUserKey and AllPasskeys:
	// the credentials of an account (credentials.go).
	UserKeys(ctx context.Context, user int32) ([]UserKey, error)
	AllUserKeys(ctx context.Context) ([]UserKey, error)
	UpdateUserKey(ctx context.Context, id int32, fn func(*UserKey) error) error
	DeleteUserKey(ctx context.Context, user, id int32) (UserKey, error)
	AllPasskeys(ctx context.Context) ([]Passkey, error)

	// PutGrant stores a single-use code until g.Expires.
	PutGrant(ctx context.Context, code string, g Grant) error
	// TakeGrant returns and deletes a code's grant in one step, so a code
	// is good for one use even under concurrent attempts.
	TakeGrant(ctx context.Context, code string) (Grant, error)
	// PeekGrant returns a code's grant without taking it.
	PeekGrant(ctx context.Context, code string) (Grant, error)

	// PutAccountToken stores a mailed link's token, by its SHA-256 only,
	// until t.Expires; TakeAccountToken spends it (once, even under
	// concurrent attempts), PeekAccountToken reads it without spending.
	// Both give ErrNotFound for an unknown, spent or expired token.
	PutAccountToken(ctx context.Context, token string, t AccountToken) error
	TakeAccountToken(ctx context.Context, token string) (AccountToken, error)
	PeekAccountToken(ctx context.Context, token string) (AccountToken, error)

	// PutSession records a sign-in (a refresh chain's start) for the
	// account page until its Expires; Sessions lists a user's, oldest
	// first, at most limit (0: all).
	PutSession(ctx context.Context, s Session) error
	Sessions(ctx context.Context, user int32, limit int) ([]Session, error)

	// Passkeys (passkeys.go): a user's WebAuthn credentials, and the
	// single-use ceremonies that register them or sign in with them.
	AddPasskey(ctx context.Context, p Passkey, max int) error
	Passkeys(ctx context.Context, user int32) ([]Passkey, error)
	UpdatePasskey(ctx context.Context, user int32, id string, fn func(*Passkey) error) error
	DeletePasskey(ctx context.Context, user int32, id string) (Passkey, error)
	PutCeremony(ctx context.Context, id string, c Ceremony) error
	TakeCeremony(ctx context.Context, id string) (Ceremony, error)

	// SigningKeys returns the keys, decrypted; an error when one does not
	// decrypt, so a wrong secret never looks like an empty key set.
	SigningKeys(ctx context.Context) ([]SigningKey, error)
	// UpdateSigningKeys changes the key set atomically: fn gets the current
	// keys and returns the set to store (keys left out are deleted). Every
	// key stored is sealed anew.
	UpdateSigningKeys(ctx context.Context, fn func([]SigningKey) ([]SigningKey, error)) error
	// RefreshKeys and UpdateRefreshKeys are the same for the keys that
	// sign refresh tokens: sealed alike, never published.
	RefreshKeys(ctx context.Context) ([]SigningKey, error)
	UpdateRefreshKeys(ctx context.Context, fn func([]SigningKey) ([]SigningKey, error)) error
	// CurveKeys and UpdateCurveKeys are the same for the published
	// elliptic-curve signing keys (ES256, EdDSA).
	CurveKeys(ctx context.Context) ([]SigningKey, error)
	UpdateCurveKeys(ctx context.Context, fn func([]SigningKey) ([]SigningKey, error)) error
	// RewrapSigningKeys seals again, the way Seal seals now, every key
	// (signing, refresh and curve) sealed under an older secret or stored in
	// clear, atomically.
	RewrapSigningKeys(ctx context.Context) (Rewrapped, error)

	// SpendRefresh marks refresh token r used, atomically. A token carries
	// its chain, so issuing one writes nothing: only spending it does. A
	// token spent before revokes its chain until chainUntil, when the last
	// token the chain can have issued expires (ErrReused); a token of a
	// revoked chain gives ErrRevoked; an expired one, or one without a
	// chain, ErrNotFound.
	SpendRefresh(ctx context.Context, r Refresh, chainUntil time.Time) error

	// Spent reports whether the refresh token jti has been spent (one
	// point read; false once its marker expired with the token).
	Spent(ctx context.Context, jti string) (bool, error)

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
	// PublishPending logs the revocations whose records were written but
	// whose log entries were not (the writer failed or crashed between the
	// two), and returns how many it logged.
	PublishPending(ctx context.Context) (int, error)
}

// Keys. The refresh chain's revocation marker outlives its tokens.
const (
	pClient     = "client/"
	pUser       = "user/"
	pUserEmail  = "user-email/"
	pUserKey    = "ukey/"
	pKeyHash    = "ukey-hash/"
	pGrant      = "grant/"
	pAcctToken  = "account-token/"
	pSession    = "user-session/"
	pSigning    = "signing-key/"
	pRefreshKey = "refresh-key/"
	pCurveKey   = "curve-key/"
	pRefresh    = "refresh/"
	pChain      = "chain-revoked/"
	pJTI        = "token-revoked/"
	pRevLog     = "revlog/"
	pPending    = "revpending/"
	seqRevLog   = "seq/revlog"
	// seqUser and seqKey are counters of a bucket under seqUser+"/<b>"; the
	// keys themselves are the single counters of older versions, read to
	// start the buckets' ids above theirs.
	seqUser = "seq/user"
	seqKey  = "seq/ukey"
)

// Kinds of pending revocations (pPending+kind+id), in the partition of what
// they revoke.
const (
	pendingUser   = "user/"
	pendingClient = "client/"
	pendingChain  = "chain/"
	pendingToken  = "token/"
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
	// users and clients decode each record's stored bytes once: every
	// refresh reads its user and client (kv.JSONCache, never stale).
	users   *kv.JSONCache[User]
	clients *kv.JSONCache[Client]
}

// decodedRecords is how many users and how many clients the store keeps
// decoded: the active ones of a busy deployment, a few MB at most.
const decodedRecords = 2048

// New returns the auth store on db, grants included, with signing keys
// sealed by sealer.
func New(db kv.Store, sealer Sealer) *KV { return NewSplit(db, db, sealer) }

// NewSplit returns the auth store on db with the single-use grants (login
// codes, sign requests) in codes: they live minutes and are spent at once,
// so a store that does not flush them to disk saves two disk flushes per
// signature-flow token response.
func NewSplit(db, codes kv.Store, sealer Sealer) *KV {
	return &KV{db: db, codes: codes, sealer: sealer, now: time.Now, LogRetention: defaultLogRetention,
		users: kv.NewJSONCache(decodedRecords, func(u User) User {
			u.Scopes, u.Removed = slices.Clone(u.Scopes), slices.Clone(u.Removed)
			u.TOTPPending, u.RequiredActions = slices.Clone(u.TOTPPending), slices.Clone(u.RequiredActions)
			if u.TOTP != nil {
				t := *u.TOTP
				t.Secret, t.Recovery = slices.Clone(t.Secret), slices.Clone(t.Recovery)
				u.TOTP = &t
			}
			return u
		}),
		clients: kv.NewJSONCache(decodedRecords, func(c Client) Client {
			c.RedirectURLs = slices.Clone(c.RedirectURLs)
			return c
		}),
	}
}

func (s *KV) Ping(ctx context.Context) error {
	if err := s.db.Ping(ctx); err != nil {
		return err
	}
	return s.codes.Ping(ctx)
}

func id32(n int32) string { return fmt.Sprintf("%010d", n) }

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

// counter reads a counter outside a transaction: 0 when there is none.
func (s *KV) counter(ctx context.Context, key string) (int32, error) {
	b, err := s.db.Get(ctx, key)
	if errors.Is(err, kv.ErrNotFound) {
		return 0, nil
	} else if err != nil {
		return 0, err
	}
	n, err := strconv.ParseInt(string(b), 10, 32)
	if err != nil {
		return 0, fmt.Errorf("counter %s: %w", key, err)
	}
	return int32(n), nil
}

// nextIn hands out the next id of bucket b from the counter seq+"/<b>":
// the ids of a bucket are n*buckets+b, so an id names its bucket. A
// bucket's ids start above legacy, the last id the single counter of an
// older version handed out.
func nextIn(ctx context.Context, tx kv.Tx, seq string, b int, legacy int32) (int32, error) {
	key := seq + "/" + strconv.Itoa(b)
	n := int64(legacy) / buckets
	if v, err := tx.Get(ctx, key); err == nil {
		last, err := strconv.ParseInt(string(v), 10, 32)
		if err != nil {
			return 0, fmt.Errorf("counter %s: %w", key, err)
		}
		n = max(n, last)
	} else if !errors.Is(err, kv.ErrNotFound) {
		return 0, err
	}
	n++
	id := n*buckets + int64(b)
	if id > math.MaxInt32 {
		return 0, fmt.Errorf("counter %s: ids of bucket %d used up", seq, b)
	}
	return int32(id), tx.Put(key, []byte(strconv.FormatInt(n, 10)), 0)
}
