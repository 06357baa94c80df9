package storagetest

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"fris.dev/services/auth/internal/storage"
)

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
