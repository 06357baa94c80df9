package explorer

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"time"

	"google.golang.org/grpc/metadata"

	"fris.dev/gateway/internal/httpx"
	brokerv1 "fris.dev/proto/broker/v1"
)

// The results stream: an inquiry's results as Server-Sent Events, in four
// parts: the watch of the broker's updates shared by the streams of an
// inquiry (fanout.go, started by startWatch), rendering each update once
// as an event (resultsEvent), checking each stream's session while it is
// open (stillSignedIn), and writing the events (sseWriter); pump joins
// them.

// streamLife bounds one event stream: the browser reconnects, and the
// session is checked as for any page (tokens refreshed).
const streamLife = 5 * time.Minute

// keepAliveEvery is how often an idle stream sends a comment, so that
// proxies do not close it.
const keepAliveEvery = 25 * time.Second

// events streams an inquiry's results as Server-Sent Events: the results
// section, rendered, on every change the broker's WatchReplies reports.
// The streams of one inquiry (and user and language) share one watch and
// one rendering per change (fanout.go); each stream is still authorized on
// its own: its user reads the inquiry (ownInquiry) before it joins, and
// every cfg.SessionCheck the stream checks that its session is still
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
	key := watchKey{inquiry: in.GetId(), subject: q.id.Subject, lang: q.lang, targets: strings.Join(in.GetTargetSites(), "\x00")}
	if a.cfg.UnsharedStreams {
		key.alone = a.hub.streams.Add(1)
	}
	// The first results are read before the stream is answered, so that
	// a refusal is still a page's error.
	sub, first, err := a.hub.subscribe(ctx, key, func() watchStart { return a.startWatch(q, b, in) })
	if err != nil {
		return err
	}
	defer a.hub.leave(sub)
	out := startSSE(q.w)
	if err := out.send([]byte("retry: 3000\n\n")); err != nil {
		return nil
	}
	a.pump(ctx, q, out, first, sub)
	return nil
}

// startWatch is a new shared watch of in's replies: opened with the
// identity of q's user (who has just read the inquiry), for streamLife at
// most, so that no broker watch outlives the identity check that opened it
// by more than one stream's life, then every stream on it ends and
// reconnects; it ends with the gateway's shutdown too. The events are
// rendered in q's language with nothing of q's session.
func (a *App) startWatch(q *req, b brokerv1.ResearcherServiceClient, in *brokerv1.Inquiry) watchStart {
	md, _ := metadata.FromOutgoingContext(q.ctx)
	ctx, cancel := context.WithTimeout(metadata.NewOutgoingContext(context.Background(), md), streamLife)
	a.endOnShutdown(ctx, cancel)
	rid := httpx.RequestID(q.r.Context())
	return watchStart{
		ctx: ctx, cancel: cancel,
		open: func(ctx context.Context) (replyStream, error) {
			return b.WatchReplies(ctx, &brokerv1.ListRepliesRequest{Id: in.GetId()})
		},
		render: a.resultsEvent(&view{Lang: q.lang}, in),
		logEnd: func(err error) {
			if !errors.Is(err, io.EOF) {
				a.cfg.Log.Info("explorer: reply stream ended", "inquiry", in.GetId(), "err", err, "request_id", rid)
			}
		},
	}
}

// streamContext is the stream's context: it outlives the page's call
// timeout, keeps the caller's identity and language, and ends with
// streamLife or when the gateway begins to shut down.
func (a *App) streamContext(q *req) (context.Context, context.CancelFunc) {
	md, _ := metadata.FromOutgoingContext(q.ctx)
	ctx, cancel := context.WithTimeout(metadata.NewOutgoingContext(q.r.Context(), md), streamLife)
	a.endOnShutdown(ctx, cancel)
	return ctx, cancel
}

// endOnShutdown cancels ctx when the gateway begins to shut down.
func (a *App) endOnShutdown(ctx context.Context, cancel context.CancelFunc) {
	if a.cfg.Done == nil {
		return
	}
	go func() {
		select {
		case <-a.cfg.Done:
			cancel()
		case <-ctx.Done():
		}
	}()
}

// resultsEvent renders an update of in's results as a "results" event.
// The fragment reads only v's language (v.T): it is shared by every
// stream of the same key.
func (a *App) resultsEvent(v *view, in *brokerv1.Inquiry) func(*brokerv1.ListRepliesResponse) ([]byte, error) {
	return func(res *brokerv1.ListRepliesResponse) ([]byte, error) {
		var buf bytes.Buffer
		if err := a.pages.ExecuteTemplate(&buf, "inq-results", resultsOf(v, in, res)); err != nil {
			a.cfg.Log.Error("explorer: rendering", "page", "results", "err", err)
			return nil, err
		}
		return sseEvent("results", buf.Bytes()), nil
	}
}

// pump sends first and then every event of sub, a keep-alive when idle,
// and ends when the watch, the context or the session end, or the browser
// is gone.
func (a *App) pump(ctx context.Context, q *req, out *sseWriter, first []byte, sub *subscription) {
	keepAlive := time.NewTicker(keepAliveEvery)
	defer keepAlive.Stop()
	check := time.NewTicker(a.cfg.SessionCheck)
	defer check.Stop()
	if out.send(first) != nil {
		return
	}
	for {
		select {
		case ev := <-sub.events:
			if out.send(ev) != nil {
				return
			}
		case <-sub.ended():
			// The watch ended (the broker's stream, its life, or an
			// error): what it published last is sent, then the browser
			// reconnects.
			select {
			case ev := <-sub.events:
				_ = out.send(ev)
			default:
			}
			return
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
