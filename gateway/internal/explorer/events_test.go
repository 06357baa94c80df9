package explorer

import (
	"net/http/httptest"
	"testing"
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
