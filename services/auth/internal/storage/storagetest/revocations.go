package storagetest

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"testing"
	"time"

	"fris.dev/services/auth/internal/storage"
)

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
