// Package audittest is the conformance suite of the audit event store
// (audit.Store): pkg/audit runs it on every backend, and each service with
// partitions on its own partitioned store, so the events' keys are known
// to fit every service's partitions.
package audittest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"fris.dev/pkg/audit"
	"fris.dev/pkg/kv"
)

// base is the events' clock in the suite.
var base = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// Seed appends n events a minute apart from at, the i-th (from 0) at
// at+i min, with target t<i>, acting as actor<i%2>, action "svc.a<i%3>",
// outcomes ok, denied, failed in turn.
func Seed(t *testing.T, s *audit.Store, at time.Time, n int) {
	t.Helper()
	var evs []audit.Stored
	outcomes := []string{audit.OutcomeOK, audit.OutcomeDenied, audit.OutcomeFailed}
	for i := range n {
		evs = append(evs, audit.Stored{Time: at.Add(time.Duration(i) * time.Minute), Action: fmt.Sprintf("svc.a%d", i%3),
			Actor: fmt.Sprintf("actor%d", i%2), Target: fmt.Sprintf("t%d", i), Outcome: outcomes[i%3],
			Attrs: []audit.KV{{K: "email", V: "x@example.org"}}})
	}
	if err := s.Append(context.Background(), evs); err != nil {
		t.Fatal(err)
	}
}

// Targets are the events' targets in the order listed.
func Targets(evs []audit.Stored) string {
	var out []string
	for _, e := range evs {
		out = append(out, e.Target)
	}
	return strings.Join(out, " ")
}

func list(t *testing.T, s *audit.Store, f audit.Filter) ([]audit.Stored, string) {
	t.Helper()
	evs, next, err := s.List(context.Background(), f)
	if err != nil {
		t.Fatalf("List(%+v): %v", f, err)
	}
	return evs, next
}

// Run holds the store on the key spaces open returns to its contract:
// newest first, full pages with a continuation, filters and time bounds,
// the retention by count and by age.
func Run(t *testing.T, open func(t *testing.T) kv.Store) {
	ctx := context.Background()
	t.Run("NewestFirstAndPaged", func(t *testing.T) {
		s := audit.NewStore(open(t), audit.DefaultRetention)
		Seed(t, s, base, 5)
		evs, next := list(t, s, audit.Filter{})
		if got := Targets(evs); got != "t4 t3 t2 t1 t0" || next != "" {
			t.Fatalf("all: %q next %q", got, next)
		}
		if evs[0].Action != "svc.a1" || evs[0].Actor != "actor0" || evs[0].Outcome != audit.OutcomeDenied ||
			len(evs[0].Attrs) != 1 || evs[0].Attrs[0] != (audit.KV{K: "email", V: "x@example.org"}) || !evs[0].Time.Equal(base.Add(4*time.Minute)) {
			t.Fatalf("event read back as %+v", evs[0])
		}
		var pages []string
		after := ""
		for range 5 {
			evs, next := list(t, s, audit.Filter{PageSize: 2, After: after})
			pages = append(pages, Targets(evs))
			if next != "" && len(evs) != 2 {
				t.Fatalf("a page with a continuation must be full: %q", Targets(evs))
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
		if evs, next := list(t, s, audit.Filter{PageSize: 5}); len(evs) != 5 || next != "" {
			t.Fatalf("page of 5 of 5: %d events, next %q", len(evs), next)
		}
		// An event's id continues after it.
		if evs, _ := list(t, s, audit.Filter{After: evs[1].ID}); Targets(evs) != "t2 t1 t0" {
			t.Fatalf("after t3's id: %q", Targets(evs))
		}
	})
	t.Run("Filters", func(t *testing.T) {
		s := audit.NewStore(open(t), audit.DefaultRetention)
		Seed(t, s, base, 9)
		for _, tc := range []struct {
			f    audit.Filter
			want string
		}{
			{audit.Filter{Actor: "actor1"}, "t7 t5 t3 t1"},
			{audit.Filter{ActionPrefix: "svc.a2"}, "t8 t5 t2"},
			{audit.Filter{ActionPrefix: "svc."}, "t8 t7 t6 t5 t4 t3 t2 t1 t0"},
			{audit.Filter{ActionPrefix: "other."}, ""},
			{audit.Filter{Outcome: audit.OutcomeFailed}, "t8 t5 t2"},
			{audit.Filter{Outcome: audit.OutcomeDenied, Actor: "actor0"}, "t4"},
			{audit.Filter{Since: base.Add(6 * time.Minute)}, "t8 t7 t6"},
			{audit.Filter{Until: base.Add(2 * time.Minute)}, "t2 t1 t0"},
			{audit.Filter{Since: base.Add(3 * time.Minute), Until: base.Add(5 * time.Minute)}, "t5 t4 t3"},
			{audit.Filter{Since: base.Add(3*time.Minute + time.Second), Until: base.Add(5*time.Minute - time.Second)}, "t4"},
			{audit.Filter{Until: base.Add(-time.Hour)}, ""},
			{audit.Filter{Since: base.Add(time.Hour)}, ""},
			{audit.Filter{Until: time.Unix(0, 0).Add(-time.Hour)}, ""},
			{audit.Filter{Since: time.Date(1000, 1, 1, 0, 0, 0, 0, time.UTC)}, "t8 t7 t6 t5 t4 t3 t2 t1 t0"},
			{audit.Filter{Until: time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC)}, "t8 t7 t6 t5 t4 t3 t2 t1 t0"},
		} {
			if evs, _ := list(t, s, tc.f); Targets(evs) != tc.want {
				t.Errorf("%+v: got %q, want %q", tc.f, Targets(evs), tc.want)
			}
		}
		// Filtered pages continue where they ended, bounds kept.
		f := audit.Filter{Actor: "actor0", Until: base.Add(7 * time.Minute), PageSize: 2}
		evs, next := list(t, s, f)
		f.After = next
		evs2, next2 := list(t, s, f)
		if Targets(evs) != "t6 t4" || Targets(evs2) != "t2 t0" || next2 != "" {
			t.Fatalf("filtered pages %q, %q (next %q)", Targets(evs), Targets(evs2), next2)
		}
		// A token newer than Until does not lift the bound.
		first, _ := list(t, s, audit.Filter{PageSize: 1})
		if evs, _ := list(t, s, audit.Filter{After: first[0].ID, Until: base.Add(time.Minute)}); Targets(evs) != "t1 t0" {
			t.Fatalf("token before until: %q", Targets(evs))
		}
	})
	t.Run("BadFilter", func(t *testing.T) {
		s := audit.NewStore(open(t), audit.DefaultRetention)
		for _, f := range []audit.Filter{{PageSize: -1}, {PageSize: audit.MaxPageSize + 1}, {After: "nope"},
			{After: strings.Repeat("g", 16) + "-" + strings.Repeat("0", 16)}, {After: "../../x"}, {After: strings.Repeat("0", 33)}} {
			if _, _, err := s.List(ctx, f); !errors.Is(err, audit.ErrBadFilter) {
				t.Errorf("%+v: %v, want ErrBadFilter", f, err)
			}
		}
	})
	t.Run("KeepCount", func(t *testing.T) {
		s := audit.NewStore(open(t), audit.Retention{Keep: 3})
		Seed(t, s, base, 7)
		n, err := s.Prune(ctx)
		if err != nil || n != 4 {
			t.Fatalf("Prune: %d, %v; want 4 deleted", n, err)
		}
		if evs, _ := list(t, s, audit.Filter{}); Targets(evs) != "t6 t5 t4" {
			t.Fatalf("kept %q", Targets(evs))
		}
		if n, err := s.Prune(ctx); err != nil || n != 0 {
			t.Fatalf("second Prune: %d, %v", n, err)
		}
	})
	t.Run("KeepCountOverChunks", func(t *testing.T) {
		// More than a listing reads at a time (256).
		s := audit.NewStore(open(t), audit.Retention{Keep: 290})
		Seed(t, s, base, 305)
		if n, err := s.Prune(ctx); err != nil || n != 15 {
			t.Fatalf("Prune: %d, %v; want 15 deleted", n, err)
		}
		evs, _ := list(t, s, audit.Filter{PageSize: audit.MaxPageSize, Since: base.Add(14 * time.Minute), Until: base.Add(16 * time.Minute)})
		if Targets(evs) != "t16 t15" {
			t.Fatalf("around the cut: %q", Targets(evs))
		}
	})
	t.Run("KeepAge", func(t *testing.T) {
		s := audit.NewStore(open(t), audit.Retention{Keep: 100, For: time.Hour})
		// Five events a minute apart, 61.5 to 57.5 minutes old: the
		// oldest two are over the hour.
		Seed(t, s, time.Now().Add(-61*time.Minute-30*time.Second), 5)
		if n, err := s.Prune(ctx); err != nil || n != 2 {
			t.Fatalf("Prune: %d, %v; want 2 deleted", n, err)
		}
		if evs, _ := list(t, s, audit.Filter{}); Targets(evs) != "t4 t3 t2" {
			t.Fatalf("kept %q", Targets(evs))
		}
	})
	t.Run("KeepNone", func(t *testing.T) {
		db := open(t)
		Seed(t, audit.NewStore(db, audit.DefaultRetention), base, 3)
		s := audit.NewStore(db, audit.Retention{})
		if n, err := s.Prune(ctx); err != nil || n != 3 {
			t.Fatalf("Prune with Keep 0: %d, %v", n, err)
		}
		Seed(t, s, base, 3)
		if evs, _ := list(t, audit.NewStore(db, audit.DefaultRetention), audit.Filter{}); len(evs) != 0 {
			t.Fatalf("Keep 0 stored %q", Targets(evs))
		}
	})
	t.Run("Bounded", func(t *testing.T) {
		s := audit.NewStore(open(t), audit.DefaultRetention)
		long := strings.Repeat("é", 600)
		var attrs []audit.KV
		for i := range 40 {
			attrs = append(attrs, audit.KV{K: fmt.Sprint("k", i), V: long})
		}
		if err := s.Append(ctx, []audit.Stored{{Time: base, Action: "a", Target: long, Attrs: attrs}}); err != nil {
			t.Fatal(err)
		}
		evs, _ := list(t, s, audit.Filter{})
		if len(evs) != 1 || len(evs[0].Target) > 520 || len(evs[0].Attrs) != 32 || !strings.HasSuffix(evs[0].Target, "…") {
			t.Fatalf("not bounded: target %d bytes, %d attrs", len(evs[0].Target), len(evs[0].Attrs))
		}
	})
}
