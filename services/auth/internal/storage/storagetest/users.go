package storagetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"fris.dev/services/auth/internal/storage"
)

func testUsersAndKeys(t *testing.T, s storage.Store) {
	ctx := context.Background()
	u, k, err := s.CreateUser(ctx, storage.User{Email: "Ada@Example.org", RealName: "Ada"}, nil)
	if err != nil || u.ID <= 0 || k != nil {
		t.Fatalf("CreateUser = %+v %v %v", u, k, err)
	}
	if _, _, err := s.CreateUser(ctx, storage.User{Email: "ada@example.ORG"}, nil); !errors.Is(err, storage.ErrExists) {
		t.Fatalf("same email other case = %v", err)
	}
	u2, k2, err := s.CreateUser(ctx, storage.User{Email: "bob@example.org"}, &storage.UserKey{DER: []byte{1, 2}, SHA512: "abcd"})
	if err != nil || u2.ID <= 0 || u2.ID == u.ID || k2 == nil || k2.ID <= 0 || k2.UserID != u2.ID {
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
	if err != nil || got.ID != u.ID || got.Email != "Ada@Example.org" {
		t.Fatalf("GetUserByEmail = %+v %v", got, err)
	}
	if got, err := s.GetUserKeyByHash(ctx, "ABCD"); err != nil || got.ID != k2.ID {
		t.Fatalf("GetUserKeyByHash = %+v %v", got, err)
	}
	if got, err := s.GetUserKey(ctx, k2.ID); err != nil || got.UserID != u2.ID || string(got.DER) != "\x01\x02" {
		t.Fatalf("GetUserKey = %+v %v", got, err)
	}
	if _, err := s.GetUserKey(ctx, k2.ID+1); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("unknown key = %v", err)
	}
	if err := s.UpdateUser(ctx, u.ID, func(u *storage.User) error { u.Disabled = true; u.Scopes = []string{"mdr:x"}; return nil }); err != nil {
		t.Fatal(err)
	}
	if err := s.UpdateUser(ctx, u.ID, func(u *storage.User) error { u.Email = "other@x"; return nil }); err == nil {
		t.Fatal("email change accepted")
	}
	got, _ = s.GetUser(ctx, u.ID)
	if !got.Disabled || len(got.Scopes) != 1 || got.Email != "Ada@Example.org" {
		t.Fatalf("after update: %+v", got)
	}
	us, _ := s.ListUsers(ctx)
	if len(us) != 2 {
		t.Fatalf("ListUsers = %d", len(us))
	}
	// Sign-ins: the newest first, whatever order they are recorded in,
	// and only the last storage.RecentSignIns.
	for _, si := range []struct {
		at   int64
		addr string
	}{{2000, "192.0.2.2"}, {1000, "192.0.2.1"}, {2001, "192.0.2.3"}} {
		if err := s.RecordSignIn(ctx, u2.ID, storage.SignInEvent{At: si.at, Addr: si.addr, Method: storage.MethodPassword, Client: "c"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.RecordSignIn(ctx, u.ID, storage.SignInEvent{At: 1500, Addr: "2001:db8::1", Method: storage.MethodKey}); err != nil {
		t.Fatal(err)
	}
	got2, err := s.SignIns(ctx)
	if err != nil || len(got2) != 2 || got2[u.ID].At != 1500 || got2[u.ID].Addr != "2001:db8::1" || got2[u2.ID].At != 2001 || got2[u2.ID].Addr != "192.0.2.3" {
		t.Fatalf("SignIns = %+v %v", got2, err)
	}
	rec, err := s.UserSignIns(ctx, u2.ID)
	if err != nil || len(rec.Recent) != 3 || rec.Recent[0].At != 2001 || rec.Recent[1].At != 2000 || rec.Recent[2].At != 1000 || rec.Recent[0].Method != storage.MethodPassword {
		t.Fatalf("UserSignIns = %+v %v", rec, err)
	}
	for i := range storage.RecentSignIns + 5 {
		if err := s.RecordSignIn(ctx, u2.ID, storage.SignInEvent{At: 3000 + int64(i), Method: storage.MethodPassword}); err != nil {
			t.Fatal(err)
		}
	}
	rec, err = s.UserSignIns(ctx, u2.ID)
	if err != nil || len(rec.Recent) != storage.RecentSignIns || rec.Recent[0].At != 3000+storage.RecentSignIns+4 {
		t.Fatalf("after many: %+v %v", rec, err)
	}
	if none, err := s.UserSignIns(ctx, 9999); err != nil || len(none.Recent) != 0 {
		t.Fatalf("UserSignIns of nobody = %+v %v", none, err)
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
