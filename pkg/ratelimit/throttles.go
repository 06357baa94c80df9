package ratelimit

import (
	"context"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"fris.dev/pkg/rpcerr"
)

// The throttles an operator sees and lifts (the Explorer's throttles view,
// `<svc> throttles` and `<svc> lift-throttle`): every key whose next
// attempt would be refused now. A key's name holds only a hash of what it
// limits (the caller typed it), so the guard records the account and the
// address beside it when the key becomes throttled: clipped, kept only
// until the throttle ends (the same bound as the key's own state), and
// at most maxListed of them, so a flood of strangers cannot grow the store
// beyond what its own limiter keys already take.

// Throttle is one key slowed now.
type Throttle struct {
	// ID names the key for Lift: "<flow>:<kind>:<hash>".
	ID string
	// Flow is the guard's ("login", "client_secret", "basic", ...).
	Flow string
	// Kind is what the key limits: "pair" (an account from one address),
	// "addr" (an address, IPv6 as its /64), "ceiling" (an account from
	// every address together) or "account" (an account's spending: mails,
	// registrations).
	Kind string
	// Account and Addr are what the key limits, as typed (clipped to
	// maxShown bytes); "" where the kind has none.
	Account, Addr string
	// Failures are the failures counted on the key within its window (0:
	// a spending key, which counts none).
	Failures int64
	// Refused are the attempts refused while it was listed.
	Refused int64
	// Until is when the key admits its next attempt.
	Until time.Time
}

// Listing bounds: the store keeps at most maxListed throttles (the
// longest-running first), a listing returns at most MaxList.
const (
	maxListed = 1000
	MaxList   = 500
	// maxShown bounds a recorded account or address.
	maxShown = 128
)

// kinds are the key kinds an operator may lift, by the two letters their
// names carry; the known-address and known-device marks are not throttles.
var kinds = map[string]string{"pa": "pair", "ad": "addr", "ce": "ceiling", "ac": "account"}

// idPattern is a throttle's ID: the flow, the kind, the hash (name).
var idPattern = regexp.MustCompile(`^[a-z][a-z0-9_]{0,31}:(pa|ad|ce|ac):[0-9a-f]{24}$`)

var errBadID = rpcerr.New(rpcerr.ErrInvalid, "not a throttle's id: want <flow>:<pa|ad|ce|ac>:<24 hex digits>, as a listing shows it")

// ValidID reports whether id can name a throttle.
func ValidID(id string) bool { return idPattern.MatchString(id) }

// id is k's name without its part: the key a throttle names.
func (g *Guard) id(k key) string {
	n := g.name(k, "")
	return n[:len(n)-1]
}

// entry is the throttle k records when account from addr is slowed by it.
func (g *Guard) entry(k key, account, addr string) Throttle {
	t := Throttle{ID: g.id(k), Flow: g.flow, Kind: k.kind}
	switch k.kind {
	case "pair":
		t.Account, t.Addr = shown(account), shown(addr)
	case "addr":
		t.Addr = shown(addr)
	default:
		t.Account = shown(account)
	}
	return t
}

// shown is s clipped to maxShown bytes of valid UTF-8 (a listing travels
// as proto strings).
func shown(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= maxShown {
		return s
	}
	s = s[:maxShown]
	for len(s) > 0 && !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s + "…"
}

// throttled records k as slowed for wait after a failure (failures: its
// count) or a refusal. A failure to record is logged, never the request's.
func (g *Guard) throttled(ctx context.Context, t Throttle, wait time.Duration, refused bool) {
	ctx = context.WithoutCancel(ctx)
	if err := g.l.b.record(ctx, t, wait, refused); err != nil {
		g.l.warn(ctx, "recording a throttle", "flow", g.flow, "err", err)
	}
}

// afterFailure records k when the failure just counted (n) leaves it
// slowed: its bucket empty or its back-off lock set.
func (g *Guard) afterFailure(ctx context.Context, k key, n int64, account, addr string) error {
	w, err := g.l.b.peek(ctx, g.name(k, "f"), k.p.Limit)
	if err != nil {
		return err
	}
	if k.p.Backoff > 0 {
		lw, err := g.l.b.peek(ctx, g.name(k, "b"), lock(k.p.Backoff))
		if err != nil {
			return err
		}
		w = max(w, lw)
	}
	if w > 0 {
		t := g.entry(k, account, addr)
		t.Failures = n
		g.throttled(ctx, t, w, false)
	}
	return nil
}

// Throttled lists the keys slowed now, the longest-running first, at most
// limit (MaxList when limit is not in 1..MaxList).
func (l *Limiter) Throttled(ctx context.Context, limit int) ([]Throttle, error) {
	if limit <= 0 || limit > MaxList {
		limit = MaxList
	}
	return l.b.throttles(ctx, limit)
}

// Lift forgets everything key id counted (its budget, its back-off lock
// and failure count, its listing): its next attempt is admitted at once.
// found is false when it held nothing; what it recorded is returned for
// the audit log. A malformed id is ErrInvalid's.
func (l *Limiter) Lift(ctx context.Context, id string) (t Throttle, found bool, err error) {
	if !ValidID(id) {
		return Throttle{}, false, errBadID
	}
	return l.b.lift(ctx, id)
}
