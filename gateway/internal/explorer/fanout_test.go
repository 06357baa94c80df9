package explorer

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"

	"fris.dev/gateway/internal/i18n"
	brokerv1 "fris.dev/proto/broker/v1"
)

// hubSource is a fake broker watch for the hub: every stream it opens
// receives what the test sends on items; it counts opens and renderings.
type hubSource struct {
	lang    string
	items   chan hubItem
	opens   atomic.Int32
	renders atomic.Int32
	openErr error
	// closed counts the streams whose context ended.
	closed atomic.Int32
}

type hubItem struct {
	total int32
	err   error
}

func newHubSource(lang string) *hubSource {
	return &hubSource{lang: lang, items: make(chan hubItem)}
}

func (f *hubSource) start() watchStart {
	ctx, cancel := context.WithCancel(context.Background())
	return watchStart{ctx: ctx, cancel: cancel,
		open: func(ctx context.Context) (replyStream, error) {
			f.opens.Add(1)
			if f.openErr != nil {
				return nil, f.openErr
			}
			go func() { <-ctx.Done(); f.closed.Add(1) }()
			return &hubStream{ctx: ctx, items: f.items}, nil
		},
		render: func(res *brokerv1.ListRepliesResponse) ([]byte, error) {
			f.renders.Add(1)
			if res.GetTotal() < 0 {
				return nil, errors.New("no template")
			}
			return []byte(fmt.Sprintf("%s %d", f.lang, res.GetTotal())), nil
		},
	}
}

// send hands one update to the watch (it waits until the watch reads it).
func (f *hubSource) send(n int32) { f.items <- hubItem{total: n} }

type hubStream struct {
	grpc.ClientStream
	ctx   context.Context
	items chan hubItem
}

func (s *hubStream) Recv() (*brokerv1.ListRepliesResponse, error) {
	select {
	case it := <-s.items:
		if it.err != nil {
			return nil, it.err
		}
		return &brokerv1.ListRepliesResponse{Total: it.total}, nil
	case <-s.ctx.Done():
		return nil, s.ctx.Err()
	}
}

func key(lang string) watchKey {
	return watchKey{inquiry: "1", subject: "42", lang: i18n.Lang(lang), targets: "berlin"}
}

// subscribeAll subscribes n streams to k at once, the broker sending the
// first results (total 0) while they join; each must start with them.
func subscribeAll(t *testing.T, h *resultsHub, k watchKey, f *hubSource, n int) []*subscription {
	t.Helper()
	subs := make([]*subscription, n)
	firsts := make([][]byte, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { subs[i], firsts[i], errs[i] = h.subscribe(t.Context(), k, f.start) })
	}
	f.send(0)
	wg.Wait()
	for i := range n {
		if errs[i] != nil || string(firsts[i]) != f.lang+" 0" {
			t.Fatalf("subscriber %d: %q, %v", i, firsts[i], errs[i])
		}
	}
	return subs
}

func hubSize(h *resultsHub) (watches, subs int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.watches), h.subs
}

// TestHubShares: many streams of one inquiry get every state, with one
// broker watch and one rendering per update; a stream that joins later
// starts with the latest state at no rendering.
func TestHubShares(t *testing.T) {
	var h resultsHub
	f := newHubSource("en")
	subs := subscribeAll(t, &h, key("en"), f, 50)
	for n := int32(1); n <= 20; n++ {
		f.send(n)
		for i, s := range subs {
			if got := string(<-s.events); got != fmt.Sprintf("en %d", n) {
				t.Fatalf("subscriber %d: %q, want state %d", i, got, n)
			}
		}
	}
	if o, r := f.opens.Load(), f.renders.Load(); o != 1 || r != 21 {
		t.Fatalf("%d watches and %d renderings for 50 streams and 21 states, want 1 and 21", o, r)
	}
	late, first, err := h.subscribe(t.Context(), key("en"), f.start)
	if err != nil || string(first) != "en 20" || f.renders.Load() != 21 || f.opens.Load() != 1 {
		t.Fatalf("a late stream: %q %v, %d renderings, %d watches", first, err, f.renders.Load(), f.opens.Load())
	}
	for _, s := range append(subs, late) {
		h.leave(s)
	}
}

// TestHubLanguages: streams in different languages get renderings of
// their own, each state rendered once per language.
func TestHubLanguages(t *testing.T) {
	var h resultsHub
	en, de := newHubSource("en"), newHubSource("de")
	ens := subscribeAll(t, &h, key("en"), en, 3)
	des := subscribeAll(t, &h, key("de"), de, 3)
	if w, n := hubSize(&h); w != 2 || n != 6 {
		t.Fatalf("%d watches, %d streams", w, n)
	}
	en.send(7)
	de.send(7)
	for _, c := range []struct {
		subs []*subscription
		want string
	}{{ens, "en 7"}, {des, "de 7"}} {
		for _, s := range c.subs {
			if got := string(<-s.events); got != c.want {
				t.Fatalf("got %q, want %q", got, c.want)
			}
		}
	}
	if en.renders.Load() != 2 || de.renders.Load() != 2 {
		t.Fatalf("renderings en %d, de %d, want 2 each", en.renders.Load(), de.renders.Load())
	}
	for _, s := range append(ens, des...) {
		h.leave(s)
	}
}

// TestHubCleansUp: when the last stream leaves, the watch's broker stream
// ends and nothing of it is kept: no watch in the hub, no goroutine.
func TestHubCleansUp(t *testing.T) {
	before := runtime.NumGoroutine()
	var h resultsHub
	f := newHubSource("en")
	subs := subscribeAll(t, &h, key("en"), f, 10)
	f.send(1)
	for _, s := range subs[:9] {
		h.leave(s)
	}
	if w, n := hubSize(&h); w != 1 || n != 1 || f.closed.Load() != 0 {
		t.Fatalf("after 9 of 10 left: %d watches, %d streams, %d broker streams ended", w, n, f.closed.Load())
	}
	h.leave(subs[9])
	h.leave(subs[9]) // twice: nothing more
	if w, n := hubSize(&h); w != 0 || n != 0 {
		t.Fatalf("after all left: %d watches, %d streams", w, n)
	}
	<-subs[9].ended() // the watch's goroutine is done with it
	settled(t, func() bool { return f.closed.Load() == 1 && runtime.NumGoroutine() <= before })
	// The next stream opens a new watch.
	s := subscribeAll(t, &h, key("en"), f, 1)
	if f.opens.Load() != 2 {
		t.Fatalf("%d watches opened, want 2", f.opens.Load())
	}
	h.leave(s[0])
}

// settled polls cond generously (a busy machine is slow, not wrong).
func settled(t *testing.T, cond func() bool) {
	t.Helper()
	for range 2000 {
		if cond() {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatal("did not settle")
}

// TestHubSlowStream: a stream that takes nothing holds up no other; it
// keeps only the newest state.
func TestHubSlowStream(t *testing.T) {
	var h resultsHub
	f := newHubSource("en")
	subs := subscribeAll(t, &h, key("en"), f, 2)
	slow, quick := subs[0], subs[1]
	for n := int32(1); n <= 100; n++ {
		f.send(n)
		if got := string(<-quick.events); got != fmt.Sprintf("en %d", n) {
			t.Fatalf("quick: %q at %d", got, n)
		}
	}
	h.mu.Lock() // publish is done with the slow one too
	waiting := len(slow.events)
	h.mu.Unlock()
	if got := string(<-slow.events); waiting != 1 || got != "en 100" {
		t.Fatalf("slow: %d waiting, %q", waiting, got)
	}
	h.leave(slow)
	h.leave(quick)
}

// TestHubEnds: a broker stream that fails or ends, or an update that
// cannot be rendered, ends every stream of the watch (they reconnect, to
// a new watch); an error before the first results is each joiner's.
func TestHubEnds(t *testing.T) {
	for _, c := range []struct {
		name string
		item hubItem
	}{
		{"stream error", hubItem{err: errors.New("broker gone")}},
		{"rendering error", hubItem{total: -1}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var h resultsHub
			f := newHubSource("en")
			subs := subscribeAll(t, &h, key("en"), f, 5)
			f.items <- c.item
			for _, s := range subs {
				<-s.ended()
			}
			if w, _ := hubSize(&h); w != 0 {
				t.Fatalf("%d watches after the end", w)
			}
			for _, s := range subs {
				h.leave(s)
			}
			if w, n := hubSize(&h); w != 0 || n != 0 {
				t.Fatalf("after all left: %d watches, %d streams", w, n)
			}
			again := subscribeAll(t, &h, key("en"), f, 1)
			if f.opens.Load() != 2 {
				t.Fatalf("%d watches opened, want 2", f.opens.Load())
			}
			h.leave(again[0])
		})
	}
	t.Run("before the first results", func(t *testing.T) {
		var h resultsHub
		f := newHubSource("en")
		f.openErr = errors.New("not found")
		if _, _, err := h.subscribe(t.Context(), key("en"), f.start); !errors.Is(err, f.openErr) {
			t.Fatalf("open error: %v", err)
		}
		f.openErr = nil
		done := make(chan error, 1)
		go func() { _, _, err := h.subscribe(t.Context(), key("en"), f.start); done <- err }()
		f.items <- hubItem{err: errors.New("broker gone")}
		if err := <-done; err == nil || err.Error() != "broker gone" {
			t.Fatalf("stream error before the first results: %v", err)
		}
		if w, n := hubSize(&h); w != 0 || n != 0 {
			t.Fatalf("%d watches, %d streams", w, n)
		}
	})
}

// TestHubWaitCancelled: a stream that goes before the first results
// leaves, and its watch with it.
func TestHubWaitCancelled(t *testing.T) {
	var h resultsHub
	f := newHubSource("en")
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { _, _, err := h.subscribe(ctx, key("en"), f.start); done <- err }()
	settled(t, func() bool { return f.opens.Load() == 1 })
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled wait: %v", err)
	}
	settled(t, func() bool { w, n := hubSize(&h); return w == 0 && n == 0 && f.closed.Load() == 1 })
}

// TestHubCap: the hub holds at most max streams; one that leaves gives
// its place back.
func TestHubCap(t *testing.T) {
	h := resultsHub{max: 2}
	f := newHubSource("en")
	subs := subscribeAll(t, &h, key("en"), f, 2)
	if _, _, err := h.subscribe(t.Context(), key("en"), f.start); !errors.Is(err, errTooManyStreams) {
		t.Fatalf("a third stream: %v", err)
	}
	h.leave(subs[0])
	s, first, err := h.subscribe(t.Context(), key("en"), f.start)
	if err != nil || string(first) != "en 0" {
		t.Fatalf("after one left: %q %v", first, err)
	}
	h.leave(s)
	h.leave(subs[1])
}

// TestResultsEventSessionFree: the shared fragment does not depend on the
// session: rendered for a signed-in operator's full view and for a bare
// view of the language, it is the same.
func TestResultsEventSessionFree(t *testing.T) {
	e := newEnv(t, true)
	in := &brokerv1.Inquiry{Id: "1", TargetSites: []string{"berlin", "dresden"}}
	seven := int32(7)
	res := &brokerv1.ListRepliesResponse{InquiryId: "1", Total: 7, Replies: []*brokerv1.Reply{{SiteId: "berlin", Count: &seven}},
		Sites: []*brokerv1.SiteCount{{SiteId: "berlin", Count: 7, Replies: 1}}}
	full := &view{Lang: i18n.German, Title: "x", User: &User{Name: "Op"}, CSRF: "secret-csrf", Operator: true, SignIn: "/explorer/login"}
	a, err := e.app.resultsEvent(full, in)(res)
	if err != nil {
		t.Fatal(err)
	}
	b, err := e.app.resultsEvent(&view{Lang: i18n.German}, in)(res)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) || bytes.Contains(a, []byte("secret-csrf")) {
		t.Fatalf("the fragment depends on the session:\n%s\n%s", a, b)
	}
}

// TestHubReleasesMemory: when a wave of at least releasePeak streams has
// ended (a quarter or fewer left), the hub hands the heap back once; a
// few streams closing do not.
func TestHubReleasesMemory(t *testing.T) {
	var freed atomic.Int32
	h := resultsHub{releaseIdle: time.Millisecond, free: func() { freed.Add(1) }}
	f := newHubSource("en")
	subs := subscribeAll(t, &h, key("en"), f, releasePeak)
	pending := func() bool { h.mu.Lock(); defer h.mu.Unlock(); return h.release != nil }
	for _, s := range subs[:releasePeak-releasePeak/4-1] {
		h.leave(s)
	}
	if pending() || freed.Load() != 0 {
		t.Fatal("memory handed back while more than a quarter of the streams are open")
	}
	rest := subs[releasePeak-releasePeak/4-1:]
	h.leave(rest[0])
	settled(t, func() bool { return freed.Load() == 1 && !pending() })
	for _, s := range rest[1:] {
		h.leave(s)
	}
	if pending() {
		t.Fatal("a few streams closing after the release started another")
	}
}
