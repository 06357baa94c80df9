package storagetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"fris.dev/services/auth/internal/storage"
)

// testPasskeys: a user's passkeys are listed oldest first, only theirs; an
// id is stored once; the limit holds, under concurrent adds too; an update
// and a delete touch one passkey.
func testPasskeys(t *testing.T, s storage.Store) {
	ctx := context.Background()
	now := time.Now().Unix()
	add := func(user int32, id string, created int64) error {
		return s.AddPasskey(ctx, storage.Passkey{ID: id, UserID: user, Name: "key " + id, Created: created, Credential: []byte(`{"id":"` + id + `"}`)}, 3)
	}
	for i, p := range []struct {
		user    int32
		id      string
		created int64
	}{{33, "b", now - 10}, {33, "a", now - 20}, {65, "c", now}} {
		if err := add(p.user, p.id, p.created); err != nil {
			t.Fatalf("passkey %d: %v", i, err)
		}
	}
	if err := add(33, "a", now); !errors.Is(err, storage.ErrExists) {
		t.Fatalf("the same id again: %v, want ErrExists", err)
	}
	got, err := s.Passkeys(ctx, 33)
	if err != nil || len(got) != 2 || got[0].ID != "a" || got[1].ID != "b" || got[0].Name != "key a" || string(got[0].Credential) != `{"id":"a"}` {
		t.Fatalf("passkeys = %+v, %v", got, err)
	}
	if err := add(33, "d", now); err != nil {
		t.Fatal(err)
	}
	if err := add(33, "e", now); !errors.Is(err, storage.ErrTooMany) {
		t.Fatalf("a fourth passkey: %v, want ErrTooMany", err)
	}
	if err := s.UpdatePasskey(ctx, 33, "a", func(p *storage.Passkey) error { p.LastUsed = now; return nil }); err != nil {
		t.Fatal(err)
	}
	if err := s.UpdatePasskey(ctx, 65, "a", func(p *storage.Passkey) error { return nil }); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("another user's passkey updated: %v", err)
	}
	if _, err := s.DeletePasskey(ctx, 65, "a"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("another user's passkey deleted: %v", err)
	}
	if p, err := s.DeletePasskey(ctx, 33, "b"); err != nil || p.Name != "key b" {
		t.Fatalf("delete = %+v, %v", p, err)
	}
	got, err = s.Passkeys(ctx, 33)
	if err != nil || len(got) != 2 || got[0].ID != "a" || got[0].LastUsed != now || got[1].ID != "d" {
		t.Fatalf("after update and delete: %+v, %v", got, err)
	}
	if got, err := s.Passkeys(ctx, 1); err != nil || len(got) != 0 {
		t.Fatalf("a user without passkeys: %+v %v", got, err)
	}

	// Concurrent adds never pass the limit.
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() { _ = add(97, fmt.Sprint("k", i), now) })
	}
	wg.Wait()
	if got, err := s.Passkeys(ctx, 97); err != nil || len(got) != 3 {
		t.Fatalf("concurrent adds: %d passkeys (%v), want the limit 3", len(got), err)
	}
}

// testCeremoniesAreSingleUse: a ceremony is taken once; an unknown one is
// not found.
func testCeremoniesAreSingleUse(t *testing.T, s storage.Store) {
	ctx := context.Background()
	c := storage.Ceremony{Kind: "login", Session: []byte(`{"challenge":"x"}`), Expires: time.Now().Add(time.Minute).Unix()}
	if err := s.PutCeremony(ctx, "cer-1", c); err != nil {
		t.Fatal(err)
	}
	got, err := s.TakeCeremony(ctx, "cer-1")
	if err != nil || got.Kind != "login" || string(got.Session) != `{"challenge":"x"}` {
		t.Fatalf("take = %+v, %v", got, err)
	}
	if _, err := s.TakeCeremony(ctx, "cer-1"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("taken twice: %v", err)
	}
	if _, err := s.TakeCeremony(ctx, "nosuch"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("unknown: %v", err)
	}
}

// testCeremoniesExpire: a ceremony past its expiry is not found.
func testCeremoniesExpire(t *testing.T, s storage.Store) {
	ctx := context.Background()
	if err := s.PutCeremony(ctx, "short", storage.Ceremony{Kind: "register", UserID: 3, Expires: time.Now().Add(1100 * time.Millisecond).Unix()}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2100 * time.Millisecond)
	if _, err := s.TakeCeremony(ctx, "short"); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("expired ceremony taken: %v", err)
	}
}
