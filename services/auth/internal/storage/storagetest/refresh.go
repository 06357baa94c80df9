package storagetest

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"fris.dev/services/auth/internal/storage"
)

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
