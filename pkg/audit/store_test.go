package audit

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"fris.dev/pkg/kv"
	"fris.dev/pkg/kv/kvtest"
)

// base is the events' clock in these tests.
var base = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// seed appends n events a minute apart, the i-th (from 0) at base+i min,
// acting as actor<i%2>, action "svc.a<i%3>", outcomes ok, denied, failed
// in turn.
func seed(t *testing.T, s *Store, n int) {
	t.Helper()
	var evs []Stored
	outcomes := []string{OutcomeOK, OutcomeDenied, OutcomeFailed}
	for i := range n {
		evs = append(evs, Stored{Time: base.Add(time.Duration(i) * time.Minute), Action: fmt.Sprintf("svc.a%d", i%3),
			Actor: fmt.Sprintf("actor%d", i%2), Target: fmt.Sprintf("t%d", i), Outcome: outcomes[i%3],
			Attrs: []KV{{K: "email", V: "x@example.org"}}})
	}
	if err := s.Append(context.Background(), evs); err != nil {
		t.Fatal(err)
	}
}

// targets are the events' targets in the order listed.
func targets(evs []Stored) string {
	var out []string
	for _, e := range evs {
		out = append(out, e.Target)
	}
	return strings.Join(out, " ")
}

func list(t *testing.T, s *Store, f Filter) ([]Stored, string) {
	t.Helper()
	evs, next, err := s.List(context.Background(), f)
	if err != nil {
		t.Fatalf("List(%+v): %v", f, err)
	}
	return evs, next
}

// TestStore holds the audit event store to its contract on every backend:
// newest first, full pages with a continuation, filters, time bounds, and
// the retention by count and by age.
func TestStore(t *testing.T) {
	kvtest.Backends(t, func(t *testing.T, open func(t *testing.T) kv.Store) {
		ctx := context.Background()
		t.Run("NewestFirstAndPaged", func(t *testing.T) {
			s := NewStore(open(t), DefaultRetention)
			seed(t, s, 5)
			evs, next := list(t, s, Filter{})
			if got := targets(evs); got != "t4 t3 t2 t1 t0" || next != "" {
				t.Fatalf("all: %q next %q", got, next)
			}
			if evs[0].Action != "svc.a1" || evs[0].Actor != "actor0" || evs[0].Outcome != OutcomeDenied ||
				len(evs[0].Attrs) != 1 || evs[0].Attrs[0] != (KV{K: "email", V: "x@example.org"}) || !evs[0].Time.Equal(base.Add(4*time.Minute)) {
				t.Fatalf("event read back as %+v", evs[0])
			}
			var pages []string
			after := ""
			for range 5 {
				evs, next := list(t, s, Filter{PageSize: 2, After: after})
				pages = append(pages, targets(evs))
				if next != "" && len(evs) != 2 {
					t.Fatalf("a page with a continuation must be full: %q", targets(evs))
				}
				if next == "" {
					break
				}
				after = next
			}
			if got := strings.Join(pages, " | "); got != "t4 t3 | t2 t1 | t0" {
				t.Fatalf("pages %q", got)
			}
			// An exactly full last page has no continuation.
			if evs, next := list(t, s, Filter{PageSize: 5}); len(evs) != 5 || next != "" {
				t.Fatalf("page of 5 of 5: %d events, next %q", len(evs), next)
			}
			// An event's id continues after it.
			if evs, _ := list(t, s, Filter{After: evs[1].ID}); targets(evs) != "t2 t1 t0" {
				t.Fatalf("after t3's id: %q", targets(evs))
			}
		})
		t.Run("Filters", func(t *testing.T) {
			s := NewStore(open(t), DefaultRetention)
			seed(t, s, 9)
			for _, tc := range []struct {
				f    Filter
				want string
			}{
				{Filter{Actor: "actor1"}, "t7 t5 t3 t1"},
				{Filter{ActionPrefix: "svc.a2"}, "t8 t5 t2"},
				{Filter{ActionPrefix: "svc."}, "t8 t7 t6 t5 t4 t3 t2 t1 t0"},
				{Filter{ActionPrefix: "other."}, ""},
				{Filter{Outcome: OutcomeFailed}, "t8 t5 t2"},
				{Filter{Outcome: OutcomeDenied, Actor: "actor0"}, "t4"},
				{Filter{Since: base.Add(6 * time.Minute)}, "t8 t7 t6"},
				{Filter{Until: base.Add(2 * time.Minute)}, "t2 t1 t0"},
				{Filter{Since: base.Add(3 * time.Minute), Until: base.Add(5 * time.Minute)}, "t5 t4 t3"},
				{Filter{Since: base.Add(3*time.Minute + time.Second), Until: base.Add(5*time.Minute - time.Second)}, "t4"},
				{Filter{Until: base.Add(-time.Hour)}, ""},
				{Filter{Since: base.Add(time.Hour)}, ""},
				{Filter{Until: time.Unix(0, 0).Add(-time.Hour)}, ""},
				{Filter{Since: time.Date(1000, 1, 1, 0, 0, 0, 0, time.UTC)}, "t8 t7 t6 t5 t4 t3 t2 t1 t0"},
				{Filter{Until: time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC)}, "t8 t7 t6 t5 t4 t3 t2 t1 t0"},
			} {
				if evs, _ := list(t, s, tc.f); targets(evs) != tc.want {
					t.Errorf("%+v: got %q, want %q", tc.f, targets(evs), tc.want)
				}
			}
			// Filtered pages continue where they ended, bounds kept.
			f := Filter{Actor: "actor0", Until: base.Add(7 * time.Minute), PageSize: 2}
			evs, next := list(t, s, f)
			f.After = next
			evs2, next2 := list(t, s, f)
			if targets(evs) != "t6 t4" || targets(evs2) != "t2 t0" || next2 != "" {
				t.Fatalf("filtered pages %q, %q (next %q)", targets(evs), targets(evs2), next2)
			}
			// A token newer than Until does not lift the bound.
			first, _ := list(t, s, Filter{PageSize: 1})
			if evs, _ := list(t, s, Filter{After: first[0].ID, Until: base.Add(time.Minute)}); targets(evs) != "t1 t0" {
				t.Fatalf("token before until: %q", targets(evs))
			}
		})
		t.Run("BadFilter", func(t *testing.T) {
			s := NewStore(open(t), DefaultRetention)
			for _, f := range []Filter{{PageSize: -1}, {PageSize: MaxPageSize + 1}, {After: "nope"}, {After: strings.Repeat("g", 16) + "-" + strings.Repeat("0", 16)},
				{After: "../../x"}, {After: strings.Repeat("0", 33)}} {
				if _, _, err := s.List(ctx, f); !errors.Is(err, ErrBadFilter) {
					t.Errorf("%+v: %v, want ErrBadFilter", f, err)
				}
			}
		})
		t.Run("KeepCount", func(t *testing.T) {
			s := NewStore(open(t), Retention{Keep: 3})
			seed(t, s, 7)
			n, err := s.Prune(ctx)
			if err != nil || n != 4 {
				t.Fatalf("Prune: %d, %v; want 4 deleted", n, err)
			}
			if evs, _ := list(t, s, Filter{}); targets(evs) != "t6 t5 t4" {
				t.Fatalf("kept %q", targets(evs))
			}
			if n, err := s.Prune(ctx); err != nil || n != 0 {
				t.Fatalf("second Prune: %d, %v", n, err)
			}
		})
		t.Run("KeepCountOverChunks", func(t *testing.T) {
			s := NewStore(open(t), Retention{Keep: scanChunk + 10})
			seed(t, s, scanChunk+25)
			if n, err := s.Prune(ctx); err != nil || n != 15 {
				t.Fatalf("Prune: %d, %v; want 15 deleted", n, err)
			}
			evs, _ := list(t, s, Filter{PageSize: MaxPageSize, Since: base.Add(14 * time.Minute), Until: base.Add(16 * time.Minute)})
			if targets(evs) != "t16 t15" {
				t.Fatalf("around the cut: %q", targets(evs))
			}
		})
		t.Run("KeepAge", func(t *testing.T) {
			s := NewStore(open(t), Retention{Keep: 100, For: time.Hour})
			seed(t, s, 5)
			s.now = func() time.Time { return base.Add(time.Hour + 2*time.Minute + 30*time.Second) }
			if n, err := s.Prune(ctx); err != nil || n != 3 {
				t.Fatalf("Prune: %d, %v; want 3 deleted", n, err)
			}
			if evs, _ := list(t, s, Filter{}); targets(evs) != "t4 t3" {
				t.Fatalf("kept %q", targets(evs))
			}
		})
		t.Run("KeepNone", func(t *testing.T) {
			s := NewStore(open(t), DefaultRetention)
			seed(t, s, 3)
			s.ret = Retention{}
			if n, err := s.Prune(ctx); err != nil || n != 3 {
				t.Fatalf("Prune with Keep 0: %d, %v", n, err)
			}
			seed(t, s, 3)
			if evs, _ := list(t, s, Filter{}); len(evs) != 0 {
				t.Fatalf("Keep 0 stored %q", targets(evs))
			}
		})
		t.Run("Bounded", func(t *testing.T) {
			s := NewStore(open(t), DefaultRetention)
			long := strings.Repeat("é", 600)
			var attrs []KV
			for i := range 40 {
				attrs = append(attrs, KV{K: fmt.Sprint("k", i), V: long})
			}
			if err := s.Append(ctx, []Stored{{Time: base, Action: "a", Target: long, Attrs: attrs}}); err != nil {
				t.Fatal(err)
			}
			evs, _ := list(t, s, Filter{})
			if len(evs) != 1 || len(evs[0].Target) > maxField+len("…") || len(evs[0].Attrs) != maxAttrs || !strings.HasSuffix(evs[0].Target, "…") {
				t.Fatalf("not bounded: target %d bytes, %d attrs", len(evs[0].Target), len(evs[0].Attrs))
			}
		})
	})
}

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
	if err := s.Append(context.Background(), []Stored{{Time: base, Action: "a"}}); err != nil {
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
