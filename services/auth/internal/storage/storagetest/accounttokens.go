package storagetest

import (
	"bytes"
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"fris.dev/services/auth/internal/storage"
)

// testAccountTokensAreSingleUse: a mailed link's token is spent once, even
// by concurrent attempts; peeking does not spend it.
func testAccountTokensAreSingleUse(t *testing.T, s storage.Store) {
	ctx := context.Background()
	tok := storage.AccountToken{Purpose: storage.TokenPasswordReset, UserID: 7, Email: "ada@example.org", Stamp: "s1", Expires: time.Now().Add(time.Minute).Unix()}
	if err := s.PutAccountToken(ctx, "link-token-1", tok); err != nil {
		t.Fatal(err)
	}
	if got, err := s.PeekAccountToken(ctx, "link-token-1"); err != nil || got != tok {
		t.Fatalf("peek = %+v, %v", got, err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	wins := 0
	for range 8 {
		wg.Go(func() {
			got, err := s.TakeAccountToken(ctx, "link-token-1")
			switch {
			case err == nil:
				mu.Lock()
				wins++
				mu.Unlock()
				if got != tok {
					t.Errorf("taken = %+v", got)
				}
			case !errors.Is(err, storage.ErrNotFound):
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if wins != 1 {
		t.Fatalf("token spent %d times", wins)
	}
	for _, token := range []string{"link-token-1", "", "never-issued", string(bytes.Repeat([]byte("x"), 300))} {
		if _, err := s.PeekAccountToken(ctx, token); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("peek %.20q = %v, want not found", token, err)
		}
		if _, err := s.TakeAccountToken(ctx, token); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("take %.20q = %v, want not found", token, err)
		}
	}
	if err := s.PutAccountToken(ctx, "old", storage.AccountToken{Expires: time.Now().Add(-time.Second).Unix()}); err == nil {
		t.Fatal("expired token stored")
	}
}

// testAccountTokensExpire: a token is refused once its time is up, peeked
// or taken.
func testAccountTokensExpire(t *testing.T, s storage.Store) {
	ctx := context.Background()
	for _, name := range []string{"short-peek", "short-take"} {
		if err := s.PutAccountToken(ctx, name, storage.AccountToken{Purpose: storage.TokenEmailVerification, UserID: 1, Expires: time.Now().Add(1100 * time.Millisecond).Unix()}); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(2100 * time.Millisecond)
	if _, err := s.PeekAccountToken(ctx, "short-peek"); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("expired token peeked: %v", err)
	}
	if _, err := s.TakeAccountToken(ctx, "short-take"); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("expired token taken: %v", err)
	}
}

// testAccountTokensHashedAtRest: the backend holds the token's SHA-256,
// never the token itself.
func testAccountTokensHashedAtRest(t *testing.T, b backend) {
	ctx := context.Background()
	db := b.openKV(t)
	s := b.on(t, db, oldSecret())
	const token = "Zm9yZ290LXBhc3N3b3JkLWxpbmstdG9rZW4tMTIzNDU2"
	if err := s.PutAccountToken(ctx, token, storage.AccountToken{Purpose: storage.TokenPasswordReset, UserID: 3, Email: "a@b.example", Expires: time.Now().Add(time.Hour).Unix()}); err != nil {
		t.Fatal(err)
	}
	es, err := db.Scan(ctx, "", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, e := range es {
		if bytes.Contains([]byte(e.Key), []byte(token)) || bytes.Contains(e.Value, []byte(token)) {
			t.Fatalf("the token is stored in clear under %q", e.Key)
		}
		if bytes.Contains(e.Value, []byte("a@b.example")) {
			found = true
		}
	}
	if !found {
		t.Fatal("the token's record is not in the backend")
	}
	if _, err := s.TakeAccountToken(ctx, token); err != nil {
		t.Fatalf("take after the scan: %v", err)
	}
}
