package explorer

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"golang.org/x/oauth2"
)

type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func TestMemoryStore(t *testing.T) {
	ctx := context.Background()
	c := &clock{time.Unix(1_700_000_000, 0)}
	m := NewMemory(3, c.now)
	put := func(id string, ttl time.Duration) {
		t.Helper()
		if err := m.Put(ctx, &Session{ID: id, Expires: c.t.Add(ttl)}); err != nil {
			t.Fatal(err)
		}
	}
	has := func(id string) bool {
		_, err := m.Get(ctx, id)
		if err != nil && !errors.Is(err, ErrNoSession) {
			t.Fatal(err)
		}
		return err == nil
	}

	t.Run("expiry", func(t *testing.T) {
		put("short", time.Minute)
		if !has("short") {
			t.Fatal("fresh session missing")
		}
		c.t = c.t.Add(time.Minute)
		if has("short") {
			t.Fatal("expired session returned")
		}
	})
	t.Run("cap evicts the least recently used", func(t *testing.T) {
		put("a", time.Hour)
		put("b", time.Hour)
		put("c", time.Hour)
		has("a") // a is now the most recently used
		put("d", time.Hour)
		if m.Len() != 3 {
			t.Fatalf("Len = %d, want 3", m.Len())
		}
		if has("b") || !has("a") || !has("c") || !has("d") {
			t.Fatal("b should have gone, a, c and d stayed")
		}
	})
	t.Run("sessions that never signed in go first", func(t *testing.T) {
		m := NewMemory(3, c.now)
		_ = m.Put(ctx, &Session{ID: "ada", Expires: c.t.Add(time.Hour), User: &User{Name: "Ada"}})
		_ = m.Put(ctx, &Session{ID: "grace", Expires: c.t.Add(time.Hour), User: &User{Name: "Grace"}})
		for i := range 50 { // someone starting sign-ins in a loop
			_ = m.Put(ctx, &Session{ID: fmt.Sprint("bot", i), Expires: c.t.Add(time.Hour)})
		}
		for _, id := range []string{"ada", "grace", "bot49"} {
			if _, err := m.Get(ctx, id); err != nil {
				t.Errorf("%s was pushed out", id)
			}
		}
		// Signing out moves a session to the first to go.
		s, _ := m.Get(ctx, "ada")
		s.User = nil
		_ = m.Put(ctx, s)
		_ = m.Put(ctx, &Session{ID: "new", Expires: c.t.Add(time.Hour)})
		if _, err := m.Get(ctx, "grace"); err != nil || m.Len() != 3 {
			t.Errorf("grace pushed out, or %d sessions", m.Len())
		}
		// Only signed-in sessions left: the least recently used goes.
		m2 := NewMemory(2, c.now)
		for _, id := range []string{"a", "b", "c"} {
			_ = m2.Put(ctx, &Session{ID: id, Expires: c.t.Add(time.Hour), User: &User{}})
		}
		if _, err := m2.Get(ctx, "a"); err == nil || m2.Len() != 2 {
			t.Error("the cap does not hold for signed-in sessions")
		}
	})
	t.Run("expired sessions are swept without waiting for the cap", func(t *testing.T) {
		m := NewMemory(100, c.now)
		for i := range 10 {
			_ = m.Put(ctx, &Session{ID: fmt.Sprint("old", i), Expires: c.t.Add(time.Second)})
		}
		c.t = c.t.Add(time.Minute)
		for i := range 10 {
			_ = m.Put(ctx, &Session{ID: fmt.Sprint("new", i), Expires: c.t.Add(time.Hour)})
		}
		if m.Len() != 10 {
			t.Fatalf("Len = %d after sweeping, want 10", m.Len())
		}
	})
	t.Run("copies in and out", func(t *testing.T) {
		s := &Session{ID: "x", Expires: c.t.Add(time.Hour), User: &User{Name: "Ada"}, Token: &oauth2.Token{AccessToken: "t1"}}
		_ = m.Put(ctx, s)
		s.User.Name, s.Token.AccessToken = "Eve", "t2"
		got, err := m.Get(ctx, "x")
		if err != nil {
			t.Fatal(err)
		}
		if got.User.Name != "Ada" || got.Token.AccessToken != "t1" {
			t.Fatalf("the store shares memory with its caller: %+v", got)
		}
		got.User.Name = "Mallory"
		again, _ := m.Get(ctx, "x")
		if again.User.Name != "Ada" {
			t.Fatal("a returned session shares memory with the store")
		}
	})
	t.Run("delete", func(t *testing.T) {
		put("gone", time.Hour)
		_ = m.Delete(ctx, "gone")
		if has("gone") {
			t.Fatal("deleted session returned")
		}
		if err := m.Put(ctx, &Session{}); err == nil {
			t.Fatal("a session without id was stored")
		}
	})
}
