package audit

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"fris.dev/pkg/identity"
)

// TestKeepClasses: each recorded event is stored in its class, and a
// flood of anonymous refusals is stored as counts (one record per action,
// outcome, address and minute; an IPv6 address's /64), so that with a
// small -audit-keep the operator's and the signed-in user's events stay.
// The audit log has every event; the metric counts the folded ones.
func TestKeepClasses(t *testing.T) {
	var logBuf bytes.Buffer
	l := New(&logBuf, "auth")
	reg := prometheus.NewRegistry()
	l.RegisterMetrics(reg)
	s := NewStore(boltStore(t), Retention{Keep: 20})
	stop := l.Keep(s, nil)
	defer stop()

	anon := func(addr string) context.Context {
		return incoming(identity.Identity{}, identity.KeyClientAddr, addr)
	}
	bad := status.Error(codes.InvalidArgument, "no payload")
	l.Record(anon("203.0.113.1"), Event{Action: "auth.admin.CreateUser", Actor: ActorAdmin, Class: ClassAdmin})
	l.Record(incoming(identity.Identity{Subject: "42"}, identity.KeyClientAddr, "203.0.113.2"), Event{Action: "broker.inquiry.create", Err: status.Error(codes.PermissionDenied, "no")})
	l.Record(anon("203.0.113.3"), Event{Action: "auth.token.authorization_code", Actor: "43", Class: ClassSignedIn})
	l.Record(anon("203.0.113.4"), Event{Action: "auth.register", Actor: "44"})
	// 300 refusals from two IPv4 hosts and from four addresses of one
	// IPv6 /64, the Actor a client id they named: anonymous all the same.
	addrs := []string{"198.51.100.1", "198.51.100.2", "2001:db8:1:2::1", "2001:db8:1:2::2", "2001:db8:1:2:aaaa::3", "2001:db8:1:2:ffff:ffff:ffff:ffff"}
	for i := range 300 {
		l.Record(anon(addrs[i%len(addrs)]), Event{Action: "auth.token.none", Actor: "some-client", Err: bad})
	}
	l.Record(anon("198.51.100.1"), Event{Action: "auth.login", Err: status.Error(codes.Unauthenticated, "wrong password")})
	stop()

	if n := strings.Count(logBuf.String(), `"log":"audit"`); n != 305 {
		t.Errorf("the audit log has %d lines, want 305", n)
	}
	if got := testutil.ToFloat64(l.folded.WithLabelValues("auth.token.none")); got != 300 {
		t.Errorf("folded auth.token.none: %v, want 300", got)
	}
	if got := testutil.ToFloat64(l.folded.WithLabelValues("auth.login")); got != 1 {
		t.Errorf("folded auth.login: %v, want 1", got)
	}
	byClass := func(class string) []Stored {
		evs, _, err := s.List(context.Background(), Filter{Class: class, PageSize: MaxPageSize})
		if err != nil {
			t.Fatal(err)
		}
		return evs
	}
	if evs := byClass(ClassAdmin); len(evs) != 1 || evs[0].Action != "auth.admin.CreateUser" {
		t.Errorf("admin: %+v", evs)
	}
	if evs := byClass(ClassSignedIn); len(evs) != 2 {
		t.Errorf("signed-in: %+v", evs)
	}
	// The minute may turn during the loop: count by address.
	counts := map[string]int{}
	var register bool
	for _, e := range byClass(ClassAnonymous) {
		switch e.Action {
		case "auth.token.none":
			if e.Actor != "anonymous" || e.Outcome != OutcomeFailed || e.Reason != "InvalidArgument: no payload" || e.Last.IsZero() || !e.Time.Equal(e.Time.Truncate(time.Minute)) {
				t.Errorf("fold %+v", e)
			}
			counts[e.ClientAddr] += e.Count
		case "auth.register":
			register = e.Count == 0 && e.Actor == "44"
		}
	}
	if want := map[string]int{"198.51.100.1": 50, "198.51.100.2": 50, "2001:db8:1:2::/64": 200}; !equalCounts(counts, want) {
		t.Errorf("folded counts %v, want %v", counts, want)
	}
	if !register {
		t.Errorf("the registration is not stored on its own")
	}
}

func equalCounts(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestKeepAnonymousQueue: anonymous events queue only while the queue has
// room to spare, which is left for the other classes'.
func TestKeepAnonymousQueue(t *testing.T) {
	k := &keeper{queue: make(chan Stored, queueLen)}
	for range queueLen {
		k.add(Stored{Class: ClassAnonymous})
	}
	if len(k.queue) != anonQueue || k.dropped.Load() != queueLen-anonQueue {
		t.Fatalf("queued %d, dropped %d", len(k.queue), k.dropped.Load())
	}
	k.add(Stored{Class: ClassAdmin})
	if len(k.queue) != anonQueue+1 {
		t.Fatalf("an admin event was not queued")
	}
}

// TestFoldBounds: the folds gathered between two flushes are bounded;
// events of further addresses are counted together.
func TestFoldBounds(t *testing.T) {
	var f folder
	at := time.Date(2026, 3, 1, 12, 0, 30, 0, time.UTC)
	for i := range maxFolds + 10 {
		f.add(Stored{Time: at, Action: "a", Outcome: OutcomeDenied, ClientAddr: fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255)})
	}
	folds := f.take()
	if len(folds) > maxFolds+1 {
		t.Fatalf("%d folds", len(folds))
	}
	total := 0
	for _, fd := range folds {
		total += fd.Count
		if !fd.Minute.Equal(at.Truncate(time.Minute)) {
			t.Errorf("minute %v", fd.Minute)
		}
	}
	if total != maxFolds+10 {
		t.Fatalf("counted %d, want %d", total, maxFolds+10)
	}
	if len(f.take()) != 0 {
		t.Fatal("take did not start anew")
	}
}

func TestFoldAddr(t *testing.T) {
	for in, want := range map[string]string{
		"198.51.100.7":         "198.51.100.7",
		"2001:db8:1:2:3:4:5:6": "2001:db8:1:2::/64",
		"::ffff:192.0.2.1":     "::ffff:192.0.2.1",
		"":                     "",
		"not an address":       "not an address",
	} {
		if got := foldAddr(in); got != want {
			t.Errorf("foldAddr(%q) = %q, want %q", in, got, want)
		}
	}
}
