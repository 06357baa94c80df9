package audit

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"fris.dev/pkg/kv"
)

// The service's own copy of its audit events, for operators to browse
// (AuditAdmin.ListEvents, the Explorer's audit view): kept in the service's
// store beside its data, bounded by count and age (Retention) per class
// (Classes), so that no amount of one class's events removes another's.
// The JSON lines of the audit log stay the complete trail; the store is a
// window on its newest part.
//
// Keys are "audit/<class>/<16 hex digits: MaxInt64 - UnixNano>-<16 hex>",
// so a scan of a class in key order, the only order kv offers, lists its
// newest first, a time bound is a key bound, and ids (the part after the
// class) order the classes' events into one listing. An event's last 16
// digits are random; a fold's (anonymous refusals counted, Fold) are a
// hash of what it counts, so every replica adds to the same record. All
// are in each service's base partition (no service's Partitioner names
// the kind). Events stored before the classes ("audit/<id>") are moved
// into theirs by the first Prune (migrate).
const keyPrefix = "audit/"

// The classes of events, each kept apart with a retention of its own.
const (
	// ClassAdmin: operators' and administrators' actions through the
	// services' admin APIs (the CLIs, the Explorer's console).
	ClassAdmin = "admin"
	// ClassSignedIn: actions of a caller with a valid token or session,
	// or one that proved who it is in the call itself (a sign-in).
	ClassSignedIn = "signed-in"
	// ClassAnonymous: everything else. Its refusals are folded (Fold).
	ClassAnonymous = "anonymous"
)

// Classes are the classes, in the order the listing prefers at equal ids.
var Classes = []string{ClassAdmin, ClassSignedIn, ClassAnonymous}

// ValidClass reports whether c is one of Classes.
func ValidClass(c string) bool { return slices.Contains(Classes, c) }

func classPrefix(class string) string { return keyPrefix + class + "/" }

// Outcomes as stored and listed.
const (
	OutcomeOK     = "ok"
	OutcomeDenied = "denied"
	OutcomeFailed = "failed"
)

// Stored is an event as the store keeps it.
type Stored struct {
	// ID is the key after keyPrefix, set when read.
	ID         string    `json:"-"`
	Time       time.Time `json:"t"`
	Action     string    `json:"action"`
	Actor      string    `json:"actor"`
	Client     string    `json:"client,omitempty"`
	Target     string    `json:"target,omitempty"`
	Outcome    string    `json:"outcome"`
	Reason     string    `json:"reason,omitempty"`
	ClientAddr string    `json:"client_addr,omitempty"`
	RequestID  string    `json:"request_id,omitempty"`
	Attrs      []KV      `json:"attrs,omitempty"`
	// Class is the event's class, set when read (the key holds it) and
	// chosen by Append (empty: anonymous).
	Class string `json:"-"`
	// Count is how many events a fold of anonymous refusals stands for;
	// 0 (an event on its own) reads as 1.
	Count int `json:"count,omitempty"`
	// Last is a fold's newest event; Time is its minute's start.
	Last time.Time `json:"last,omitzero"`
}

// KV is one further fact of a stored event.
type KV struct {
	K string `json:"k"`
	V string `json:"v"`
}

// Bounds of what one stored event holds: its fields come from callers and
// requests (an email, a client id), which the services bound already;
// these keep a record small whatever a caller passes.
const (
	maxField = 512
	maxAttrs = 32
)

// Retention bounds the stored events of each class.
type Retention struct {
	// Keep is the most events kept per class (the newest); 0 stores none.
	Keep int
	// For is the longest an event is kept; 0: no age bound.
	For time.Duration
}

// DefaultRetention is -audit-keep's and -audit-keep-for's default.
var DefaultRetention = Retention{Keep: 100000, For: 90 * 24 * time.Hour}

// Store keeps a service's audit events in its kv store.
type Store struct {
	db  kv.Store
	ret Retention
	now func() time.Time
}

// NewStore keeps events in db under ret.
func NewStore(db kv.Store, ret Retention) *Store {
	return &Store{db: db, ret: ret, now: time.Now}
}

// Retention is what s keeps.
func (s *Store) Retention() Retention { return s.ret }

// idFor is an event's id at t: the inverted time first, so newer sorts
// first, then random bits that keep replicas' events at one nanosecond
// apart.
func idFor(t time.Time) string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%016x-%s", inverted(t), hex.EncodeToString(b[:]))
}

// inverted is MaxInt64 - t's Unix nanoseconds, t clamped to the span they
// can say (1970 to 2262): filters' times come from outside.
func inverted(t time.Time) uint64 {
	switch {
	case t.Before(time.Unix(0, 0)):
		return math.MaxInt64
	case t.After(time.Unix(0, math.MaxInt64)):
		return 0
	}
	return uint64(math.MaxInt64 - t.UnixNano())
}

// timeID sorts before every id of an event at t and after every id of a
// newer one.
func timeID(t time.Time) string { return fmt.Sprintf("%016x", inverted(t)) }

// validID reports whether id has the form idFor makes; page tokens come
// from outside.
func validID(id string) bool {
	if len(id) != 33 || id[16] != '-' {
		return false
	}
	for i, c := range id {
		if i != 16 && !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// idTime reads the inverted time of a valid id.
func idTime(id string) uint64 {
	n, _ := strconv.ParseUint(id[:16], 16, 64)
	return n
}

// Append stores events in one transaction, each in its class (none:
// anonymous) with the age bound as its TTL (a lowered bound applies to
// older events at the next Prune).
func (s *Store) Append(ctx context.Context, events []Stored) error {
	if s.ret.Keep <= 0 || len(events) == 0 {
		return nil
	}
	return s.db.Update(ctx, func(tx kv.Tx) error {
		for _, e := range events {
			if err := kv.PutJSON(tx, classPrefix(classOf(e))+idFor(e.Time), bounded(e), s.ret.For); err != nil {
				return err
			}
		}
		return nil
	})
}

// classOf is e's class as stored: an unknown one is anonymous, the class
// that claims least.
func classOf(e Stored) string {
	if ValidClass(e.Class) {
		return e.Class
	}
	return ClassAnonymous
}

// bounded cuts e's fields to the stored bounds.
func bounded(e Stored) Stored {
	cut := func(s string) string {
		if len(s) <= maxField {
			return s
		}
		return strings.ToValidUTF8(s[:maxField], "") + "…"
	}
	e.Action, e.Actor, e.Client, e.Target = cut(e.Action), cut(e.Actor), cut(e.Client), cut(e.Target)
	e.Reason, e.ClientAddr, e.RequestID = cut(e.Reason), cut(e.ClientAddr), cut(e.RequestID)
	if len(e.Attrs) > maxAttrs {
		e.Attrs = e.Attrs[:maxAttrs]
	}
	attrs := make([]KV, len(e.Attrs))
	for i, a := range e.Attrs {
		attrs[i] = KV{K: cut(a.K), V: cut(a.V)}
	}
	e.Attrs = attrs
	return e
}

// Filter selects events.
type Filter struct {
	// Class, when set, is the only class listed.
	Class        string
	Actor        string
	ActionPrefix string
	Outcome      string
	// Since and Until bound the times, both inclusive; zero: no bound.
	Since, Until time.Time
	// PageSize is the most events returned (1..MaxPageSize; 0: 50).
	PageSize int
	// After continues after the event of this id.
	After string
}

// MaxPageSize bounds a page.
const MaxPageSize = 100

// ErrBadFilter is a page size out of range, an unknown class or a
// malformed page token.
var ErrBadFilter = errors.New("audit: bad filter")

// scanChunk is how many events a listing reads at a time.
const scanChunk = 256

// classScan reads one class's keys in order, a chunk at a time.
type classScan struct {
	class, prefix, after string
	buf                  []kv.Entry
	done                 bool
}

// head is the class's next event's key and id, or false at its end.
func (c *classScan) head(ctx context.Context, db kv.Store) (kv.Entry, string, bool, error) {
	for {
		if len(c.buf) == 0 {
			if c.done {
				return kv.Entry{}, "", false, nil
			}
			es, err := db.Scan(ctx, c.prefix, c.after, scanChunk)
			if err != nil {
				return kv.Entry{}, "", false, err
			}
			c.buf, c.done = es, len(es) < scanChunk
			if len(es) > 0 {
				c.after = es[len(es)-1].Key
			}
			continue
		}
		e := c.buf[0]
		if id := strings.TrimPrefix(e.Key, c.prefix); validID(id) {
			return e, id, true, nil
		}
		c.buf = c.buf[1:] // not an event's key: nothing of ours
	}
}

// List returns the events f selects, newest first (the classes' events
// merged by id), and the id to continue after when there may be more. A
// page with a continuation is full, so pages of several services can be
// merged by time (ListEventsResponse). A filter that matches few events
// reads on until the store's end or its Since bound: the store is bounded
// (Retention), and only operators list.
func (s *Store) List(ctx context.Context, f Filter) ([]Stored, string, error) {
	if f.PageSize == 0 {
		f.PageSize = 50
	}
	if f.PageSize < 0 || f.PageSize > MaxPageSize {
		return nil, "", fmt.Errorf("%w: page size must be between 1 and %d", ErrBadFilter, MaxPageSize)
	}
	classes := Classes
	if f.Class != "" {
		if !ValidClass(f.Class) {
			return nil, "", fmt.Errorf("%w: class must be one of %s", ErrBadFilter, strings.Join(Classes, ", "))
		}
		classes = []string{f.Class}
	}
	after := ""
	switch {
	case f.After != "":
		if !validID(f.After) {
			return nil, "", fmt.Errorf("%w: malformed page token", ErrBadFilter)
		}
		after = f.After
		if !f.Until.IsZero() {
			after = max(after, timeID(f.Until))
		}
	case !f.Until.IsZero():
		after = timeID(f.Until)
	}
	var stop uint64 = math.MaxUint64
	if !f.Since.IsZero() {
		stop = inverted(f.Since)
	}
	scans := make([]*classScan, len(classes))
	for i, c := range classes {
		scans[i] = &classScan{class: c, prefix: classPrefix(c)}
		if after != "" {
			scans[i].after = scans[i].prefix + after
		}
	}
	var out []Stored
	for {
		// The newest head of all classes (the smallest id).
		var (
			next   *classScan
			nextE  kv.Entry
			nextID string
		)
		for _, c := range scans {
			e, id, ok, err := c.head(ctx, s.db)
			if err != nil {
				return nil, "", err
			}
			if ok && (next == nil || id < nextID) {
				next, nextE, nextID = c, e, id
			}
		}
		if next == nil || idTime(nextID) > stop {
			return out, "", nil
		}
		next.buf = next.buf[1:]
		var ev Stored
		if err := json.Unmarshal(nextE.Value, &ev); err != nil {
			return nil, "", fmt.Errorf("decode %s: %w", nextE.Key, err)
		}
		ev.Class = next.class
		if !f.matches(ev) {
			continue
		}
		if len(out) == f.PageSize {
			// There is one more: the page continues after its last.
			return out, out[len(out)-1].ID, nil
		}
		ev.ID = nextID
		out = append(out, ev)
	}
}

func (f Filter) matches(e Stored) bool {
	return (f.Actor == "" || e.Actor == f.Actor) &&
		strings.HasPrefix(e.Action, f.ActionPrefix) &&
		(f.Outcome == "" || e.Outcome == f.Outcome)
}

// Prune deletes what the retention no longer keeps, in each class apart:
// events older than For, and all but the newest Keep. It reads every kept
// event's key (the count needs them), so the writer runs it once per tenth
// of Keep written, not per event. Events stored before the classes are
// moved into theirs first.
func (s *Store) Prune(ctx context.Context) (int, error) {
	if err := s.migrate(ctx); err != nil {
		return 0, err
	}
	total := 0
	for _, c := range Classes {
		n, err := s.prune(ctx, classPrefix(c))
		total += n
		if err != nil {
			return total, err
		}
	}
	return total, nil
}

// prune applies the retention to the keys under prefix, one class's.
func (s *Store) prune(ctx context.Context, prefix string) (int, error) {
	// Every event key after cut goes: the Keep-th newest's, or the
	// bound of those older than For, whichever is first.
	cut := ""
	if s.ret.For > 0 {
		cut = prefix + timeID(s.now().Add(-s.ret.For))
	}
	if s.ret.Keep <= 0 {
		cut = prefix
	}
	seen, after := 0, ""
	for s.ret.Keep > 0 && (cut == "" || after < cut) {
		es, err := s.db.Scan(ctx, prefix, after, scanChunk)
		if err != nil {
			return 0, err
		}
		if len(es) == 0 {
			break
		}
		if seen+len(es) >= s.ret.Keep {
			if k := es[s.ret.Keep-1-seen].Key; cut == "" || k < cut {
				cut = k
			}
			break
		}
		seen += len(es)
		after = es[len(es)-1].Key
	}
	if cut == "" {
		return 0, nil
	}
	return s.deleteAfter(ctx, prefix, cut)
}

// deleteAfter deletes every key under prefix after cut, a batch per
// transaction.
func (s *Store) deleteAfter(ctx context.Context, prefix, cut string) (int, error) {
	n := 0
	for {
		es, err := s.db.Scan(ctx, prefix, cut, 500)
		if err != nil {
			return n, err
		}
		if len(es) == 0 {
			return n, nil
		}
		if err := s.db.Update(ctx, func(tx kv.Tx) error {
			for _, e := range es {
				if err := tx.Delete(e.Key); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			return n, err
		}
		n += len(es)
		cut = es[len(es)-1].Key
	}
}

// migrate moves events stored before the classes ("audit/<id>") into the
// class their fields tell: an admin API's action is admin, an anonymous
// actor's anonymous, any other actor's signed-in. Their keys sort before
// every class's (ids begin with a digit, classes with a letter), so a scan
// from the kind's start finds them first, and finds none once moved.
func (s *Store) migrate(ctx context.Context) error {
	for {
		es, err := s.db.Scan(ctx, keyPrefix, "", scanChunk)
		if err != nil {
			return err
		}
		var old []kv.Entry
		for _, e := range es {
			if !validID(strings.TrimPrefix(e.Key, keyPrefix)) {
				break
			}
			old = append(old, e)
		}
		if len(old) == 0 {
			return nil
		}
		if err := s.db.Update(ctx, func(tx kv.Tx) error {
			for _, e := range old {
				var ev Stored
				class := ClassAnonymous
				if json.Unmarshal(e.Value, &ev) == nil {
					class = legacyClass(ev)
				}
				if err := tx.Put(classPrefix(class)+strings.TrimPrefix(e.Key, keyPrefix), e.Value, s.ret.For); err != nil {
					return err
				}
				if err := tx.Delete(e.Key); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			return err
		}
	}
}

// legacyClass is the class of an event stored before the classes.
func legacyClass(e Stored) string {
	switch {
	case e.Actor == ActorAdmin || strings.Contains(e.Action, ".admin."):
		return ClassAdmin
	case e.Actor == "" || e.Actor == "anonymous":
		return ClassAnonymous
	}
	return ClassSignedIn
}
