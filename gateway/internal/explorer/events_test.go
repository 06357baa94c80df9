package explorer

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	brokerv1 "fris.dev/proto/broker/v1"
)

// TestPump: the stream's loop sends the first results and every event of
// its watch, each as it came, and when the watch ends, the event it had
// not sent yet before it ends.
func TestPump(t *testing.T) {
	e := newEnv(t, true)
	rec := httptest.NewRecorder()
	w := &watch{ended: make(chan struct{})}
	sub := &subscription{w: w, events: make(chan []byte, 1)}
	sub.events <- sseEvent("results", []byte("xx\nend"))
	close(w.ended)
	q := &req{w: rec, r: httptest.NewRequest("GET", "/", nil), sess: &Session{ID: "s"}}
	e.app.pump(t.Context(), q, startSSE(rec), sseEvent("results", []byte("x\nend")), sub)
	want := "event: results\ndata: x\ndata: end\n\nevent: results\ndata: xx\ndata: end\n\n"
	if got := rec.Body.String(); got != want {
		t.Errorf("sent\n%q\nwant\n%q", got, want)
	}
	if ct := rec.Header().Get("Content-Type"); ct != "text/event-stream; charset=utf-8" {
		t.Errorf("Content-Type %q", ct)
	}
}

// TestEventsShareWatch: the results streams of one inquiry, user and
// language share one broker watch, unless Config.UnsharedStreams; when
// they end, nothing of the watch is kept.
func TestEventsShareWatch(t *testing.T) {
	for _, c := range []struct {
		unshared bool
		watches  int
	}{{false, 1}, {true, 3}} {
		done := make(chan struct{})
		e, fb, _ := newInqEnv(t, done)
		e.app.cfg.UnsharedStreams = c.unshared
		fb.ins["1"], fb.authors["1"] = &brokerv1.Inquiry{Id: "1", Status: brokerv1.InquiryStatus_RELEASED, TargetSites: []string{"berlin"}}, "42"
		fb.watch, fb.hold = []*brokerv1.ListRepliesResponse{{InquiryId: "1"}}, true
		b := e.browser()
		b.signIn()
		id := b.cookies[SessionCookie].Value
		ended := make(chan *httptest.ResponseRecorder, 3)
		for range 3 {
			go func() {
				r := httptest.NewRequest("GET", "http://gw.test"+InquiriesPath+"/1/events", nil)
				r.AddCookie(&http.Cookie{Name: SessionCookie, Value: id})
				rec := httptest.NewRecorder()
				e.h.ServeHTTP(rec, r)
				ended <- rec
			}()
		}
		// Every watch has its first event: a watch the shutdown ends
		// before it is the stream's error page (a refusal), not a stream.
		settled(t, func() bool {
			n, w := e.app.ResultsStreams()
			return n == 3 && w == c.watches && startedWatches(e.app) == c.watches
		})
		close(done)
		for range 3 {
			if rec := <-ended; rec.Code != 200 || !strings.Contains(rec.Body.String(), "event: results") {
				t.Fatalf("unshared %v: stream: %d\n%s", c.unshared, rec.Code, rec.Body)
			}
		}
		settled(t, func() bool { n, w := e.app.ResultsStreams(); return n == 0 && w == 0 })
	}
}

// startedWatches counts the hub's watches that have had their first event.
func startedWatches(a *App) int {
	a.hub.mu.Lock()
	defer a.hub.mu.Unlock()
	n := 0
	for _, w := range a.hub.watches {
		if w.started {
			n++
		}
	}
	return n
}
