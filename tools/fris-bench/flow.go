package main

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// A session is one client of a stateful flow: its next request depends on
// the answer to its previous one (a refresh token is spent by its use; a
// sign request's code must be signed and exchanged). vegeta's workers share
// one Targeter and know nothing of each other, so sessions live in a pool:
// a worker's targeter takes a ready session, asks it for its next request
// and sends it; the result loop hands the response back to that session,
// which updates its state and goes back into the pool. A session is thus
// used by one request at a time, always with the state its own previous
// response left.
type session interface {
	// next is the session's next request, the URL relative to the gateway.
	// It may do client-side work first (signing a code).
	next() (vegeta.Target, error)
	// done takes the response to the request next made. keep=false drops
	// the session: after an error its state may be spent (a refresh token
	// the server rotated without us seeing the answer), and using it again
	// would be a reuse.
	done(r *vegeta.Result) (o outcome, keep bool)
}

// outcome is what one response was.
type outcome struct {
	bad  string // why it is an error; "" when it is fine
	kind string // which request of the flow, e.g. "sign_request"
	// unit is set when the response completes one unit of work (a token
	// response); unitLatency is that unit's latency.
	unit        bool
	unitLatency time.Duration
}

// sessionPool hands sessions to vegeta's workers through a channel.
type sessionPool struct {
	base     string
	sessions []session
	ready    chan int
	// prep[i] is how long the targeter spent on session i's current
	// request before vegeta sent it (waiting for a ready session, building
	// the request, signing): client time, taken out of the latency.
	prep  []time.Duration
	alive atomic.Int64
	gone  chan struct{} // closed when every session has been dropped
	once  sync.Once
	wait  time.Duration // longest a worker waits for a ready session
}

var errNoSession = errors.New("no session left to send a request with")

func newSessionPool(base string, ss []session, wait time.Duration) *sessionPool {
	p := &sessionPool{
		base: base, sessions: ss, ready: make(chan int, len(ss)), prep: make([]time.Duration, len(ss)),
		gone: make(chan struct{}), wait: wait,
	}
	for i := range ss {
		p.ready <- i
	}
	p.alive.Store(int64(len(ss)))
	if len(ss) == 0 {
		close(p.gone)
	}
	return p
}

func (p *sessionPool) drop() {
	if p.alive.Add(-1) == 0 {
		p.once.Do(func() { close(p.gone) })
	}
}

// targeter is the dynamic vegeta.Targeter of the flow. The session's index
// rides in the URL's fragment, which net/http never sends, so the result
// (whose URL is the target's) finds its way back to the session.
func (p *sessionPool) targeter() vegeta.Targeter {
	return func(t *vegeta.Target) error {
		if t == nil {
			return vegeta.ErrNilTarget
		}
		start := time.Now()
		var i int
		select {
		case i = <-p.ready:
		default:
			timer := time.NewTimer(p.wait)
			select {
			case i = <-p.ready:
				timer.Stop()
			case <-p.gone:
				timer.Stop()
				return errNoSession
			case <-timer.C:
				return fmt.Errorf("%w within %s", errNoSession, p.wait)
			}
		}
		tgt, err := p.sessions[i].next()
		if err != nil {
			p.drop()
			return err
		}
		tgt.URL = p.base + tgt.URL + "#" + strconv.Itoa(i)
		*t = tgt
		p.prep[i] = time.Since(start)
		return nil
	}
}

// handle gives r to its session, moves r's timestamp past the client's
// preparation, and returns the session to the pool (or drops it).
func (p *sessionPool) handle(r *vegeta.Result) outcome {
	i, ok := sessionOf(r.URL, len(p.sessions))
	if !ok {
		// The targeter failed: no request was sent.
		return outcome{bad: "load generator: " + r.Error}
	}
	if prep := p.prep[i]; prep > 0 && prep < r.Latency {
		r.Timestamp = r.Timestamp.Add(prep)
		r.Latency -= prep
	}
	o, keep := p.sessions[i].done(r)
	if keep {
		p.ready <- i
	} else {
		p.drop()
	}
	return o
}

func sessionOf(u string, n int) (int, bool) {
	j := strings.LastIndexByte(u, '#')
	if j < 0 {
		return 0, false
	}
	i, err := strconv.Atoi(u[j+1:])
	return i, err == nil && i >= 0 && i < n
}

// staticHandler judges every response of a one-request scenario against
// want; each good response is one unit.
func staticOutcome(want Expect) func(*vegeta.Result) outcome {
	return func(r *vegeta.Result) outcome {
		bad := check(r, want)
		return outcome{bad: bad, unit: bad == "", unitLatency: r.Latency}
	}
}
