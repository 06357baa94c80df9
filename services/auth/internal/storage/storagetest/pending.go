package storagetest

import (
	"context"
	"errors"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"fris.dev/pkg/kv"
	"fris.dev/services/auth/internal/storage"
)

// logFault is a backend whose writes of revocation log entries fail while
// failing is set: the log is in another partition than what a revocation
// changes, and a writer may stop between the two.
type logFault struct {
	kv.Store
	failing atomic.Bool
}

var errLogDown = errors.New("log partition down")

func (f *logFault) Update(ctx context.Context, fn func(kv.Tx) error) error {
	return f.Store.Update(ctx, func(tx kv.Tx) error { return fn(faultTx{Tx: tx, f: f}) })
}

type faultTx struct {
	kv.Tx
	f *logFault
}

func (t faultTx) Put(key string, value []byte, ttl time.Duration) error {
	if t.f.failing.Load() && strings.HasPrefix(key, "revlog/") {
		return errLogDown
	}
	return t.Tx.Put(key, value, ttl)
}

// testPendingRevocationsArePublished: every revocation is in force in the
// service as soon as it is written, even when its log entry cannot be
// written; PublishPending logs what is missing, once.
func testPendingRevocationsArePublished(t *testing.T, b backend) {
	ctx := context.Background()
	f := &logFault{Store: b.openKV(t)}
	s := b.on(t, f, oldSecret())
	now := time.Now()
	until := now.Add(time.Hour)
	if err := s.CreateClient(ctx, storage.Client{ID: "pc", Name: "P"}); err != nil {
		t.Fatal(err)
	}
	u, _, err := s.CreateUser(ctx, storage.User{Email: "pending@example.org"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	spent := storage.Refresh{JTI: "pr1", Chain: "rch", Expires: until.Unix()}
	if err := s.SpendRefresh(ctx, spent, until); err != nil {
		t.Fatal(err)
	}

	f.failing.Store(true)
	if err := s.RevokeChain(ctx, "pch", until); err == nil {
		t.Fatal("RevokeChain with the log down = nil, want an error")
	}
	if err := s.RevokeToken(ctx, "pjti", until); err == nil {
		t.Fatal("RevokeToken with the log down = nil, want an error")
	}
	// A reused token is refused as such: its chain is revoked here.
	if err := s.SpendRefresh(ctx, spent, until); !errors.Is(err, storage.ErrReused) {
		t.Fatalf("reuse with the log down = %v, want ErrReused", err)
	}
	nbf := now.Unix() + 1
	if err := s.UpdateUser(ctx, u.ID, func(u *storage.User) error { u.RevokedBefore = nbf; return nil }); err == nil {
		t.Fatal("user revocation with the log down = nil, want an error")
	}
	if err := s.UpdateClient(ctx, "pc", func(c *storage.Client) error { c.RevokedBefore = nbf; return nil }); err == nil {
		t.Fatal("client revocation with the log down = nil, want an error")
	}
	for _, c := range [][2]string{{"pch", ""}, {"", "pjti"}, {"rch", ""}} {
		if got, err := s.Revoked(ctx, c[0], c[1]); err != nil || !got {
			t.Fatalf("Revoked(%q, %q) = %t, %v: not in force", c[0], c[1], got, err)
		}
	}
	if got, _ := s.GetUser(ctx, u.ID); got.RevokedBefore != nbf {
		t.Fatalf("user RevokedBefore = %d, want %d", got.RevokedBefore, nbf)
	}
	if got, _ := s.GetClient(ctx, "pc"); got.RevokedBefore != nbf {
		t.Fatalf("client RevokedBefore = %d, want %d", got.RevokedBefore, nbf)
	}
	if es, _, _, err := s.Revocations(ctx, 0); err != nil || len(es) != 0 {
		t.Fatalf("log while down = %+v, %v", es, err)
	}
	if _, err := s.PublishPending(ctx); err == nil {
		t.Fatal("PublishPending with the log down = nil, want an error")
	}

	f.failing.Store(false)
	if n, err := s.PublishPending(ctx); err != nil || n != 5 {
		t.Fatalf("PublishPending = %d, %v, want 5", n, err)
	}
	want := []string{"chain:pch", "chain:rch", "client:pc", "token:pjti", "user:" + strconv.Itoa(int(u.ID))}
	if got := logged(t, s); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("log = %v, want %v", got, want)
	}
	if n, err := s.PublishPending(ctx); err != nil || n != 0 {
		t.Fatalf("PublishPending again = %d, %v, want 0", n, err)
	}
	// Revoking again changes nothing, and logs nothing new.
	if err := s.RevokeChain(ctx, "pch", until); err != nil {
		t.Fatal(err)
	}
	if got := logged(t, s); len(got) != len(want) {
		t.Fatalf("log after a repeated revocation = %v", got)
	}
}

// logged lists the log's entries as kind:id, sorted.
func logged(t *testing.T, s storage.Store) []string {
	t.Helper()
	es, _, _, err := s.Revocations(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.Kind + ":" + e.ID
	}
	sort.Strings(out)
	return out
}

// testFailedRegistrationFreesItsKey: a user that cannot be created (its
// email is taken) leaves its key free for the next.
func testFailedRegistrationFreesItsKey(t *testing.T, s storage.Store) {
	ctx := context.Background()
	if _, _, err := s.CreateUser(ctx, storage.User{Email: "first@example.org"}, &storage.UserKey{SHA512: "k1"}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.CreateUser(ctx, storage.User{Email: "FIRST@example.org"}, &storage.UserKey{SHA512: "k2"}); !errors.Is(err, storage.ErrExists) {
		t.Fatalf("taken email = %v, want ErrExists", err)
	}
	if _, err := s.GetUserKeyByHash(ctx, "k2"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("key of the failed registration = %v, want not found", err)
	}
	u, k, err := s.CreateUser(ctx, storage.User{Email: "second@example.org"}, &storage.UserKey{SHA512: "K2"})
	if err != nil {
		t.Fatalf("the freed key = %v", err)
	}
	if got, err := s.GetUserKeyByHash(ctx, "k2"); err != nil || got.ID != k.ID || got.UserID != u.ID || got.SHA512 != "k2" {
		t.Fatalf("GetUserKeyByHash = %+v, %v", got, err)
	}
}
