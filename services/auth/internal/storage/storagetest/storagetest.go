// Package storagetest is the auth store's conformance suite, run against
// every backend.
package storagetest

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"fris.dev/pkg/kv"
	"fris.dev/services/auth/internal/envelope"
	"fris.dev/services/auth/internal/storage"
)

// Run runs the suite. openKV returns a fresh, empty backend; wrap builds
// the auth store on one, its signing keys sealed by sealer (the suite
// reads the backend's raw values to check what is stored). Each case runs
// as a subtest of its name.
func Run(t *testing.T, openKV func(t *testing.T) kv.Store, wrap func(t *testing.T, db kv.Store, sealer storage.Sealer) storage.Store) {
	b := backend{openKV: openKV, wrap: wrap}
	for _, c := range []struct {
		name string
		// parallel cases wait for expiry; they run beside each other.
		parallel bool
		run      func(t *testing.T, b backend)
	}{
		{"Clients", false, onStore(testClients)},
		{"UsersAndKeys", false, onStore(testUsersAndKeys)},
		{"ConcurrentUserIDsAreUnique", false, onStore(testConcurrentUserIDsAreUnique)},
		{"GrantsAreSingleUse", true, onStore(testGrantsAreSingleUse)},
		{"SigningKeys", false, onStore(testSigningKeys)},
		{"SigningKeysEncryptedAtRest", false, testSigningKeysEncryptedAtRest},
		{"PlaintextKeysMigrate", false, testPlaintextKeysMigrate},
		{"RefreshSpendAndReuse", false, onStore(testRefreshSpendAndReuse)},
		{"RefreshMarkersExpire", true, onStore(testRefreshMarkersExpire)},
		{"RevocationLog", false, onStore(testRevocationLog)},
		{"ConcurrentRefreshOnlyOneWins", false, onStore(testConcurrentRefreshOnlyOneWins)},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.parallel {
				t.Parallel()
			}
			c.run(t, b)
		})
	}
}

// backend is what a case runs on: fresh backends, and the auth store
// built on one.
type backend struct {
	openKV func(t *testing.T) kv.Store
	wrap   func(t *testing.T, db kv.Store, sealer storage.Sealer) storage.Store
}

// on builds the auth store on db, sealing with the first of secrets and
// opening with any of them.
func (b backend) on(t *testing.T, db kv.Store, secrets ...[]byte) storage.Store {
	return b.wrap(t, db, box(t, secrets...))
}

// onStore adapts a case that needs only a fresh auth store (sealing with
// oldSecret).
func onStore(run func(t *testing.T, s storage.Store)) func(t *testing.T, b backend) {
	return func(t *testing.T, b backend) { run(t, b.on(t, b.openKV(t), oldSecret())) }
}

func box(t *testing.T, secrets ...[]byte) *envelope.Box {
	b, err := envelope.New(secrets)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The secret the keys are sealed with, and the one an operator rotates to.
func oldSecret() []byte { return bytes.Repeat([]byte{1}, envelope.SecretSize) }
func newSecret() []byte { return bytes.Repeat([]byte{2}, envelope.SecretSize) }

func testClients(t *testing.T, s storage.Store) {
	ctx := context.Background()
	now := time.Now()
	c := storage.Client{ID: "c1", Name: "Client", RedirectURLs: []string{"https://a/cb", "https://b/cb"}, Type: "MDR", SecretHash: "h", Created: now.Unix()}
	if err := s.CreateClient(ctx, c); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateClient(ctx, c); !errors.Is(err, storage.ErrExists) {
		t.Fatalf("duplicate client = %v", err)
	}
	got, err := s.GetClient(ctx, "c1")
	if err != nil || got.Name != "Client" || len(got.RedirectURLs) != 2 {
		t.Fatalf("GetClient = %+v, %v", got, err)
	}
	if err := s.UpdateClient(ctx, "c1", func(c *storage.Client) error { c.Disabled = true; return nil }); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.GetClient(ctx, "c1"); !got.Disabled {
		t.Fatal("update lost")
	}
	if _, err := s.GetClient(ctx, "nope"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("unknown client = %v", err)
	}
	if err := s.UpdateClient(ctx, "nope", func(*storage.Client) error { return nil }); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("update unknown = %v", err)
	}
	_ = s.CreateClient(ctx, storage.Client{ID: "c0", Name: "Zero"})
	cs, _ := s.ListClients(ctx)
	if len(cs) != 2 || cs[0].ID != "c0" {
		t.Fatalf("ListClients = %+v", cs)
	}
}

func testUsersAndKeys(t *testing.T, s storage.Store) {
	ctx := context.Background()
	u, k, err := s.CreateUser(ctx, storage.User{Email: "Ada@Example.org", RealName: "Ada"}, nil)
	if err != nil || u.ID != 1 || k != nil {
		t.Fatalf("CreateUser = %+v %v %v", u, k, err)
	}
	if _, _, err := s.CreateUser(ctx, storage.User{Email: "ada@example.ORG"}, nil); !errors.Is(err, storage.ErrExists) {
		t.Fatalf("same email other case = %v", err)
	}
	u2, k2, err := s.CreateUser(ctx, storage.User{Email: "bob@example.org"}, &storage.UserKey{DER: []byte{1, 2}, SHA512: "abcd"})
	if err != nil || u2.ID != 2 || k2 == nil || k2.ID != 1 || k2.UserID != 2 {
		t.Fatalf("CreateUser with key = %+v %+v %v", u2, k2, err)
	}
	// The same key again: nothing is created, not even the user.
	if _, _, err := s.CreateUser(ctx, storage.User{Email: "eve@example.org"}, &storage.UserKey{SHA512: "abcd"}); !errors.Is(err, storage.ErrExists) {
		t.Fatalf("duplicate key = %v", err)
	}
	if _, err := s.GetUserByEmail(ctx, "eve@example.org"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("half-created user: %v", err)
	}
	got, err := s.GetUserByEmail(ctx, " ADA@example.org ")
	if err != nil || got.ID != 1 || got.Email != "Ada@Example.org" {
		t.Fatalf("GetUserByEmail = %+v %v", got, err)
	}
	if got, err := s.GetUserKeyByHash(ctx, "ABCD"); err != nil || got.ID != 1 {
		t.Fatalf("GetUserKeyByHash = %+v %v", got, err)
	}
	if got, err := s.GetUserKey(ctx, 1); err != nil || got.UserID != 2 || string(got.DER) != "\x01\x02" {
		t.Fatalf("GetUserKey = %+v %v", got, err)
	}
	if _, err := s.GetUserKey(ctx, 9); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("unknown key = %v", err)
	}
	if err := s.UpdateUser(ctx, 1, func(u *storage.User) error { u.Disabled = true; u.Scopes = []string{"mdr:x"}; return nil }); err != nil {
		t.Fatal(err)
	}
	if err := s.UpdateUser(ctx, 1, func(u *storage.User) error { u.Email = "other@x"; return nil }); err == nil {
		t.Fatal("email change accepted")
	}
	got, _ = s.GetUser(ctx, 1)
	if !got.Disabled || len(got.Scopes) != 1 || got.Email != "Ada@Example.org" {
		t.Fatalf("after update: %+v", got)
	}
	us, _ := s.ListUsers(ctx)
	if len(us) != 2 {
		t.Fatalf("ListUsers = %d", len(us))
	}
}

func testConcurrentUserIDsAreUnique(t *testing.T, s storage.Store) {
	ctx := context.Background()
	var wg sync.WaitGroup
	ids := make(chan int32, 20)
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			u, _, err := s.CreateUser(ctx, storage.User{Email: fmt.Sprintf("u%d@x.org", i)}, nil)
			if err != nil {
				t.Error(err)
				return
			}
			ids <- u.ID
		}()
	}
	wg.Wait()
	close(ids)
	seen := map[int32]bool{}
	for id := range ids {
		if seen[id] {
			t.Fatalf("id %d handed out twice", id)
		}
		seen[id] = true
	}
	if len(seen) != 20 {
		t.Fatalf("%d users created", len(seen))
	}
}

func testGrantsAreSingleUse(t *testing.T, s storage.Store) {
	ctx := context.Background()
	now := time.Now()
	g := storage.Grant{Kind: storage.GrantSignRequest, UserID: 3, KeyID: 4, Expires: now.Add(time.Minute).Unix()}
	if err := s.PutGrant(ctx, "code-1", g); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var wins sync.Map
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if got, err := s.TakeGrant(ctx, "code-1"); err == nil {
				wins.Store(i, got)
			} else if !errors.Is(err, storage.ErrNotFound) {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	n := 0
	wins.Range(func(_, v any) bool {
		n++
		if v.(storage.Grant).KeyID != 4 {
			t.Errorf("grant = %+v", v)
		}
		return true
	})
	if n != 1 {
		t.Fatalf("code used %d times", n)
	}
	if err := s.PutGrant(ctx, "old", storage.Grant{Expires: now.Add(-time.Second).Unix()}); err == nil {
		t.Fatal("expired grant stored")
	}
	_ = s.PutGrant(ctx, "short", storage.Grant{Expires: time.Now().Add(1100 * time.Millisecond).Unix()})
	time.Sleep(2100 * time.Millisecond)
	if _, err := s.TakeGrant(ctx, "short"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("expired grant taken: %v", err)
	}
	if _, err := s.TakeGrant(ctx, ""); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("empty code = %v", err)
	}
}

func testSigningKeys(t *testing.T, s storage.Store) {
	ctx := context.Background()
	now := time.Now()
	add := func(ks []storage.SigningKey) ([]storage.SigningKey, error) {
		return append(ks, storage.SigningKey{KID: fmt.Sprintf("k%d", len(ks)), Alg: "RS256", PrivateDER: []byte("x"), Created: now.Unix() + int64(len(ks))}), nil
	}
	for i := 0; i < 3; i++ {
		if err := s.UpdateSigningKeys(ctx, add); err != nil {
			t.Fatal(err)
		}
	}
	ks, err := s.SigningKeys(ctx)
	if err != nil || len(ks) != 3 || ks[0].KID != "k0" || ks[2].KID != "k2" {
		t.Fatalf("SigningKeys = %+v %v", ks, err)
	}
	// Dropping a key deletes it; an error changes nothing.
	if err := s.UpdateSigningKeys(ctx, func(ks []storage.SigningKey) ([]storage.SigningKey, error) {
		ks[1].Retired = now.Unix()
		return ks[1:], nil
	}); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	if err := s.UpdateSigningKeys(ctx, func([]storage.SigningKey) ([]storage.SigningKey, error) { return nil, boom }); !errors.Is(err, boom) {
		t.Fatal(err)
	}
	ks, _ = s.SigningKeys(ctx)
	if len(ks) != 2 || ks[0].KID != "k1" || ks[0].Active() || !ks[1].Active() {
		t.Fatalf("after update: %+v", ks)
	}
}

func testSigningKeysEncryptedAtRest(t *testing.T, b backend) {
	ctx := context.Background()
	now := time.Now()
	db := b.openKV(t)
	priv, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	s := b.on(t, db, oldSecret())
	if err := s.UpdateSigningKeys(ctx, func([]storage.SigningKey) ([]storage.SigningKey, error) {
		return []storage.SigningKey{{KID: "k0", Alg: "RS256", PrivateDER: der, Created: now.UnixNano()}}, nil
	}); err != nil {
		t.Fatal(err)
	}
	assertNoKeyInClear(t, ctx, db, priv, der)
	if ks, err := s.SigningKeys(ctx); err != nil || len(ks) != 1 || !bytes.Equal(ks[0].PrivateDER, der) {
		t.Fatalf("SigningKeys = %+v %v", ks, err)
	}

	// Another secret only: an error, never an empty key set.
	if ks, err := b.on(t, db, newSecret()).SigningKeys(ctx); !errors.Is(err, envelope.ErrUnknownSecret) {
		t.Fatalf("wrong secret: SigningKeys = %d keys, %v", len(ks), err)
	}
	if err := b.on(t, db, newSecret()).UpdateSigningKeys(ctx, func(ks []storage.SigningKey) ([]storage.SigningKey, error) {
		return nil, nil
	}); !errors.Is(err, envelope.ErrUnknownSecret) {
		t.Fatalf("wrong secret: UpdateSigningKeys = %v", err)
	}

	// Rotated (new first, old second): the old secret still opens,
	// and the rewrap moves the key to the new one.
	rotated := b.on(t, db, newSecret(), oldSecret())
	if ks, err := rotated.SigningKeys(ctx); err != nil || len(ks) != 1 || !bytes.Equal(ks[0].PrivateDER, der) || !ks[0].Stale {
		t.Fatalf("rotated: SigningKeys = %+v %v, want the key, stale", ks, err)
	}
	if done, err := rotated.RewrapSigningKeys(ctx); err != nil || len(done.KIDs) != 1 || done.KIDs[0] != "k0" || len(done.Plain) != 0 {
		t.Fatalf("RewrapSigningKeys = %v %v", done, err)
	}
	if done, err := rotated.RewrapSigningKeys(ctx); err != nil || len(done.KIDs) != 0 {
		t.Fatalf("second RewrapSigningKeys = %v %v", done, err)
	}
	if ks, err := b.on(t, db, newSecret()).SigningKeys(ctx); err != nil || len(ks) != 1 || !bytes.Equal(ks[0].PrivateDER, der) || ks[0].Stale {
		t.Fatalf("new secret alone after rewrap: %+v %v", ks, err)
	}
	assertNoKeyInClear(t, ctx, db, priv, der)
	assertMovedRecordFails(t, ctx, db, rotated)
}

// assertMovedRecordFails copies the sealed record of k0 under the id k1:
// a record moved under another key id does not open.
func assertMovedRecordFails(t *testing.T, ctx context.Context, db kv.Store, s storage.Store) {
	t.Helper()
	raw, err := db.Get(ctx, "signing-key/k0")
	if err != nil {
		t.Fatal(err)
	}
	var rec map[string]any
	_ = json.Unmarshal(raw, &rec)
	rec["kid"] = "k1"
	moved, _ := json.Marshal(rec)
	if err := db.Update(ctx, func(tx kv.Tx) error { return tx.Put("signing-key/k1", moved, 0) }); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SigningKeys(ctx); !errors.Is(err, envelope.ErrCorrupt) {
		t.Fatalf("swapped record: %v", err)
	}
}

func testPlaintextKeysMigrate(t *testing.T, b backend) {
	ctx := context.Background()
	now := time.Now()
	db := b.openKV(t)
	priv, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	der, _ := x509.MarshalPKCS8PrivateKey(priv)
	// The record as stored before encryption at rest.
	legacy, _ := json.Marshal(map[string]any{"kid": "old", "alg": "RS256", "private_der": der, "created_ns": now.UnixNano()})
	if err := db.Update(ctx, func(tx kv.Tx) error { return tx.Put("signing-key/old", legacy, 0) }); err != nil {
		t.Fatal(err)
	}
	s := b.on(t, db, newSecret())
	if _, err := s.SigningKeys(ctx); !errors.Is(err, storage.ErrPlaintextKey) {
		t.Fatalf("plaintext key read: %v", err)
	}
	if done, err := s.RewrapSigningKeys(ctx); err != nil || len(done.KIDs) != 1 || done.KIDs[0] != "old" || len(done.Plain) != 1 {
		t.Fatalf("RewrapSigningKeys = %v %v", done, err)
	}
	ks, err := s.SigningKeys(ctx)
	if err != nil || len(ks) != 1 || ks[0].KID != "old" || !bytes.Equal(ks[0].PrivateDER, der) || ks[0].Created != now.UnixNano() {
		t.Fatalf("after migration: %+v %v", ks, err)
	}
	assertNoKeyInClear(t, ctx, db, priv, der)
}

func testRefreshSpendAndReuse(t *testing.T, s storage.Store) {
	ctx := context.Background()
	now := time.Now()
	exp := now.Add(time.Hour).Unix()
	until := now.Add(2 * time.Hour)
	tok := func(jti, chain string) storage.Refresh {
		return storage.Refresh{JTI: jti, Chain: chain, UserID: 1, ClientID: "c", Expires: exp}
	}
	// Issued tokens have no record: the first spend of each succeeds.
	for _, r := range []storage.Refresh{tok("r1", "ch"), tok("r2", "ch"), tok("o1", "other")} {
		if err := s.SpendRefresh(ctx, r, until); err != nil {
			t.Fatalf("first spend of %s = %v", r.JTI, err)
		}
	}
	// Spending r1 again revokes its chain: r3, never spent, is dead too.
	if err := s.SpendRefresh(ctx, tok("r1", "ch"), until); !errors.Is(err, storage.ErrReused) {
		t.Fatalf("reuse = %v", err)
	}
	if err := s.SpendRefresh(ctx, tok("r3", "ch"), until); !errors.Is(err, storage.ErrRevoked) {
		t.Fatalf("after reuse, the newest token = %v", err)
	}
	if err := s.SpendRefresh(ctx, tok("r1", "ch"), until); !errors.Is(err, storage.ErrRevoked) {
		t.Fatalf("the reused token again = %v", err)
	}
	// Another chain is untouched.
	if err := s.SpendRefresh(ctx, tok("o2", "other"), until); err != nil {
		t.Fatalf("other chain = %v", err)
	}
	// Expired, chainless and oversized tokens are unknown, and leave no trace.
	expired := tok("e1", "fresh")
	expired.Expires = now.Add(-time.Second).Unix()
	long := tok(string(make([]byte, 300)), "fresh")
	for _, r := range []storage.Refresh{expired, tok("n1", ""), tok("", "fresh"), long} {
		if err := s.SpendRefresh(ctx, r, until); !errors.Is(err, storage.ErrNotFound) {
			t.Fatalf("spend %+v = %v, want not found", r, err)
		}
	}
	if err := s.SpendRefresh(ctx, tok("n2", "fresh"), until); err != nil {
		t.Fatalf("a refused spend touched its chain: %v", err)
	}
}

func testRefreshMarkersExpire(t *testing.T, s storage.Store) {
	ctx := context.Background()
	// The used-marker lives until the token expires, the revocation
	// until chainUntil; past both, nothing of them is left (the token
	// itself is refused by its exp before that).
	r := storage.Refresh{JTI: "m1", Chain: "mc", Expires: time.Now().Add(1500 * time.Millisecond).Unix()}
	if err := s.SpendRefresh(ctx, r, time.Now().Add(1500*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if err := s.SpendRefresh(ctx, r, time.Now().Add(1500*time.Millisecond)); !errors.Is(err, storage.ErrReused) {
		t.Fatalf("reuse = %v", err)
	}
	time.Sleep(2100 * time.Millisecond)
	r.Expires = time.Now().Add(time.Hour).Unix()
	if err := s.SpendRefresh(ctx, r, time.Now().Add(time.Hour)); err != nil {
		t.Fatalf("after both markers expired = %v", err)
	}
}

func testRevocationLog(t *testing.T, s storage.Store) {
	ctx := context.Background()
	now := time.Now()
	// An empty log: version 0, full.
	if es, v, full, err := s.Revocations(ctx, 0); err != nil || len(es) != 0 || v != 0 || !full {
		t.Fatalf("empty log = %v, %d, %t, %v", es, v, full, err)
	}
	if err := s.CreateClient(ctx, storage.Client{ID: "rc", Name: "R"}); err != nil {
		t.Fatal(err)
	}
	u, _, err := s.CreateUser(ctx, storage.User{Email: "rev@example.org"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	nbf := now.Unix() + 1
	version := runRevocationSteps(t, s, now, revocationSteps(ctx, s, u.ID, nbf, now))
	if got, _ := s.GetUser(ctx, u.ID); got.RevokedBefore != nbf {
		t.Fatalf("RevokedBefore = %d, want %d", got.RevokedBefore, nbf)
	}
	for _, c := range []struct {
		chain, jti string
		want       bool
	}{{"ch1", "", true}, {"ch2", "x", true}, {"", "j1", true}, {"ch3", "j2", false}, {"", "rr", true}, {"", "", false}} {
		if got, err := s.Revoked(ctx, c.chain, c.jti); err != nil || got != c.want {
			t.Fatalf("Revoked(%q, %q) = %t, %v", c.chain, c.jti, got, err)
		}
	}
	// From scratch, and from beyond the log (a store restored from an
	// older backup): everything in force, full.
	for _, since := range []uint32{0, version + 100} {
		es, v, full, err := s.Revocations(ctx, since)
		if err != nil || !full || v != version || len(es) != 5 {
			t.Fatalf("Revocations(%d) = %+v, %d, %t, %v", since, es, v, full, err)
		}
	}
}

// revocationStep is one change to the store and the log entry it makes.
type revocationStep struct {
	name string
	do   func() error
	want string // kind:id of the entry it logs, "" for none
}

// revocationSteps are the changes RevocationLog makes, in order, to the
// user uid and the client "rc"; nbf is the revocation time they set.
func revocationSteps(ctx context.Context, s storage.Store, uid int32, nbf int64, now time.Time) []revocationStep {
	return []revocationStep{
		{"user revoked", func() error {
			return s.UpdateUser(ctx, uid, func(u *storage.User) error { u.RevokedBefore = nbf; return nil })
		}, "user:" + strconv.Itoa(int(uid))},
		{"other change logs nothing", func() error {
			return s.UpdateUser(ctx, uid, func(u *storage.User) error { u.RealName = "R"; return nil })
		}, ""},
		{"a revocation is never undone", func() error {
			return s.UpdateUser(ctx, uid, func(u *storage.User) error { u.RevokedBefore = 0; return nil })
		}, ""},
		{"client revoked", func() error {
			return s.UpdateClient(ctx, "rc", func(c *storage.Client) error { c.RevokedBefore = nbf; return nil })
		}, "client:rc"},
		{"chain revoked", func() error { return s.RevokeChain(ctx, "ch1", now.Add(time.Hour)) }, "chain:ch1"},
		{"chain again", func() error { return s.RevokeChain(ctx, "ch1", now.Add(time.Hour)) }, ""},
		{"token revoked", func() error { return s.RevokeToken(ctx, "j1", now.Add(time.Hour)) }, "token:j1"},
		{"expired token", func() error { return s.RevokeToken(ctx, "j0", now.Add(-time.Second)) }, ""},
		{"reuse revokes the chain", func() error {
			r := storage.Refresh{JTI: "rr", Chain: "ch2", Expires: now.Add(time.Hour).Unix()}
			_ = s.SpendRefresh(ctx, r, now.Add(time.Hour))
			if err := s.SpendRefresh(ctx, r, now.Add(time.Hour)); !errors.Is(err, storage.ErrReused) {
				return fmt.Errorf("reuse = %v", err)
			}
			return nil
		}, "chain:ch2"},
	}
}

// runRevocationSteps applies steps one by one, checking after each the log
// entries since the previous version, and returns the last version.
func runRevocationSteps(t *testing.T, s storage.Store, now time.Time, steps []revocationStep) uint32 {
	t.Helper()
	ctx := context.Background()
	var version uint32
	for _, st := range steps {
		if err := st.do(); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		es, v, full, err := s.Revocations(ctx, version)
		if err != nil || (full && version != 0) {
			t.Fatalf("%s: Revocations(%d) = %v, full %t, %v", st.name, version, es, full, err)
		}
		var got string
		if len(es) > 1 {
			t.Fatalf("%s: %d entries since %d: %+v", st.name, len(es), version, es)
		}
		if len(es) == 1 {
			got = es[0].Kind + ":" + es[0].ID
			if es[0].Version != v || v <= version || es[0].Until <= now.Unix() {
				t.Fatalf("%s: entry %+v, version %d after %d", st.name, es[0], v, version)
			}
		}
		if got != st.want {
			t.Fatalf("%s: logged %q, want %q", st.name, got, st.want)
		}
		version = v
	}
	return version
}

func testConcurrentRefreshOnlyOneWins(t *testing.T, s storage.Store) {
	ctx := context.Background()
	now := time.Now()
	exp := now.Add(time.Hour).Unix()
	var wg sync.WaitGroup
	var ok, reused int32
	var mu sync.Mutex
	for i := 0; i < 6; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := s.SpendRefresh(ctx, storage.Refresh{JTI: "r", Chain: "c", Expires: exp}, now.Add(2*time.Hour))
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				ok++
			case errors.Is(err, storage.ErrReused), errors.Is(err, storage.ErrRevoked):
				reused++
			default:
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if ok != 1 || reused != 5 {
		t.Fatalf("ok=%d reused=%d, want exactly one exchange", ok, reused)
	}
}

// assertNoKeyInClear reads every raw value of the backend and fails when
// the private key shows: its DER, or the modulus every private key encoding
// carries, raw or in base64 (JSON's encoding of bytes) at any alignment,
// or a PEM block.
func assertNoKeyInClear(t *testing.T, ctx context.Context, db kv.Store, priv *rsa.PrivateKey, der []byte) {
	t.Helper()
	es, err := db.Scan(ctx, "", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(es) == 0 {
		t.Fatal("nothing stored")
	}
	pkcs1 := x509.MarshalPKCS1PrivateKey(priv)
	needles := map[string][]byte{"PKCS#8 DER": der, "PKCS#1 DER": pkcs1, "modulus": priv.N.Bytes(),
		"PEM": []byte("PRIVATE KEY-----"), "PKCS#8 PEM": pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})}
	for shift := 0; shift < 3; shift++ {
		padded := append(make([]byte, shift), priv.N.Bytes()...)
		for name, enc := range map[string]*base64.Encoding{"base64": base64.StdEncoding, "base64url": base64.RawURLEncoding} {
			s := enc.EncodeToString(padded)
			// Drop the characters the padding or the neighbours touch.
			needles[fmt.Sprintf("modulus %s+%d", name, shift)] = []byte(s[4 : len(s)-4])
		}
	}
	for _, e := range es {
		for name, n := range needles {
			if bytes.Contains(e.Value, n) {
				t.Errorf("%s: the %s of the private key is stored in clear", e.Key, name)
			}
		}
	}
}
