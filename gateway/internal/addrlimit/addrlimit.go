// Package addrlimit caps what one client address may hold of the gateway
// at a time: open connections (Listen) and requests in flight (Counter,
// used by httpx.LimitInFlight). Addresses are grouped as one host controls
// them (Key): an IPv4 address alone, an IPv6 address by its /64, the
// smallest network a site is given, so that an attacker with one IPv6
// network cannot pose as 2^64 clients.
//
// The address budgets are for strangers. Many signed-in users may share
// one address (a hospital's NAT), so a connection whose request proved a
// signed-in subject moves from its address's budget to its subject's
// (MoveToSubject): an address's budget then counts only the connections
// that have not (yet) proven one.
package addrlimit

import (
	"context"
	"net"
	"net/netip"
	"sync"

	"fris.dev/pkg/ratelimit"
)

// Key is the group of addr (an address, or host:port as in
// http.Request.RemoteAddr): the IPv4 address, or the IPv6 /64 in CIDR
// notation. What is not an address is its own group.
func Key(addr string) string {
	a, ok := parse(addr)
	if !ok {
		return addr
	}
	return keyOf(a)
}

func parse(addr string) (netip.Addr, bool) {
	if ap, err := netip.ParseAddrPort(addr); err == nil {
		return ap.Addr().Unmap(), true
	}
	if a, err := netip.ParseAddr(addr); err == nil {
		return a.Unmap(), true
	}
	return netip.Addr{}, false
}

// keyOf groups as the services' abuse limits do (IPv6 by its /64), so a
// client is one key on both sides.
func keyOf(a netip.Addr) string {
	return ratelimit.AddrKey(a.String())
}

// Counter counts what each key holds, up to max each. The zero max (or a
// nil Counter) caps nothing.
type Counter struct {
	max int
	mu  sync.Mutex
	n   map[string]int
}

// NewCounter returns a counter allowing max per key (max <= 0: no cap).
func NewCounter(max int) *Counter {
	return &Counter{max: max, n: map[string]int{}}
}

// Acquire takes one unit for key; false, and nothing taken, when key holds
// max already.
func (c *Counter) Acquire(key string) bool {
	if c == nil || c.max <= 0 {
		return true
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n[key] >= c.max {
		return false
	}
	c.n[key]++
	return true
}

// Release gives back one unit Acquire took for key.
func (c *Counter) Release(key string) {
	if c == nil || c.max <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	// Deleted at zero, so the map holds only the addresses holding
	// something now, not every address ever seen.
	if c.n[key] <= 1 {
		delete(c.n, key)
		return
	}
	c.n[key]--
}

// Held is what key holds now.
func (c *Counter) Held(key string) int {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[key]
}

// ListenConfig is what Listen needs.
type ListenConfig struct {
	// Max is the most connections one address (Key) may hold open; <= 0:
	// no cap.
	Max int
	// Exempt, when not nil, names peers the cap does not apply to: the
	// trusted reverse proxies, whose connections carry many clients.
	Exempt func(netip.Addr) bool
	// Refused, when not nil, is told of each connection closed at once.
	Refused func()
	// MaxPerSubject is the most connections one signed-in subject may
	// hold once moved off their address (MoveToSubject); <= 0: no cap
	// but the global one.
	MaxPerSubject int
}

// Listen wraps lis so that a connection from an address that already
// holds c.Max is closed as soon as it is accepted, before the HTTP server
// spends a goroutine or a buffer on it. Wrap the listener that enforces
// the global cap (netutil.LimitListener): the refused connection then
// gives its global slot back at once instead of waiting in it.
func Listen(lis net.Listener, c ListenConfig) net.Listener {
	if c.Max <= 0 {
		return lis
	}
	return &listener{Listener: lis, cfg: c, held: NewCounter(c.Max), subjects: NewCounter(c.MaxPerSubject)}
}

type listener struct {
	net.Listener
	cfg ListenConfig
	// held counts connections by address, subjects those moved to their
	// subject.
	held, subjects *Counter
}

func (l *listener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		a, ok := peer(c)
		if !ok || l.cfg.Exempt != nil && l.cfg.Exempt(a) {
			return c, nil
		}
		key := keyOf(a)
		if !l.held.Acquire(key) {
			_ = c.Close()
			if l.cfg.Refused != nil {
				l.cfg.Refused()
			}
			continue
		}
		return &conn{Conn: c, l: l, key: key}, nil
	}
}

func peer(c net.Conn) (netip.Addr, bool) {
	if t, ok := c.RemoteAddr().(*net.TCPAddr); ok {
		return t.AddrPort().Addr().Unmap(), true
	}
	return parse(c.RemoteAddr().String())
}

// conn gives its unit back when it closes (once: net/http may close a
// connection more than once): its address's, or its subject's once moved.
type conn struct {
	net.Conn
	l  *listener
	mu sync.Mutex
	// key is the address's key, or the subject once onSubject.
	key               string
	onSubject, closed bool
}

func (c *conn) Close() error {
	err := c.Conn.Close()
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.closed {
		c.closed = true
		c.counter().Release(c.key)
	}
	return err
}

func (c *conn) counter() *Counter {
	if c.onSubject {
		return c.l.subjects
	}
	return c.l.held
}

// moveTo moves c from its address's budget to subject's, when subject has
// room; a connection moves once, and never back: later requests on it are
// its subject's to answer for.
func (c *conn) moveTo(subject string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed || c.onSubject {
		return c.onSubject
	}
	if !c.l.subjects.Acquire(subject) {
		return false
	}
	c.l.held.Release(c.key)
	c.key, c.onSubject = subject, true
	return true
}

type connKey struct{}

// ConnContext is http.Server's ConnContext for a Listen listener: it keeps
// the connection in its requests' contexts, for MoveToSubject.
func ConnContext(ctx context.Context, c net.Conn) context.Context {
	if cc, ok := c.(*conn); ok {
		return context.WithValue(ctx, connKey{}, cc)
	}
	return ctx
}

// MoveToSubject moves the connection of ctx's request (ConnContext) from
// its address's budget to subject's: called once a request's headers have
// shown a signed-in subject (an Explorer session, a valid bearer token).
// It reports whether the connection is a subject's now; false when the
// subject holds its maximum already (the connection stays on its
// address), or the connection is not counted (no cap, a trusted proxy's).
func MoveToSubject(ctx context.Context, subject string) bool {
	c, ok := ctx.Value(connKey{}).(*conn)
	if !ok || subject == "" {
		return false
	}
	return c.moveTo(subject)
}
