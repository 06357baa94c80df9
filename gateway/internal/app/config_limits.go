package app

import (
	"errors"
	"flag"
	"fmt"
	"time"

	"fris.dev/gateway/internal/clientaddr"
)

// Limits bound what clients may hold of the public port: body sizes, path
// segments, connections and requests per address, the pace of bodies and
// the timeouts (docs/security.md, "Input limits" and "Limits").
type Limits struct {
	MaxBody int64
	// MaxAuthBody bounds the bodies of group A's POST routes (register,
	// token, the login form...), which are small (docs/security.md,
	// "Input limits").
	MaxAuthBody int64
	// MaxPathSegment bounds each path segment (400 beyond).
	MaxPathSegment int
	// TrustedProxies may tell the client's address in X-Forwarded-For
	// (comma-separated CIDR prefixes; empty: nobody).
	TrustedProxies string

	// Connection limits of the public port (docs/security.md, "Limits").
	MaxConns          int
	ReadHeaderTimeout time.Duration
	ReadTimeout       time.Duration
	WriteTimeout      time.Duration
	IdleTimeout       time.Duration
	// Per-address caps and the pace a body must keep (docs/security.md,
	// "Limits"): what one host may hold of the gateway.
	MaxConnsPerAddr    int
	MaxInFlightPerAddr int
	// Per signed-in subject (an Explorer session, a bearer token): what
	// counts against the subject instead of its address
	// (docs/security.md, "Limits").
	MaxConnsPerSubject    int
	MaxInFlightPerSubject int
	MinBodyRate           int64
	BodyRateWindow        time.Duration
	// BodyMemory bounds the bytes of request bodies held at once.
	BodyMemory int64
}

// RegisterFlags adds the limits' flags to fs.
func (c *Limits) RegisterFlags(fs *flag.FlagSet) {
	fs.Int64Var(&c.MaxBody, "max-body", 10<<20, "largest request body accepted, in bytes")
	fs.Int64Var(&c.MaxAuthBody, "max-auth-body", 64<<10, "largest body of the identity provider's POST routes (register, token, sign request, revoke, introspect, the login form), in bytes")
	// A patient id may have 512 bytes (the upload service's limit), the
	// longest id any path carries.
	fs.IntVar(&c.MaxPathSegment, "max-path-segment", 512, "longest path segment accepted (decoded), in bytes; longer is 400")
	fs.StringVar(&c.TrustedProxies, "trusted-proxies", "", "comma-separated CIDR prefixes of reverse proxies whose X-Forwarded-For names the client's address (empty: the connection's address is the client's, the header is ignored)")
	fs.IntVar(&c.MaxConns, "max-conns", 4096, "most concurrent client connections; more wait in the kernel's accept queue (0: no cap)")
	// Headers are a few hundred bytes: 5s is ample on the slowest link,
	// and what a connection sending them byte by byte can hold.
	fs.DurationVar(&c.ReadHeaderTimeout, "read-header-timeout", 5*time.Second, "how long a client may take to send a request's headers")
	fs.IntVar(&c.MaxConnsPerAddr, "max-conns-per-addr", 128, "most open connections from one client address (IPv6: one /64) not signed in; more are closed at once (0: no cap; connections from -trusted-proxies are not counted: the proxy must limit its clients; a connection whose request is signed in counts against -max-conns-per-subject instead)")
	fs.IntVar(&c.MaxInFlightPerAddr, "max-inflight-per-addr", 128, "most requests in flight from one client address (IPv6: one /64; behind -trusted-proxies the client's) not signed in; more are 429 with Retry-After (0: no cap)")
	// A researcher's browser holds a few connections and a results stream
	// per open inquiry; a script a few parallel calls. Per subject, so
	// 1,000 researchers behind one address each keep theirs.
	fs.IntVar(&c.MaxConnsPerSubject, "max-conns-per-subject", 32, "most open connections of one signed-in subject (an Explorer session's user or a bearer token's subject), moved off their address's -max-conns-per-addr once a request on them is signed in (0: no cap but -max-conns)")
	fs.IntVar(&c.MaxInFlightPerSubject, "max-inflight-per-subject", 32, "most requests in flight of one signed-in subject, counted instead of against their address's -max-inflight-per-addr; more are 429 with Retry-After (0: no cap)")
	// 4 KiB/s is a fraction of the slowest site link FRIS serves (10 MiB
	// in 5 minutes, ~35 KB/s) and far above a trickle.
	fs.Int64Var(&c.MinBodyRate, "min-body-rate", 4096, "least bytes per second a request body must bring, measured over -body-rate-window; slower is cut off with 408 (0: no minimum, only -read-timeout)")
	fs.DurationVar(&c.BodyRateWindow, "body-rate-window", 10*time.Second, "the window -min-body-rate is measured over: the longest a body may stall")
	fs.Int64Var(&c.BodyMemory, "body-memory", 256<<20, "most bytes of request bodies the gateway holds at once; past it a body is refused with 503 and Retry-After (0: no budget; else at least -max-body)")
	// A whole request, body included: the largest body (-max-body, 10 MiB)
	// needs 5 min at ~280 kbit/s, a slow site link.
	fs.DurationVar(&c.ReadTimeout, "read-timeout", 5*time.Minute, "how long a client may take to send a whole request, body included")
	// Counted from the end of the headers, so it spans reading the body, the
	// service call (-upstream-timeout) and writing the response (a 10 MiB
	// expose PDF); hence one minute more than -read-timeout.
	fs.DurationVar(&c.WriteTimeout, "write-timeout", 6*time.Minute, "how long a request may take from the end of its headers to the last byte of its response (at least -read-timeout)")
	fs.DurationVar(&c.IdleTimeout, "idle-timeout", 30*time.Second, "how long a kept-alive connection may wait for its next request")
}

// Validate reports the limits' mistakes: sizes and timeouts out of range
// or at odds with each other.
func (c *Limits) Validate() error {
	var errs []error
	if c.MaxBody <= 0 {
		errs = append(errs, errors.New("-max-body must be positive"))
	}
	if c.MaxAuthBody <= 0 {
		errs = append(errs, errors.New("-max-auth-body must be positive"))
	}
	if c.MaxPathSegment < 64 {
		errs = append(errs, errors.New("-max-path-segment must be at least 64"))
	}
	if _, err := clientaddr.Parse(c.TrustedProxies); err != nil {
		errs = append(errs, fmt.Errorf("-trusted-proxies: %w", err))
	}
	if c.MaxConns < 0 {
		errs = append(errs, errors.New("-max-conns must not be negative (0: no cap)"))
	}
	if c.MaxConnsPerAddr < 0 || c.MaxInFlightPerAddr < 0 || c.MinBodyRate < 0 || c.BodyMemory < 0 {
		errs = append(errs, errors.New("-max-conns-per-addr, -max-inflight-per-addr, -min-body-rate and -body-memory must not be negative (0: off)"))
	}
	if c.MaxConnsPerSubject < 0 || c.MaxInFlightPerSubject < 0 {
		errs = append(errs, errors.New("-max-conns-per-subject and -max-inflight-per-subject must not be negative (0: no cap)"))
	}
	if c.BodyMemory > 0 && c.BodyMemory < c.MaxBody {
		errs = append(errs, errors.New("-body-memory must be at least -max-body (or 0: no budget)"))
	}
	return errors.Join(append(errs, c.validateTimeouts())...)
}

// validateTimeouts reports the timeouts' mistakes.
func (c *Limits) validateTimeouts() error {
	var errs []error
	if c.ReadHeaderTimeout <= 0 || c.ReadTimeout <= 0 || c.WriteTimeout <= 0 || c.IdleTimeout <= 0 {
		errs = append(errs, errors.New("-read-header-timeout, -read-timeout, -write-timeout and -idle-timeout must be positive"))
	}
	if c.MinBodyRate > 0 && (c.BodyRateWindow < time.Second || c.BodyRateWindow > c.ReadTimeout) {
		errs = append(errs, errors.New("-body-rate-window must be between 1s and -read-timeout"))
	}
	if c.ReadHeaderTimeout > c.ReadTimeout {
		errs = append(errs, errors.New("-read-header-timeout must not exceed -read-timeout"))
	}
	if c.WriteTimeout < c.ReadTimeout {
		// The write deadline runs from the end of the headers: a shorter one
		// would cut off a body the read timeout still allows.
		errs = append(errs, errors.New("-write-timeout must be at least -read-timeout"))
	}
	return errors.Join(errs...)
}
