package audit

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"

	"fris.dev/pkg/identity"
	"fris.dev/pkg/kv"
	auditv1 "fris.dev/proto/audit/v1"
)

// base is seed's start.
var base = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// seed is audittest.Seed (which this package's own tests cannot import)
// from base: n events a minute apart, target t<i>, actor<i%2>, action
// svc.a<i%3>, outcomes ok, denied, failed in turn.
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

func boltStore(t *testing.T) kv.Store {
	t.Helper()
	db, err := kv.OpenBolt(filepath.Join(t.TempDir(), "s.db"), kv.BoltOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// TestKeep: recorded events reach the store as the log has them, with
// the outcome told apart (denied: refused to the caller); the stop
// writes what is queued.
func TestKeep(t *testing.T) {
	var logBuf bytes.Buffer
	l := New(&logBuf, "auth")
	s := NewStore(boltStore(t), DefaultRetention)
	stop := l.Keep(s, nil)
	ctx := incoming(identity.Identity{Subject: "42", Client: "fris-explorer"}, identity.KeyClientAddr, "203.0.113.9", "x-request-id", "r1")
	l.Record(ctx, Event{Action: "auth.admin.SetUserDisabled", Target: "ada@lab.example", Attrs: []slog.Attr{slog.String("email", "ada@lab.example"), slog.Bool("disabled", true)}})
	l.Record(ctx, Event{Action: "auth.login", Actor: "anonymous", Err: status.Error(codes.Unauthenticated, "wrong password")})
	l.Record(ctx, Event{Action: "auth.register", Err: status.Error(codes.InvalidArgument, "bad email")})
	l.Record(ctx, Event{Action: "auth.token.password", Err: errors.New("disk on fire")})
	stop()
	stop() // twice is harmless

	evs, _, err := s.List(context.Background(), Filter{})
	if err != nil || len(evs) != 4 {
		t.Fatalf("stored %d events, %v", len(evs), err)
	}
	byAction := map[string]Stored{}
	for _, e := range evs {
		byAction[e.Action] = e
	}
	d := byAction["auth.admin.SetUserDisabled"]
	if d.Actor != "42" || d.Client != "fris-explorer" || d.Target != "ada@lab.example" || d.ClientAddr != "203.0.113.9" || d.RequestID != "r1" ||
		d.Outcome != OutcomeOK || d.Reason != "" || len(d.Attrs) != 2 || d.Attrs[1] != (KV{K: "disabled", V: "true"}) || d.Time.IsZero() {
		t.Errorf("stored %+v", d)
	}
	for action, want := range map[string]string{"auth.login": OutcomeDenied, "auth.register": OutcomeFailed, "auth.token.password": OutcomeFailed} {
		if got := byAction[action]; got.Outcome != want || got.Reason == "" {
			t.Errorf("%s: outcome %q reason %q, want %q", action, got.Outcome, got.Reason, want)
		}
	}
	// The log has them all as before.
	if n := strings.Count(logBuf.String(), `"log":"audit"`); n != 4 {
		t.Errorf("%d log lines", n)
	}
	// After stop, events go to the log only.
	l.Record(ctx, Event{Action: "late"})
	if evs, _, _ := s.List(context.Background(), Filter{ActionPrefix: "late"}); len(evs) != 0 {
		t.Errorf("an event recorded after stop was stored")
	}
}

// failing is a store whose writes fail.
type failing struct{ kv.Store }

func (failing) Update(context.Context, func(kv.Tx) error) error { return kv.ErrUnavailable }

// TestKeepStoreFails: a store that fails never fails the action (Record
// returns nothing to fail with, and does not block); the service's log
// warns.
func TestKeepStoreFails(t *testing.T) {
	var logBuf, opLog bytes.Buffer
	l := New(&logBuf, "auth")
	stop := l.Keep(NewStore(failing{boltStore(t)}, DefaultRetention), slog.New(slog.NewTextHandler(&opLog, nil)))
	for range 3 * queueLen {
		l.Record(context.Background(), Event{Action: "auth.login"})
	}
	stop()
	if !strings.Contains(opLog.String(), "audit: events not stored") {
		t.Errorf("no warning:\n%s", opLog.String())
	}
	if n := strings.Count(logBuf.String(), `"log":"audit"`); n != 3*queueLen {
		t.Errorf("%d log lines, want %d", n, 3*queueLen)
	}
}

// TestKeepPrunes: the writer applies the count bound as it writes.
func TestKeepPrunes(t *testing.T) {
	l := New(&bytes.Buffer{}, "mdr")
	s := NewStore(boltStore(t), Retention{Keep: 20})
	stop := l.Keep(s, nil)
	for range 100 {
		l.Record(context.Background(), Event{Action: "mdr.admin.Import"})
	}
	stop()
	evs, _, err := s.List(context.Background(), Filter{PageSize: MaxPageSize})
	// At most a tenth of the bound beyond it waits for the next prune.
	if err != nil || len(evs) < 20 || len(evs) > 22 {
		t.Fatalf("kept %d events, %v", len(evs), err)
	}
}

// TestKeepNone: -audit-keep 0 stores nothing and deletes what an
// earlier start kept.
func TestKeepNone(t *testing.T) {
	db := boltStore(t)
	seed(t, NewStore(db, DefaultRetention), 3)
	l := New(&bytes.Buffer{}, "mdr")
	s := NewStore(db, Retention{})
	stop := l.Keep(s, nil)
	l.Record(context.Background(), Event{Action: "mdr.admin.Import"})
	stop()
	if evs, _, _ := NewStore(db, DefaultRetention).List(context.Background(), Filter{}); len(evs) != 0 {
		t.Fatalf("kept %d events", len(evs))
	}
}

// TestServer: ListEvents maps the filter and the outcomes, refuses bad
// input as InvalidArgument; GetSettings lists what it was given.
func TestServer(t *testing.T) {
	s := NewStore(boltStore(t), DefaultRetention)
	seed(t, s, 6)
	srv := &server{name: "upload", events: s, settings: []Setting{{Name: "validation", Value: "warn", Description: "values checked"}}, log: slog.New(slog.DiscardHandler)}
	ctx := context.Background()
	res, err := srv.ListEvents(ctx, &auditv1.ListEventsRequest{Outcome: auditv1.Outcome_OUTCOME_DENIED, PageSize: 1})
	if err != nil || len(res.GetEvents()) != 1 || res.GetNextPageToken() == "" {
		t.Fatalf("denied page: %v, %v", res, err)
	}
	e := res.GetEvents()[0]
	if e.GetService() != "upload" || e.GetTarget() != "t4" || e.GetOutcome() != auditv1.Outcome_OUTCOME_DENIED || e.GetId() != res.GetNextPageToken() ||
		e.GetAttrs()[0].GetKey() != "email" || !e.GetTime().AsTime().Equal(base.Add(4*time.Minute)) {
		t.Errorf("event %v", e)
	}
	res, err = srv.ListEvents(ctx, &auditv1.ListEventsRequest{Outcome: auditv1.Outcome_OUTCOME_DENIED, PageSize: 1, PageToken: res.GetNextPageToken()})
	if err != nil || len(res.GetEvents()) != 1 || res.GetEvents()[0].GetTarget() != "t1" || res.GetNextPageToken() != "" {
		t.Fatalf("second page: %v, %v", res, err)
	}
	res, err = srv.ListEvents(ctx, &auditv1.ListEventsRequest{Since: timestamppb.New(base.Add(5 * time.Minute)), Actor: "actor1", ActionPrefix: "svc.a2"})
	if err != nil || len(res.GetEvents()) != 1 || res.GetEvents()[0].GetTarget() != "t5" {
		t.Fatalf("since/actor/action: %v, %v", res, err)
	}
	for _, r := range []*auditv1.ListEventsRequest{{PageSize: 101}, {PageToken: "x"}, {Actor: strings.Repeat("a", 257)}, {PageToken: strings.Repeat("0", 65)}} {
		if _, err := srv.ListEvents(ctx, r); status.Code(err) != codes.InvalidArgument {
			t.Errorf("%v: %v", r, err)
		}
	}
	// The class filter, and a fold's class, count and last time.
	if _, err := s.AddFolds(ctx, []Fold{{Action: "auth.token.none", Outcome: OutcomeFailed, ClientAddr: "192.0.2.1", Minute: base.Add(time.Hour), Count: 9, Last: base.Add(time.Hour + time.Second)}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Append(ctx, []Stored{{Time: base, Action: "auth.admin.CreateUser", Class: ClassAdmin}}); err != nil {
		t.Fatal(err)
	}
	res, err = srv.ListEvents(ctx, &auditv1.ListEventsRequest{Class: auditv1.Class_CLASS_ADMIN})
	if err != nil || len(res.GetEvents()) != 1 || res.GetEvents()[0].GetClass() != auditv1.Class_CLASS_ADMIN || res.GetEvents()[0].GetCount() != 1 {
		t.Fatalf("admin class: %v, %v", res, err)
	}
	res, err = srv.ListEvents(ctx, &auditv1.ListEventsRequest{PageSize: 1})
	if f := res.GetEvents()[0]; err != nil || f.GetClass() != auditv1.Class_CLASS_ANONYMOUS || f.GetCount() != 9 || !f.GetLast().AsTime().Equal(base.Add(time.Hour+time.Second)) {
		t.Fatalf("fold: %v, %v", res, err)
	}
	none := &server{name: "mdr", log: slog.New(slog.DiscardHandler)}
	if res, err := none.ListEvents(ctx, &auditv1.ListEventsRequest{}); err != nil || len(res.GetEvents()) != 0 {
		t.Errorf("no store: %v, %v", res, err)
	}
	st, err := srv.GetSettings(ctx, &auditv1.GetSettingsRequest{})
	if err != nil || st.GetService() != "upload" || len(st.GetSettings()) != 1 || st.GetSettings()[0].GetValue() != "warn" {
		t.Errorf("settings: %v, %v", st, err)
	}
}

// TestFlagSettings: values as parsed, help as description; a flag that
// may hold a secret, or one that does not exist, is a programming error.
func TestFlagSettings(t *testing.T) {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.Duration("access-ttl", time.Hour, "lifetime of access tokens")
	fs.String("smtp-password", "", "SMTP password")
	if err := fs.Parse([]string{"-access-ttl", "47m", "-smtp-password", "hunter2"}); err != nil {
		t.Fatal(err)
	}
	got := FlagSettings(fs, "access-ttl")
	if len(got) != 1 || got[0] != (Setting{Name: "access-ttl", Value: "47m0s", Description: "lifetime of access tokens"}) {
		t.Errorf("settings %v", got)
	}
	for _, name := range []string{"limit-client-secret", "secret-cache-ttl"} {
		if Secretish(name) {
			t.Errorf("%s is a limit, not a secret", name)
		}
	}
	for _, name := range []string{"smtp-password", "key-secrets", "explorer-client-secret-file", "explorer-cookie-key-file", "tls-key", "redis-url", "nosuch"} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			FlagSettings(fs, name)
		}()
	}
}
