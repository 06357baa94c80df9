package explorer

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"fris.dev/gateway/internal/httpx"
	brokerv1 "fris.dev/proto/broker/v1"
)

// The results stream: an inquiry's results as Server-Sent Events, in four
// parts: reading the broker's updates (readUpdates), rendering each as an
// event (resultsEvent), checking the session while the stream is open
// (stillSignedIn), and writing the events (sseWriter); pump joins them.

// streamLife bounds one event stream: the browser reconnects, and the
// session is checked as for any page (tokens refreshed).
const streamLife = 5 * time.Minute

// keepAliveEvery is how often an idle stream sends a comment, so that
// proxies do not close it.
const keepAliveEvery = 25 * time.Second

// events streams an inquiry's results as Server-Sent Events: the results
// section, rendered, on every change the broker's WatchReplies reports.
// Every cfg.SessionCheck the stream checks that its session is still
// signed in as the same user with a token not revoked, and ends when not:
// signing out or a revoke stops the replies within that time (plus the
// gateway's revocation poll), not at the end of streamLife.
func (a *App) events(q *req) error {
	b, err := a.broker()
	if err != nil {
		return err
	}
	in, err := a.ownInquiry(q)
	if err != nil {
		return err
	}
	ctx, cancel := a.streamContext(q)
	defer cancel()
	stream, err := b.WatchReplies(ctx, &brokerv1.ListRepliesRequest{Id: in.GetId()})
	if err != nil {
		return err
	}
	// The first results are read before the stream is answered, so that
	// a refusal is still a page's error.
	first, err := stream.Recv()
	if err != nil {
		return err
	}
	out := startSSE(q.w)
	if err := out.send([]byte("retry: 3000\n\n")); err != nil {
		return nil
	}
	render := a.resultsEvent(a.view(q, "res.title"), in)
	a.pump(ctx, q, out, render, first, a.readUpdates(ctx, q.r, stream))
	return nil
}

// streamContext is the stream's context: it outlives the page's call
// timeout, keeps the caller's identity and language, and ends with
// streamLife or when the gateway begins to shut down.
func (a *App) streamContext(q *req) (context.Context, context.CancelFunc) {
	md, _ := metadata.FromOutgoingContext(q.ctx)
	ctx, cancel := context.WithTimeout(metadata.NewOutgoingContext(q.r.Context(), md), streamLife)
	if a.cfg.Done != nil {
		go func() {
			select {
			case <-a.cfg.Done:
				cancel()
			case <-ctx.Done():
			}
		}()
	}
	return ctx, cancel
}

// readUpdates receives the broker's updates until the stream or ctx ends,
// then closes the channel.
func (a *App) readUpdates(ctx context.Context, r *http.Request, stream grpc.ServerStreamingClient[brokerv1.ListRepliesResponse]) <-chan *brokerv1.ListRepliesResponse {
	updates := make(chan *brokerv1.ListRepliesResponse)
	go func() {
		defer close(updates)
		for {
			res, err := stream.Recv()
			if err != nil {
				if !errors.Is(err, io.EOF) && ctx.Err() == nil {
					a.cfg.Log.InfoContext(ctx, "explorer: reply stream ended", "err", err, "request_id", httpx.RequestID(r.Context()))
				}
				return
			}
			select {
			case updates <- res:
			case <-ctx.Done():
				return
			}
		}
	}()
	return updates
}

// resultsEvent renders an update of in's results as a "results" event.
func (a *App) resultsEvent(v *view, in *brokerv1.Inquiry) func(*brokerv1.ListRepliesResponse) ([]byte, error) {
	return func(res *brokerv1.ListRepliesResponse) ([]byte, error) {
		var buf bytes.Buffer
		if err := a.pages.ExecuteTemplate(&buf, "inq-results", resultsOf(v, in, res)); err != nil {
			return nil, err
		}
		return sseEvent("results", buf.Bytes()), nil
	}
}

// pump sends res and then every update, a keep-alive when idle, and ends
// when the updates, the context or the session end, or the browser is
// gone.
func (a *App) pump(ctx context.Context, q *req, out *sseWriter, render func(*brokerv1.ListRepliesResponse) ([]byte, error),
	res *brokerv1.ListRepliesResponse, updates <-chan *brokerv1.ListRepliesResponse) {
	keepAlive := time.NewTicker(keepAliveEvery)
	defer keepAlive.Stop()
	check := time.NewTicker(a.cfg.SessionCheck)
	defer check.Stop()
	for {
		if res != nil {
			ev, err := render(res)
			if err != nil {
				a.cfg.Log.Error("explorer: rendering", "page", "results", "err", err)
				return
			}
			if out.send(ev) != nil {
				return
			}
		}
		res = nil
		select {
		case res = <-updates:
			if res == nil {
				return // the stream ended: the browser reconnects
			}
		case <-keepAlive.C:
			if out.send([]byte(": keep-alive\n\n")) != nil {
				return
			}
		case <-check.C:
			if !a.stillSignedIn(ctx, q.sess.ID, q.id.Subject) {
				// EventSource reconnects and is refused (401): it stops.
				return
			}
		case <-ctx.Done():
			return
		}
	}
}

// stillSignedIn: the session id is still stored, signed in as subject,
// with an access token the verifier accepts (its revocation list
// included). Tokens are not refreshed here: an expired one ends the
// stream, and the browser's reconnection refreshes it as any page does.
func (a *App) stillSignedIn(ctx context.Context, id, subject string) bool {
	s, err := a.cfg.Store.Get(ctx, id)
	if err != nil || s.User == nil || s.Token == nil {
		return false
	}
	vid, err := a.cfg.Verifier.Verify(ctx, s.Token.AccessToken)
	return err == nil && !vid.Anonymous() && vid.Subject == subject
}

// sseWriter writes an event stream's frames, each flushed at once.
type sseWriter struct {
	w  http.ResponseWriter
	rc *http.ResponseController
}

// startSSE answers the request with an event stream.
func startSSE(w http.ResponseWriter) *sseWriter {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	return &sseWriter{w: w, rc: http.NewResponseController(w)}
}

// send writes a frame; an error means the browser is gone (or too slow to
// take a frame in a minute).
func (s *sseWriter) send(frame []byte) error {
	_ = s.rc.SetWriteDeadline(time.Now().Add(time.Minute))
	if _, err := s.w.Write(frame); err != nil {
		return err
	}
	return s.rc.Flush()
}

// sseEvent frames data as one event: a data line for each of its lines.
func sseEvent(name string, data []byte) []byte {
	var b bytes.Buffer
	b.WriteString("event: " + name + "\n")
	for _, line := range bytes.Split(bytes.TrimRight(data, "\n"), []byte("\n")) {
		b.WriteString("data: ")
		b.Write(bytes.TrimRight(line, "\r"))
		b.WriteByte('\n')
	}
	b.WriteByte('\n')
	return b.Bytes()
}
