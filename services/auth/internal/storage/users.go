package storage

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"fris.dev/pkg/kv"
)

// Locality is where a user belongs.
type Locality struct {
	ID          string `json:"id,omitempty"`
	Name        string `json:"name,omitempty"`
	Description string `json:"description,omitempty"`
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
	// PasswordSet and PasswordBy: when and how the password was last set
	// (an AddedBy value; 0 and "" in records older than the field).
	// PasswordUsed: its latest successful sign-in, to the minute.
	PasswordSet  int64  `json:"password_set,omitempty"`
	PasswordBy   string `json:"password_by,omitempty"`
	PasswordUsed int64  `json:"password_used,omitempty"`
	// Removed are the credentials the owner's proofs of the address
	// removed, newest first, at most MaxRemoved: the account page shows
	// them.
	Removed []RemovedCredential `json:"removed,omitempty"`
	// TOTP is the account's second factor, when it has one.
	TOTP *TOTP `json:"totp,omitempty"`
	// TOTPPending is a TOTP secret being enrolled (sealed, as TOTP's),
	// good until TOTPPendingUntil.
	TOTPPending      []byte `json:"totp_pending,omitempty"`
	TOTPPendingUntil int64  `json:"totp_pending_until,omitempty"`
	// RequiredActions: what the next sign-in leads the user through
	// before any code is issued (the Action values), set by operators.
	RequiredActions []string `json:"required_actions,omitempty"`
}

// The required actions (User.RequiredActions), in the order a sign-in
// leads through them after its password and second factor.
const (
	ActionVerifyEmail     = "verify_email"
	ActionChangePassword  = "change_password"
	ActionAddSecondFactor = "add_second_factor"
)

// Actions are the known required actions.
func Actions() []string {
	return []string{ActionVerifyEmail, ActionChangePassword, ActionAddSecondFactor}
}

// Requires reports whether action is one of u's required actions.
func (u User) Requires(action string) bool { return slices.Contains(u.RequiredActions, action) }

// Clear removes action from u's required actions.
func (u *User) Clear(action string) {
	u.RequiredActions = slices.DeleteFunc(u.RequiredActions, func(a string) bool { return a == action })
	if len(u.RequiredActions) == 0 {
		u.RequiredActions = nil
	}
}

// TOTP is a time-based one-time password factor (RFC 6238). Secret is
// sealed with the signing keys' system secret (SealSecret), bound to the
// user: the store never holds it in clear.
type TOTP struct {
	Secret  []byte `json:"secret"`
	Created int64  `json:"created"`
	AddedBy string `json:"added_by,omitempty"`
	// LastUsed: its latest successful sign-in; Step the 30 s window of
	// the latest code accepted, so a code is good once (replay).
	LastUsed int64 `json:"last_used,omitempty"`
	Step     int64 `json:"step,omitempty"`
	// Recovery are the unspent recovery codes' hashes (RecoveryHash).
	Recovery []string `json:"recovery,omitempty"`
	// Unproven: enrolled while the address was unverified (by whoever
	// held the account then); removed when the owner proves the address.
	Unproven bool `json:"unproven,omitempty"`
}

// MaxRemoved bounds User.Removed.
const MaxRemoved = 10

// RemovedCredential is a credential removed when its account's owner
// proved the address.
type RemovedCredential struct {
	Kind        string `json:"kind"`
	ID          string `json:"id"`
	Description string `json:"description,omitempty"`
	Created     int64  `json:"created,omitempty"`
	AddedBy     string `json:"added_by,omitempty"`
	Removed     int64  `json:"removed"`
}

// How a credential was added (UserKey.AddedBy, Passkey.AddedBy,
// User.PasswordBy). Records older than the field have "".
const (
	// AddedRegistration: anonymous POST /oauth2/register.
	AddedRegistration = "registration"
	// AddedHolder: the signed-in account holder.
	AddedHolder = "holder"
	// AddedOperator: an operator (bin/auth, the console).
	AddedOperator = "operator"
	// AddedReset: the holder of a mailed reset link.
	AddedReset = "reset"
)

// UserKey is a user's registered RSA public key.
type UserKey struct {
	ID          int32  `json:"id"`
	UserID      int32  `json:"user_id"`
	DER         []byte `json:"der"` // SPKI
	SHA512      string `json:"sha512"`
	Description string `json:"description,omitempty"`
	Created     int64  `json:"created"`
	// AddedBy is how the key was added (AddedRegistration, ...); Proven:
	// added by an operator, or by the holder of the verified address. A
	// key registered anonymously is unproven, and so is one of a record
	// older than the field: the owner's proof of the address removes it.
	AddedBy string `json:"added_by,omitempty"`
	Proven  bool   `json:"proven,omitempty"`
	// LastUsed (unix seconds): its latest successful sign-in, to the
	// minute.
	LastUsed int64 `json:"last_used,omitempty"`
}

// NormalizeEmail is the form emails are compared in.
func NormalizeEmail(e string) string { return strings.ToLower(strings.TrimSpace(e)) }

// CreateUser writes the user, its email's index and its key in one
// transaction, in the bucket of its email (see Partitions). Only the index
// of the key's hash lives elsewhere: it is claimed first, so a key record
// never exists without it, and released again if the user cannot be
// created.
func (s *KV) CreateUser(ctx context.Context, u User, key *UserKey) (User, *UserKey, error) {
	email := NormalizeEmail(u.Email)
	b := hashed(email)
	var claim *keyClaim
	if key != nil {
		c, err := s.claimKey(ctx, b, strings.ToLower(key.SHA512))
		if err != nil {
			return User{}, nil, err
		}
		claim = &c
	}
	legacy, err := s.counter(ctx, seqUser)
	if err != nil {
		return User{}, nil, err
	}
	var outU User
	var outK *UserKey
	err = s.db.Update(ctx, func(tx kv.Tx) error {
		if claim != nil && s.now().Sub(time.UnixMilli(claim.At)) > claimLive {
			return fmt.Errorf("registration took too long: %w", ErrConflict)
		}
		if _, err := tx.Get(ctx, pUserEmail+email); err == nil {
			return fmt.Errorf("user %q: %w", u.Email, ErrExists)
		} else if !errors.Is(err, kv.ErrNotFound) {
			return err
		}
		id, err := nextIn(ctx, tx, seqUser, b, legacy)
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
		nk := *key
		nk.ID, nk.UserID, nk.SHA512 = claim.Key, id, strings.ToLower(key.SHA512)
		outK = &nk
		return kv.PutJSON(tx, pUserKey+id32(nk.ID), nk, 0)
	})
	if err != nil && claim != nil {
		if rerr := s.releaseKey(ctx, strings.ToLower(key.SHA512), *claim); rerr != nil {
			err = errors.Join(err, rerr)
		}
	}
	if err != nil {
		return User{}, nil, err
	}
	return outU, outK, nil
}

func (s *KV) GetUser(ctx context.Context, id int32) (User, error) {
	return s.users.Get(ctx, s.db, pUser+id32(id))
}

func (s *KV) GetUserByEmail(ctx context.Context, email string) (User, error) {
	b, err := s.db.Get(ctx, pUserEmail+NormalizeEmail(email))
	if err != nil {
		return User{}, err
	}
	return s.users.Get(ctx, s.db, pUser+string(b))
}

func (s *KV) UpdateUser(ctx context.Context, id int32, fn func(*User) error) error {
	pending := pPending + pendingUser + id32(id)
	revoked := false
	err := s.db.Update(ctx, func(tx kv.Tx) error {
		revoked = false
		u, err := kv.GetJSON[User](ctx, tx, pUser+id32(id))
		if err != nil {
			return err
		}
		before, was := NormalizeEmail(u.Email), u.RevokedBefore
		if err := fn(&u); err != nil {
			return err
		}
		u.ID = id
		if after := NormalizeEmail(u.Email); after != before {
			return fmt.Errorf("the email of a user cannot change: %w", ErrConflict)
		}
		if u.RevokedBefore < was {
			u.RevokedBefore = was // a revocation is never undone
		} else if u.RevokedBefore > was {
			revoked = true
			r := Revocation{Kind: RevokeUser, ID: strconv.Itoa(int(id)), NotBefore: u.RevokedBefore}
			if err := kv.PutJSON(tx, pending, r, 0); err != nil {
				return err
			}
		}
		return kv.PutJSON(tx, pUser+id32(id), u, 0)
	})
	if err != nil || !revoked {
		return err
	}
	return s.publish(ctx, pending)
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
	c, err := parseClaim(b)
	if err != nil {
		return UserKey{}, err
	}
	// A claim whose user is still being created has no key yet: not found.
	return kv.GetJSON[UserKey](ctx, s.db, pUserKey+id32(c.Key))
}

// A key's hash is claimed for a key id before the user and key are
// written; a registration that takes longer than claimLive from its claim
// gives up, and a claim older than claimStale whose key does not exist was
// left by a registration that failed or crashed, so another may take it
// over. The gap between the two keeps a slow registration and a takeover
// apart, given clocks of the replicas within claimStale-claimLive.
const (
	claimLive  = 20 * time.Second
	claimStale = time.Minute
)

// keyClaim is the value of pKeyHash+sha: the key's id, and when it was
// claimed (unix ms). Older versions stored the bare id (At 0: complete).
type keyClaim struct {
	Key int32 `json:"key"`
	At  int64 `json:"at"`
}

func parseClaim(b []byte) (keyClaim, error) {
	var c keyClaim
	if len(b) > 0 && b[0] == '{' {
		err := json.Unmarshal(b, &c)
		return c, err
	}
	n, err := strconv.ParseInt(string(b), 10, 32)
	if err != nil {
		return c, fmt.Errorf("key index: %w", err)
	}
	return keyClaim{Key: int32(n)}, nil
}

// claimKey allocates a key id in bucket b and claims sha for it: ErrExists
// when another key holds the hash.
func (s *KV) claimKey(ctx context.Context, b int, sha string) (keyClaim, error) {
	legacy, err := s.counter(ctx, seqKey)
	if err != nil {
		return keyClaim{}, err
	}
	var kid int32
	if err := s.db.Update(ctx, func(tx kv.Tx) error {
		kid, err = nextIn(ctx, tx, seqKey, b, legacy)
		return err
	}); err != nil {
		return keyClaim{}, err
	}
	mine := keyClaim{Key: kid, At: s.now().UnixMilli()}
	var held []byte
	err = s.db.Update(ctx, func(tx kv.Tx) error {
		held = nil
		v, err := tx.Get(ctx, pKeyHash+sha)
		if err == nil {
			held = v
			return nil
		} else if !errors.Is(err, kv.ErrNotFound) {
			return err
		}
		return kv.PutJSON(tx, pKeyHash+sha, mine, 0)
	})
	if err != nil || held == nil {
		return mine, err
	}
	if stale, err := s.abandoned(ctx, held); err != nil || !stale {
		if err == nil {
			err = fmt.Errorf("public key: %w", ErrExists)
		}
		return keyClaim{}, err
	}
	err = s.db.Update(ctx, func(tx kv.Tx) error {
		v, err := tx.Get(ctx, pKeyHash+sha)
		if err == nil && !bytes.Equal(v, held) {
			return fmt.Errorf("public key: %w", ErrExists)
		} else if err != nil && !errors.Is(err, kv.ErrNotFound) {
			return err
		}
		return kv.PutJSON(tx, pKeyHash+sha, mine, 0)
	})
	return mine, err
}

// abandoned reports whether a held claim was left by a registration that
// never wrote its key.
func (s *KV) abandoned(ctx context.Context, held []byte) (bool, error) {
	c, err := parseClaim(held)
	if err != nil || c.At == 0 || s.now().Sub(time.UnixMilli(c.At)) < claimStale {
		return false, err
	}
	_, err = s.GetUserKey(ctx, c.Key)
	if errors.Is(err, kv.ErrNotFound) {
		return true, nil
	}
	return false, err
}

// releaseKey deletes claim c of sha, unless another holds it by now.
func (s *KV) releaseKey(ctx context.Context, sha string, c keyClaim) error {
	mine, err := json.Marshal(c)
	if err != nil {
		return err
	}
	return s.deleteIf(ctx, pKeyHash+sha, mine)
}

// SealSecret seals a user's secret (a TOTP secret) the way signing keys
// are sealed, bound to the user: moved to another record it does not
// open. OpenSecret opens it.
func (s *KV) SealSecret(user int32, plain []byte) ([]byte, error) {
	return s.sealer.Seal(secretLabel(user), plain)
}

func (s *KV) OpenSecret(user int32, sealed []byte) ([]byte, error) {
	plain, _, err := s.sealer.Open(secretLabel(user), sealed)
	return plain, err
}

func secretLabel(user int32) string { return "user-secret/" + id32(user) }
