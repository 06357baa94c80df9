package storagetest

import (
	"context"
	"errors"
	"testing"

	"fris.dev/services/auth/internal/storage"
)

// A user's keys are listed, updated (last use) and removed, the index of
// the removed key's hash with it: the key is gone by id and by hash, and
// the hash may be registered again.
func testUserKeysRemoved(t *testing.T, s storage.Store) {
	ctx := context.Background()
	u, k, err := s.CreateUser(ctx, storage.User{Email: "victim@example.org"}, &storage.UserKey{DER: []byte{1}, SHA512: "feed", Created: 5, AddedBy: storage.AddedRegistration})
	if err != nil {
		t.Fatal(err)
	}
	other, ok, err := s.CreateUser(ctx, storage.User{Email: "other@example.org"}, &storage.UserKey{DER: []byte{2}, SHA512: "beef", Created: 6})
	if err != nil {
		t.Fatal(err)
	}
	if ks, err := s.UserKeys(ctx, u.ID); err != nil || len(ks) != 1 || ks[0].ID != k.ID || ks[0].AddedBy != storage.AddedRegistration || ks[0].Proven {
		t.Fatalf("UserKeys = %+v %v", ks, err)
	}
	if all, err := s.AllUserKeys(ctx); err != nil || len(all) != 2 || all[0].ID != k.ID || all[1].ID != ok.ID {
		t.Fatalf("AllUserKeys = %+v %v", all, err)
	}
	if err := s.UpdateUserKey(ctx, k.ID, func(k *storage.UserKey) error { k.LastUsed, k.SHA512, k.UserID = 99, "changed", 0; return nil }); err != nil {
		t.Fatal(err)
	}
	if got, err := s.GetUserKeyByHash(ctx, "feed"); err != nil || got.LastUsed != 99 || got.UserID != u.ID || got.SHA512 != "feed" {
		t.Fatalf("after UpdateUserKey: %+v %v", got, err)
	}
	// Another user's key is not this user's to remove.
	if _, err := s.DeleteUserKey(ctx, other.ID, k.ID); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("DeleteUserKey of another's = %v", err)
	}
	if got, err := s.DeleteUserKey(ctx, u.ID, k.ID); err != nil || got.ID != k.ID {
		t.Fatalf("DeleteUserKey = %+v %v", got, err)
	}
	if _, err := s.GetUserKey(ctx, k.ID); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("by id after removal: %v", err)
	}
	if _, err := s.GetUserKeyByHash(ctx, "feed"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("by hash after removal: %v", err)
	}
	if _, err := s.DeleteUserKey(ctx, u.ID, k.ID); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("removed twice: %v", err)
	}
	if err := s.UpdateUserKey(ctx, k.ID, func(*storage.UserKey) error { return nil }); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("UpdateUserKey of a removed key = %v", err)
	}
	if ks, err := s.UserKeys(ctx, u.ID); err != nil || len(ks) != 0 {
		t.Fatalf("UserKeys after removal = %+v %v", ks, err)
	}
	if _, _, err := s.CreateUser(ctx, storage.User{Email: "again@example.org"}, &storage.UserKey{DER: []byte{1}, SHA512: "FEED"}); err != nil {
		t.Fatalf("the freed key again: %v", err)
	}
	// Passkeys keep how they were added.
	if err := s.AddPasskey(ctx, storage.Passkey{ID: "p", UserID: u.ID, Created: 7, AddedBy: storage.AddedHolder, Unproven: true}, 10); err != nil {
		t.Fatal(err)
	}
	if all, err := s.AllPasskeys(ctx); err != nil || len(all) != 1 || !all[0].Unproven || all[0].AddedBy != storage.AddedHolder {
		t.Fatalf("AllPasskeys = %+v %v", all, err)
	}
}
