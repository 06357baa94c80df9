package storagetest

import (
	"context"
	"testing"
	"time"

	"fris.dev/services/auth/internal/storage"
)

// testSessions: a user's sign-ins are listed oldest first, only theirs,
// not past their expiry, at most the limit (the newest).
func testSessions(t *testing.T, s storage.Store) {
	ctx := context.Background()
	now := time.Now()
	for i, ss := range []storage.Session{
		{Chain: "c2", UserID: 33, ClientID: "demo", Addr: "192.0.2.1", Created: now.Add(-time.Hour).Unix(), Expires: now.Add(time.Hour).Unix()},
		{Chain: "c1", UserID: 33, Created: now.Add(-2 * time.Hour).Unix(), Expires: now.Add(time.Hour).Unix()},
		{Chain: "c3", UserID: 33, Created: now.Unix(), Expires: now.Add(time.Hour).Unix()},
		{Chain: "gone", UserID: 33, Created: now.Unix(), Expires: now.Add(-time.Second).Unix()},
		{Chain: "other", UserID: 65, Created: now.Unix(), Expires: now.Add(time.Hour).Unix()},
	} {
		if err := s.PutSession(ctx, ss); err != nil {
			t.Fatalf("session %d: %v", i, err)
		}
	}
	got, err := s.Sessions(ctx, 33, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0].Chain != "c1" || got[1].Chain != "c2" || got[2].Chain != "c3" || got[1].Addr != "192.0.2.1" || got[1].ClientID != "demo" {
		t.Fatalf("sessions = %+v", got)
	}
	if got, err := s.Sessions(ctx, 33, 2); err != nil || len(got) != 2 || got[0].Chain != "c2" {
		t.Fatalf("limited = %+v %v", got, err)
	}
	if got, err := s.Sessions(ctx, 1, 0); err != nil || len(got) != 0 {
		t.Fatalf("a user without sessions: %+v %v", got, err)
	}
}
