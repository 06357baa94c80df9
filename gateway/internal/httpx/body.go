package httpx

import (
	"errors"
	"io"
	"net/http"
	"os"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/semaphore"
)

// ErrBodyMemory is a request body's read error when the gateway's budget
// for bodies in flight (-body-memory) is spent: the handler answers 503
// with Retry-After (BodyMemoryRetry) instead of growing.
var ErrBodyMemory = errors.New("the gateway is receiving too many request bodies at once; try again shortly")

// BodyMemoryRetry is the Retry-After, in seconds, of an ErrBodyMemory 503:
// bodies in flight take seconds to arrive and be stored.
const BodyMemoryRetry = "5"

// ErrBodyTooSlow is a request body's read error when it did not progress
// by the minimum rate (-min-body-rate): the handler answers 408.
var ErrBodyTooSlow = errors.New("the request body arrived too slowly")

// bodyChunk is the unit reserved for a body without a Content-Length
// (chunked), as it is read.
const bodyChunk = 64 << 10

// BodyMemory is a budget for the memory request bodies hold while they are
// read and handled: a body reserves its declared length (or 64 KiB chunks
// as it arrives) when it is first read, and gives it back when its request
// ends. Reads never wait for the budget: past it they fail with
// ErrBodyMemory, so a flood of large bodies cannot grow the process.
type BodyMemory struct {
	sem  *semaphore.Weighted
	held atomic.Int64
	// released counts bytes given back since the memory was last returned
	// to the operating system; past releaseAfter, the next idle moment
	// returns it (free).
	released atomic.Int64
	idle     time.Duration
	free     func()
	idleMu   sync.Mutex
	timer    *time.Timer
}

// releaseAfter: after this many bytes of bodies, an idle gateway hands
// their memory back; smaller amounts the runtime's scavenger returns on
// its own.
const releaseAfter = 32 << 20

// NewBodyMemory returns a budget of total bytes (<= 0: no budget). free,
// when not nil, is called once the gateway has held no body for idle after
// large bodies (debug.FreeOSMemory: the heap they grew is returned at once
// rather than over minutes).
func NewBodyMemory(total int64, idle time.Duration, free func()) *BodyMemory {
	m := &BodyMemory{idle: idle, free: free}
	if total > 0 {
		m.sem = semaphore.NewWeighted(total)
	}
	return m
}

// Held is the number of bytes reserved by bodies now.
func (m *BodyMemory) Held() int64 { return m.held.Load() }

func (m *BodyMemory) acquire(n int64) bool {
	if m.sem != nil && !m.sem.TryAcquire(n) {
		return false
	}
	m.held.Add(n)
	return true
}

func (m *BodyMemory) release(n int64) {
	if n == 0 {
		return
	}
	if m.sem != nil {
		m.sem.Release(n)
	}
	m.held.Add(-n)
	if m.free == nil || m.released.Add(n) < releaseAfter {
		return
	}
	m.idleMu.Lock()
	defer m.idleMu.Unlock()
	if m.timer == nil {
		m.timer = time.AfterFunc(m.idle, m.freeIfIdle)
		return
	}
	m.timer.Reset(m.idle)
}

func (m *BodyMemory) freeIfIdle() {
	if m.held.Load() != 0 {
		// Still busy: the last body to end restarts the countdown.
		return
	}
	m.released.Store(0)
	m.free()
}

// FreeMemory hands the heap's free memory back to the operating system.
// The collection first moves buffers pooled in sync.Pools (gRPC keeps its
// message buffers in them) to the pools' victim caches, so that the one
// FreeOSMemory runs frees them too.
func FreeMemory() {
	runtime.GC()
	debug.FreeOSMemory()
}

// Limit makes every request body of next draw on the budget.
func (m *BodyMemory) Limit(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody {
			next.ServeHTTP(w, r)
			return
		}
		b := &budgetBody{ReadCloser: r.Body, m: m, declared: r.ContentLength}
		r.Body = b
		// The bytes read stay referenced until the handler has sent them on
		// (the service call marshals another copy), so the reservation
		// lasts as long as the request, not until the body's EOF.
		defer func() { m.release(b.reserved) }()
		next.ServeHTTP(w, r)
	})
}

type budgetBody struct {
	io.ReadCloser
	m        *BodyMemory
	declared int64
	reserved int64
	read     int64
	err      error
}

func (b *budgetBody) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	if len(p) == 0 {
		return b.ReadCloser.Read(p)
	}
	if want := b.need(len(p)); want > 0 {
		if !b.m.acquire(want) {
			b.err = ErrBodyMemory
			return 0, b.err
		}
		b.reserved += want
	}
	n, err := b.ReadCloser.Read(p)
	b.read += int64(n)
	return n, err
}

// need is what to reserve before reading up to n more bytes: the whole
// declared length at the first read, else chunks as the body grows.
func (b *budgetBody) need(n int) int64 {
	if b.declared > 0 {
		// net/http ends a body at its declared length.
		if b.reserved == 0 {
			return b.declared
		}
		return 0
	}
	if b.read+int64(n) <= b.reserved {
		return 0
	}
	short := b.read + int64(n) - b.reserved
	return (short + bodyChunk - 1) / bodyChunk * bodyChunk
}

// BodyRate is the least progress a request body must make.
type BodyRate struct {
	// MinRate is in bytes per second, measured over Window: each Window
	// must bring MinRate×Window bytes, or the read fails with
	// ErrBodyTooSlow. <= 0: no minimum.
	MinRate int64
	Window  time.Duration
	// Whole bounds the whole body however fast it flows (the server's
	// -read-timeout, which the per-window deadlines replace).
	Whole time.Duration
}

// Limit makes every request body of next keep to the rate: the
// connection's read deadline is set a Window ahead and moved on only when
// the window's bytes have come, never past Whole from the start, so a
// trickle of a byte now and then cannot hold a connection for the whole
// -read-timeout.
func (c BodyRate) Limit(next http.Handler) http.Handler {
	if c.MinRate <= 0 || c.Window <= 0 {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody {
			next.ServeHTTP(w, r)
			return
		}
		rc := http.NewResponseController(w)
		b := &rateBody{ReadCloser: r.Body, c: c, set: rc.SetReadDeadline, until: time.Now().Add(c.Whole)}
		r.Body = b
		next.ServeHTTP(w, r)
		if !b.done {
			// The handler answered without the whole body (a 401 before
			// it was read): net/http reads up to 256 KiB of the rest
			// before it sends the answer, so that the connection can
			// serve the next request. That gets one window, not the
			// whole -read-timeout: a trickle cannot hold the answer up.
			_ = b.set(earlier(time.Now().Add(c.Window), b.until))
		}
	})
}

type rateBody struct {
	io.ReadCloser
	c       BodyRate
	set     func(time.Time) error
	until   time.Time // the whole body's deadline
	started bool
	done    bool
	window  int64 // bytes read in the current window
}

func (b *rateBody) Read(p []byte) (int, error) {
	if !b.started {
		b.started = true
		b.next(time.Now())
	}
	n, err := b.ReadCloser.Read(p)
	if b.done {
		return n, err
	}
	b.window += int64(n)
	if b.window >= b.c.perWindow() && n > 0 {
		b.next(time.Now())
	}
	if err != nil {
		b.done = true
		if errors.Is(err, os.ErrDeadlineExceeded) {
			// The deadline stays past: net/http gives up on the rest at
			// once and closes the connection after the answer.
			return n, ErrBodyTooSlow
		}
		// The body is over: the connection keeps the whole request's
		// deadline, as the server set it, so that a background read while
		// the handler calls a service is not cut off by a window.
		_ = b.set(b.until)
	}
	return n, err
}

// perWindow is what one window must bring (at least a byte).
func (c BodyRate) perWindow() int64 {
	return max(int64(float64(c.MinRate)*c.Window.Seconds()), 1)
}

// next starts a new window at now.
func (b *rateBody) next(now time.Time) {
	b.window = 0
	_ = b.set(earlier(now.Add(b.c.Window), b.until))
}

func earlier(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
