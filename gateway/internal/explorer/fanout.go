package explorer

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"fris.dev/gateway/internal/httpx"
	"fris.dev/gateway/internal/i18n"
	brokerv1 "fris.dev/proto/broker/v1"
)

// The results streams of one inquiry share their work: one WatchReplies
// call to the broker and one rendering per update for all the streams
// open on it (for one user, in one language), fanned out to each
// (docs/decisions.md, "Shared watch"). Before, every stream held its own
// broker watch and rendered every update itself: 200 open tabs cost 200
// renderings a reply.

// maxResultsStreams bounds the results streams open on one gateway, as
// the broker bounds its watches (10,000 a replica): each holds a
// connection, two timers and a buffered event.
const maxResultsStreams = 10000

// errTooManyStreams: the gateway holds maxResultsStreams already.
var errTooManyStreams = status.Error(codes.Unavailable, "too many open results streams on this gateway; try again later")

// watchKey is what a rendered event depends on. The fragment
// ("inq-results") uses the replies, the inquiry's target sites and the
// page's language, nothing of the session (no user, CSRF token, operator
// flag; times are UTC). The subject is in the key although the broker
// gives an inquiry only to its author, so in practice it splits nothing:
// a watch opened with one user's identity never feeds another user's
// stream, whatever the broker's rules become.
type watchKey struct {
	inquiry, subject string
	lang             i18n.Lang
	// targets are the inquiry's target sites as the first subscriber read
	// them, joined: an edit that changes them starts a new watch for the
	// streams opened after it.
	targets string
	// alone, when not 0, makes the key one stream's own
	// (Config.UnsharedStreams).
	alone uint64
}

// replyStream is the broker's WatchReplies stream.
type replyStream = grpc.ServerStreamingClient[brokerv1.ListRepliesResponse]

// watchStart is what the first subscriber of a key gives to start its
// watch.
type watchStart struct {
	// ctx is the watch's own: the identity of the subscriber that opens
	// it, a bounded life, not the subscriber's request; cancel ends it.
	ctx    context.Context
	cancel context.CancelFunc
	open   func(context.Context) (replyStream, error)
	render func(*brokerv1.ListRepliesResponse) ([]byte, error)
	// logEnd is told why the watch ended, unless its context did.
	logEnd func(error)
}

// resultsHub holds the open watches by key. The zero value is ready.
type resultsHub struct {
	mu      sync.Mutex
	watches map[watchKey]*watch
	subs    int
	// max bounds the subscribers (0: maxResultsStreams).
	max int
	// streams numbers the streams that share nothing.
	streams atomic.Uint64
	// peak is the most streams open since memory was last handed back;
	// release waits for the wave to end (see releaseMemory).
	peak    int
	release *time.Timer
	// free hands the heap's free memory back (nil: httpx.FreeMemory);
	// releaseIdle is how long after a wave it runs (0: releaseIdle).
	free        func()
	releaseIdle time.Duration
}

// A wave of streams (hundreds of tabs on one inquiry) grows the heap by
// their connections' buffers and goroutine stacks; the runtime hands
// that back over minutes, or not at all while the gateway is idle (no
// collection runs). When at least releasePeak streams were open and at
// most a quarter of them are left, the hub hands it back releaseIdle after
// the last of them closed, as the request bodies' budget does (httpx).
const (
	releasePeak = 64
	releaseIdle = 10 * time.Second
)

// watch is one broker watch and its subscribers.
type watch struct {
	watchStart
	key  watchKey
	subs map[*subscription]struct{}
	// ready is closed with the first event (first) or the end before it
	// (err); ended when the watch ends.
	ready, ended chan struct{}
	started      bool
	first, last  []byte
	err          error
}

// subscription is one stream's share of a watch: events holds the newest
// event it has not sent yet (one: each is the whole results section, so
// an older one is worth nothing once a newer is there).
type subscription struct {
	w      *watch
	events chan []byte
}

// ended is closed when the watch ends: the stream ends, the browser
// reconnects.
func (s *subscription) ended() <-chan struct{} { return s.w.ended }

// subscribe joins the watch of key, starting it with start() when there is
// none, and returns the latest event (rendered already: a new subscriber
// costs no rendering) or the error that ended the watch before its first.
// The caller has checked that its user may read the inquiry.
func (h *resultsHub) subscribe(ctx context.Context, key watchKey, start func() watchStart) (*subscription, []byte, error) {
	h.mu.Lock()
	if h.subs >= h.limit() {
		h.mu.Unlock()
		return nil, nil, errTooManyStreams
	}
	w := h.watches[key]
	if w == nil {
		w = &watch{watchStart: start(), key: key, subs: map[*subscription]struct{}{},
			ready: make(chan struct{}), ended: make(chan struct{})}
		if h.watches == nil {
			h.watches = map[watchKey]*watch{}
		}
		h.watches[key] = w
		go h.run(w)
	}
	s := &subscription{w: w, events: make(chan []byte, 1)}
	w.subs[s] = struct{}{}
	h.subs++
	h.peak = max(h.peak, h.subs)
	latest := w.last
	started := w.started
	h.mu.Unlock()
	if started {
		return s, latest, nil
	}
	// Joined before the first event: every later one comes through
	// events, so the first is the one to start with.
	select {
	case <-w.ready:
	case <-ctx.Done():
		h.leave(s)
		return nil, nil, ctx.Err()
	}
	if w.first == nil {
		h.leave(s)
		return nil, nil, w.err
	}
	return s, w.first, nil
}

// leave ends s's share; the last subscriber of a watch ends it.
func (h *resultsHub) leave(s *subscription) {
	h.mu.Lock()
	defer h.mu.Unlock()
	w := s.w
	if _, ok := w.subs[s]; !ok {
		return
	}
	delete(w.subs, s)
	h.subs--
	h.releaseMemory()
	if len(w.subs) == 0 {
		h.forget(w)
		w.cancel()
	}
}

// forget takes w out of the hub (h.mu held), unless a newer watch of its
// key has taken its place.
func (h *resultsHub) forget(w *watch) {
	if h.watches[w.key] == w {
		delete(h.watches, w.key)
	}
}

// releaseMemory (h.mu held) (re)starts the countdown to handing memory
// back when a wave of streams has ended.
func (h *resultsHub) releaseMemory() {
	if h.peak < releasePeak || h.subs > h.peak/4 {
		return
	}
	idle := h.releaseIdle
	if idle <= 0 {
		idle = releaseIdle
	}
	if h.release != nil {
		h.release.Reset(idle)
		return
	}
	h.release = time.AfterFunc(idle, func() {
		h.mu.Lock()
		if h.subs > h.peak/4 {
			// A new wave: its end restarts the countdown.
			h.mu.Unlock()
			return
		}
		h.peak, h.release = h.subs, nil
		free := h.free
		h.mu.Unlock()
		if free == nil {
			free = httpx.FreeMemory
		}
		free()
	})
}

func (h *resultsHub) limit() int {
	if h.max > 0 {
		return h.max
	}
	return maxResultsStreams
}

// run reads the broker's updates, renders each once and offers it to every
// subscriber, until the stream ends, fails or the last subscriber leaves.
func (h *resultsHub) run(w *watch) {
	defer w.cancel()
	err := h.read(w)
	if w.ctx.Err() != nil {
		err = nil
	} else if w.logEnd != nil {
		w.logEnd(err)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.forget(w)
	if !w.started {
		if err == nil {
			err = w.ctx.Err()
		}
		w.err = err
		close(w.ready)
	}
	close(w.ended)
}

// read is run's loop; its error is why the watch ended.
func (h *resultsHub) read(w *watch) error {
	stream, err := w.open(w.ctx)
	if err != nil {
		return err
	}
	for {
		res, err := stream.Recv()
		if err != nil {
			return err
		}
		ev, err := w.render(res)
		if err != nil {
			return err
		}
		h.publish(w, ev)
	}
}

// publish makes ev the latest event and offers it to every subscriber,
// never waiting for one: a slow one loses the older event it has not
// sent.
func (h *resultsHub) publish(w *watch, ev []byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	w.last = ev
	if !w.started {
		w.started, w.first = true, ev
		close(w.ready)
		return
	}
	for s := range w.subs {
		select {
		case <-s.events:
		default:
		}
		s.events <- ev // room: only publish sends, and under the lock
	}
}

// ResultsStreams counts the results streams open and the broker watches
// they share, for the gateway's metrics.
func (a *App) ResultsStreams() (streams, watches int) {
	a.hub.mu.Lock()
	defer a.hub.mu.Unlock()
	return a.hub.subs, len(a.hub.watches)
}
