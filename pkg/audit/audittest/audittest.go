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

// SeedClass is Seed for events of class.
func SeedClass(t *testing.T, s *audit.Store, class string, at time.Time, n int, target string) {
	t.Helper()
	var evs []audit.Stored
	for i := range n {
		evs = append(evs, audit.Stored{Time: at.Add(time.Duration(i) * time.Minute), Action: "svc." + class, Actor: "a",
			Target: fmt.Sprintf("%s%d", target, i), Outcome: audit.OutcomeOK, Class: class})
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
	t.Run("Classes", func(t *testing.T) {
		s := audit.NewStore(open(t), audit.DefaultRetention)
		// Interleaved in time: admin at :00 :03, signed-in at :01 :04,
		// anonymous at :02 :05.
		SeedClass(t, s, audit.ClassAdmin, base, 1, "ad")
		SeedClass(t, s, audit.ClassSignedIn, base.Add(time.Minute), 1, "si")
		SeedClass(t, s, audit.ClassAnonymous, base.Add(2*time.Minute), 1, "an")
		SeedClass(t, s, audit.ClassAdmin, base.Add(3*time.Minute), 1, "ad1-")
		SeedClass(t, s, audit.ClassSignedIn, base.Add(4*time.Minute), 1, "si1-")
		SeedClass(t, s, "", base.Add(5*time.Minute), 1, "none")
		evs, _ := list(t, s, audit.Filter{})
		if got := Targets(evs); got != "none0 si1-0 ad1-0 an0 si0 ad0" {
			t.Fatalf("merged: %q", got)
		}
		var classes []string
		for _, e := range evs {
			classes = append(classes, e.Class)
		}
		if got := strings.Join(classes, " "); got != "anonymous signed-in admin anonymous signed-in admin" {
			t.Fatalf("classes read back %q", got)
		}
		for class, want := range map[string]string{audit.ClassAdmin: "ad1-0 ad0", audit.ClassSignedIn: "si1-0 si0", audit.ClassAnonymous: "none0 an0"} {
			if evs, _ := list(t, s, audit.Filter{Class: class}); Targets(evs) != want {
				t.Errorf("class %s: %q, want %q", class, Targets(evs), want)
			}
		}
		// Pages continue across the classes.
		var pages []string
		after := ""
		for {
			evs, next := list(t, s, audit.Filter{PageSize: 4, After: after})
			pages = append(pages, Targets(evs))
			if next == "" {
				break
			}
			after = next
		}
		if got := strings.Join(pages, " | "); got != "none0 si1-0 ad1-0 an0 | si0 ad0" {
			t.Fatalf("pages %q", got)
		}
		if evs, _ := list(t, s, audit.Filter{Since: base.Add(2 * time.Minute), Until: base.Add(4 * time.Minute)}); Targets(evs) != "si1-0 ad1-0 an0" {
			t.Fatalf("since/until over classes: %q", Targets(evs))
		}
		if _, _, err := s.List(ctx, audit.Filter{Class: "root"}); !errors.Is(err, audit.ErrBadFilter) {
			t.Fatalf("unknown class: %v", err)
		}
	})
	t.Run("KeepPerClass", func(t *testing.T) {
		// No number of newer anonymous events removes an older admin or
		// signed-in one: the count bound is each class's.
		s := audit.NewStore(open(t), audit.Retention{Keep: 3})
		SeedClass(t, s, audit.ClassAdmin, base, 2, "ad")
		SeedClass(t, s, audit.ClassSignedIn, base.Add(time.Minute), 5, "si")
		SeedClass(t, s, audit.ClassAnonymous, base.Add(time.Hour), 300, "an")
		if n, err := s.Prune(ctx); err != nil || n != 2+297 {
			t.Fatalf("Prune: %d, %v; want 299 deleted", n, err)
		}
		for class, want := range map[string]string{audit.ClassAdmin: "ad1 ad0", audit.ClassSignedIn: "si4 si3 si2", audit.ClassAnonymous: "an299 an298 an297"} {
			if evs, _ := list(t, s, audit.Filter{Class: class}); Targets(evs) != want {
				t.Errorf("class %s kept %q, want %q", class, Targets(evs), want)
			}
		}
	})
	t.Run("Folds", func(t *testing.T) {
		db := open(t)
		s := audit.NewStore(db, audit.DefaultRetention)
		minute := base.Add(10 * time.Minute)
		fold := audit.Fold{Action: "auth.token.none", Outcome: audit.OutcomeFailed, ClientAddr: "2001:db8:1:2::/64", Minute: minute,
			Reason: "InvalidArgument: no payload", Count: 3, Last: minute.Add(10 * time.Second)}
		other := fold
		other.ClientAddr, other.Count = "192.0.2.7", 1
		SeedClass(t, s, audit.ClassAdmin, minute.Add(-time.Minute), 1, "ad")
		if n, err := s.AddFolds(ctx, []audit.Fold{fold, other}); err != nil || n != 2 {
			t.Fatalf("AddFolds: %d created, %v", n, err)
		}
		// More of the same minute, as another replica adds them: one
		// record, counts added; the newest time kept.
		more := fold
		more.Count, more.Last, more.Reason = 4, minute.Add(5*time.Second), "other reason"
		if n, err := audit.NewStore(db, audit.DefaultRetention).AddFolds(ctx, []audit.Fold{more}); err != nil || n != 0 {
			t.Fatalf("AddFolds again: %d created, %v", n, err)
		}
		next := fold
		next.Minute = minute.Add(time.Minute)
		if _, err := s.AddFolds(ctx, []audit.Fold{next}); err != nil {
			t.Fatal(err)
		}
		evs, _ := list(t, s, audit.Filter{Class: audit.ClassAnonymous})
		if len(evs) != 3 {
			t.Fatalf("%d records, want 3", len(evs))
		}
		var got *audit.Stored
		for i, e := range evs {
			if e.ClientAddr == fold.ClientAddr && e.Time.Equal(minute) {
				got = &evs[i]
			}
		}
		if got == nil || got.Count != 7 || got.Action != fold.Action || got.Outcome != audit.OutcomeFailed || got.Actor != "anonymous" ||
			got.Reason != fold.Reason || !got.Last.Equal(fold.Last) || got.Class != audit.ClassAnonymous {
			t.Fatalf("folded record %+v", got)
		}
		if !evs[0].Time.Equal(next.Minute) || evs[0].Count != 3 {
			t.Fatalf("the next minute's record %+v", evs[0])
		}
		// The folds are listed with the other classes' events by time.
		if all, _ := list(t, s, audit.Filter{}); len(all) != 4 || all[3].Class != audit.ClassAdmin {
			t.Fatalf("all: %+v", all)
		}
	})
	t.Run("FoldsConcurrent", func(t *testing.T) {
		// Writers on several replicas add to one record: none of their
		// counts is lost.
		db := open(t)
		fold := audit.Fold{Action: "auth.login", Outcome: audit.OutcomeDenied, ClientAddr: "192.0.2.1", Minute: base, Count: 1, Last: base}
		const writers, each = 4, 10
		errs := make(chan error, writers)
		for range writers {
			go func() {
				s := audit.NewStore(db, audit.DefaultRetention)
				for range each {
					if _, err := s.AddFolds(ctx, []audit.Fold{fold}); err != nil {
						errs <- err
						return
					}
				}
				errs <- nil
			}()
		}
		for range writers {
			if err := <-errs; err != nil {
				t.Fatal(err)
			}
		}
		evs, _ := list(t, audit.NewStore(db, audit.DefaultRetention), audit.Filter{})
		if len(evs) != 1 || evs[0].Count != writers*each {
			t.Fatalf("records %+v, want one of count %d", evs, writers*each)
		}
	})
	t.Run("Migrate", func(t *testing.T) {
		// Events stored before the classes move into theirs at the
		// first Prune.
		db := open(t)
		old := map[string]audit.Stored{
			"7000000000000003-0000000000000001": {Time: base, Action: "auth.admin.CreateUser", Actor: audit.ActorAdmin, Target: "old-admin"},
			"7000000000000002-0000000000000002": {Time: base, Action: "auth.login", Actor: "7", Target: "old-signed-in"},
			"7000000000000001-0000000000000003": {Time: base, Action: "auth.token.none", Actor: "anonymous", Target: "old-anonymous"},
		}
		if err := db.Update(ctx, func(tx kv.Tx) error {
			for id, e := range old {
				if err := kv.PutJSON(tx, "audit/"+id, e, 0); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		s := audit.NewStore(db, audit.Retention{Keep: 100}) // no age bound: the ids are of 2006
		if _, err := s.Prune(ctx); err != nil {
			t.Fatal(err)
		}
		evs, _ := list(t, s, audit.Filter{})
		if Targets(evs) != "old-anonymous old-signed-in old-admin" {
			t.Fatalf("after the move: %q", Targets(evs))
		}
		for _, e := range evs {
			if want := strings.TrimPrefix(e.Target, "old-"); e.Class != want {
				t.Errorf("%s moved to %s", e.Target, e.Class)
			}
		}
		if left, err := db.Scan(ctx, "audit/7", "", 0); err != nil || len(left) != 0 {
			t.Fatalf("old keys left: %v, %v", left, err)
		}
	})
}
