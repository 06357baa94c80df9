package audit

import (
	"context"
	"errors"
	"testing"
	"time"

	"fris.dev/pkg/kv"
)

// FuzzListToken feeds List page tokens from outside: anything not an
// event's id is ErrBadFilter, never a scan of other keys.
func FuzzListToken(f *testing.F) {
	f.Add("7fffffffffffffff-0000000000000000")
	f.Add("")
	f.Add("../x")
	db, err := kv.OpenBolt(f.TempDir()+"/fuzz.db", kv.BoltOptions{})
	if err != nil {
		f.Fatal(err)
	}
	defer db.Close()
	s := NewStore(db, DefaultRetention)
	if err := s.Append(context.Background(), []Stored{{Time: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), Action: "a"}}); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, token string) {
		evs, _, err := s.List(context.Background(), Filter{After: token})
		if err != nil && !errors.Is(err, ErrBadFilter) {
			t.Fatalf("%q: %v", token, err)
		}
		if err == nil && token != "" && !validID(token) {
			t.Fatalf("%q accepted", token)
		}
		for _, e := range evs {
			if !validID(e.ID) {
				t.Fatalf("listed a key that is no event: %q", e.ID)
			}
		}
	})
}
