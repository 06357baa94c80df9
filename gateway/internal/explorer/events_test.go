package explorer

import (
	"errors"
	"net/http/httptest"
	"strings"
	"testing"

	brokerv1 "fris.dev/proto/broker/v1"
)

// TestPump: the stream's loop sends the first results and every update in
// order, each as one event, and ends when the updates end or one cannot
// be rendered.
func TestPump(t *testing.T) {
	e := newEnv(t, true)
	render := func(res *brokerv1.ListRepliesResponse) ([]byte, error) {
		if res.GetTotal() < 0 {
			return nil, errors.New("no template")
		}
		return sseEvent("results", []byte(strings.Repeat("x", int(res.GetTotal()))+"\nend")), nil
	}
	for _, c := range []struct {
		name    string
		updates []int32
		want    string
	}{
		{"updates", []int32{2, 3}, "event: results\ndata: x\ndata: end\n\nevent: results\ndata: xx\ndata: end\n\nevent: results\ndata: xxx\ndata: end\n\n"},
		{"a failed rendering", []int32{-1, 3}, "event: results\ndata: x\ndata: end\n\n"},
	} {
		rec := httptest.NewRecorder()
		updates := make(chan *brokerv1.ListRepliesResponse, len(c.updates))
		for _, n := range c.updates {
			updates <- &brokerv1.ListRepliesResponse{Total: n}
		}
		close(updates)
		q := &req{w: rec, r: httptest.NewRequest("GET", "/", nil), sess: &Session{ID: "s"}}
		e.app.pump(t.Context(), q, startSSE(rec), render, &brokerv1.ListRepliesResponse{Total: 1}, updates)
		if got := rec.Body.String(); got != c.want {
			t.Errorf("%s: sent\n%q\nwant\n%q", c.name, got, c.want)
		}
		if ct := rec.Header().Get("Content-Type"); ct != "text/event-stream; charset=utf-8" {
			t.Errorf("%s: Content-Type %q", c.name, ct)
		}
	}
}
