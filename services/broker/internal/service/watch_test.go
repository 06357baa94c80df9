package service

import (
	"context"
	"slices"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	brokerv1 "fris.dev/proto/broker/v1"
)

// watch runs WatchReplies of author on s and returns what it sends.
func watch(t *testing.T, s *Service, id, author string) (<-chan *brokerv1.ListRepliesResponse, <-chan error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	got := make(chan *brokerv1.ListRepliesResponse, 16)
	done := make(chan error, 1)
	go func() {
		done <- s.WatchReplies(ctx, id, author, func(r *brokerv1.ListRepliesResponse) error { got <- r; return nil })
	}()
	return got, done
}

func next(t *testing.T, got <-chan *brokerv1.ListRepliesResponse, within time.Duration) *brokerv1.ListRepliesResponse {
	t.Helper()
	select {
	case r := <-got:
		return r
	case <-time.After(within):
		t.Fatalf("no update within %v", within)
		return nil
	}
}

// TestWatchReplies: the watcher gets the current replies, then a reply
// stored through its own replica at once (its re-read interval is an
// hour), and one stored through another replica within its re-read
// interval; nothing is sent when nothing changed; another author's watch
// finds no inquiry.
func TestWatchReplies(t *testing.T) {
	rs, _, _ := replicas(t, 2, ModeApproval)
	a, b := rs[0], rs[1]
	a.cfg.WatchInterval = time.Hour
	b.cfg.WatchInterval = 50 * time.Millisecond
	ctx := context.Background()
	var banks []context.Context
	for _, site := range []string{"s1", "s2"} {
		email := "bank@" + site + ".example"
		tok, _, err := a.Register(ctx, email)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := (Admin{Service: a}).ApproveBank(ctx, &brokerv1.ApproveBankRequest{Email: email, SiteId: site}); err != nil {
			t.Fatal(err)
		}
		banks = append(banks, withAuth("Samply "+tok))
	}
	in, err := a.CreateInquiry(ctx, "r1", newContent("s1", "s2"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.ReleaseInquiry(ctx, in.GetId(), "r1"); err != nil {
		t.Fatal(err)
	}
	onA, _ := watch(t, a, in.GetId(), "r1")
	onB, _ := watch(t, b, in.GetId(), "r1")
	for _, got := range []<-chan *brokerv1.ListRepliesResponse{onA, onB} {
		if r := next(t, got, 2*time.Second); len(r.GetReplies()) != 0 || r.GetTotal() != 0 {
			t.Fatalf("first update = %v", r)
		}
	}
	if err := a.Reply(banks[0], in.GetId(), "bank@s1.example", []byte("7"), "text/plain"); err != nil {
		t.Fatal(err)
	}
	for name, got := range map[string]<-chan *brokerv1.ListRepliesResponse{"same replica": onA, "other replica": onB} {
		r := next(t, got, 2*time.Second)
		if r.GetTotal() != 7 || len(r.GetSites()) != 1 || r.GetSites()[0].GetSiteId() != "s1" {
			t.Fatalf("%s: update = %v", name, r)
		}
	}
	// Several re-reads find nothing new: nothing is sent.
	time.Sleep(200 * time.Millisecond)
	if len(onB) != 0 {
		t.Fatalf("unchanged replies sent again: %v", <-onB)
	}
	if err := b.Reply(banks[1], in.GetId(), "bank@s2.example", []byte("5"), "text/plain"); err != nil {
		t.Fatal(err)
	}
	if r := next(t, onB, 2*time.Second); r.GetTotal() != 12 || len(r.GetSites()) != 2 {
		t.Fatalf("second reply: %v", r)
	}

	_, done := watch(t, a, in.GetId(), "someone-else")
	select {
	case err := <-done:
		if code(err) != codes.NotFound {
			t.Fatalf("another author's watch: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("another author's watch did not end")
	}
	if _, done := watch(t, a, "x1", "r1"); code(<-done) != codes.InvalidArgument {
		t.Fatal("a malformed id is not refused")
	}
	sites, err := a.Sites(ctx)
	if err != nil || len(sites) != len(testSites) {
		t.Fatalf("sites = %v, %v", sites, err)
	}
	var active []string
	for _, site := range sites {
		if site.GetHasActiveBank() {
			active = append(active, site.GetId())
		}
	}
	if !slices.Equal(active, []string{"s1", "s2"}) {
		t.Fatalf("sites with an active bank = %v", active)
	}
}

// TestWatchEndsOnShutdown: closing Done ends an open watch.
func TestWatchEndsOnShutdown(t *testing.T) {
	rs, _, _ := replicas(t, 1, ModeApproval)
	s := rs[0]
	done := make(chan struct{})
	s.cfg.Done, s.cfg.WatchInterval = done, time.Hour
	in, err := s.CreateInquiry(context.Background(), "r1", newContent("s1"))
	if err != nil {
		t.Fatal(err)
	}
	got, ended := watch(t, s, in.GetId(), "r1")
	next(t, got, 2*time.Second)
	close(done)
	select {
	case err := <-ended:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the watch outlived the shutdown")
	}
}

// TestNotifierBounded: watches beyond the cap are refused, and a
// cancelled one frees its place.
func TestNotifierBounded(t *testing.T) {
	var w notifier
	var cancels []func()
	for range MaxWatchers {
		_, c, err := w.subscribe("1")
		if err != nil {
			t.Fatal(err)
		}
		cancels = append(cancels, c)
	}
	if _, _, err := w.subscribe("2"); code(err) != codes.ResourceExhausted {
		t.Fatalf("over the cap: %v", err)
	}
	cancels[0]()
	cancels[0]() // twice is harmless
	if _, _, err := w.subscribe("2"); err != nil {
		t.Fatalf("after a cancel: %v", err)
	}
}
