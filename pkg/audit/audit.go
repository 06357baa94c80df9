// Package audit writes the services' audit trail: who did what to what,
// when, from where, and with which outcome, as JSON lines on a logger of
// their own ("log":"audit"), apart from the operational log so operators can
// route, keep and protect them separately; and, for operators to browse
// (AuditAdmin, the Explorer's audit view), a bounded copy in the service's
// own store (Store, Logger.Keep).
//
// Events never carry secrets: no passwords, client secrets, tokens, codes
// or signatures. Callers name the target (an email, a client or user id, a
// bank) and the outcome; admin calls are recorded by AdminService, which
// copies only allow-listed identifier fields of the request.
package audit

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	"fris.dev/pkg/identity"
)

// Outcomes of an event.
const (
	Success = "success"
	Failure = "failure"
)

// ActorAdmin is who acts through a service's admin gRPC API: an operator
// (CLI) with access to the service's port; the peer address tells which
// host.
const ActorAdmin = "admin-api"

// Config is where the audit events go.
type Config struct {
	// Path is a file the events are appended to; empty: stderr, interleaved
	// with the service's log and told apart by "log":"audit".
	Path string
	// Retention bounds the copy of the events the service keeps in its
	// store for operators to browse (Store).
	Retention Retention
}

// RegisterFlags adds -audit-log, -audit-keep and -audit-keep-for to fs.
func (c *Config) RegisterFlags(fs *flag.FlagSet) {
	fs.StringVar(&c.Path, "audit-log", "", `file the audit events are appended to as JSON lines (empty: stderr, marked "log":"audit")`)
	fs.IntVar(&c.Retention.Keep, "audit-keep", DefaultRetention.Keep, "most audit events the service keeps in its store for the Explorer's audit view, the newest, per class: admin, signed-in, anonymous (whose refusals are stored as counts per address and minute); 0: none; the audit log has them all")
	fs.DurationVar(&c.Retention.For, "audit-keep-for", DefaultRetention.For, "longest the service keeps an audit event in its store, in every class (2160h: 90 days; 0: no age bound)")
}

// Validate reports the retention's mistakes.
func (c *Config) Validate() error {
	if c.Retention.Keep < 0 || c.Retention.For < 0 {
		return errors.New("-audit-keep and -audit-keep-for must not be negative")
	}
	return nil
}

// Open returns the service's audit logger and a function that closes its
// file (a no-op for stderr).
func Open(c Config, service string, stderr io.Writer) (*Logger, func() error, error) {
	if c.Path == "" {
		return New(stderr, service), func() error { return nil }, nil
	}
	f, err := os.OpenFile(c.Path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, nil, fmt.Errorf("-audit-log: %w", err)
	}
	return New(f, service), f.Close, nil
}

// Logger records audit events. A nil *Logger records nothing, so tests and
// tools that build a service without one need not.
type Logger struct {
	log *slog.Logger
	// folded counts the anonymous refusals folded into counts (fold.go):
	// fris_audit_anonymous_folded_total{service,action}.
	folded *prometheus.CounterVec
	// allowRefusal, when set, is asked before an event of a refusal
	// (ResourceExhausted: an abuse limit's 429) is written: refusals cost
	// the sender nothing, so their events are capped (LimitRefusals).
	allowRefusal func() bool
	// keep, when set, stores each event in the service's store too (Keep).
	keep *keeper
}

// LimitRefusals makes l ask allow before recording a refused attempt
// (codes.ResourceExhausted, what abuse limits answer); when allow says no,
// the event is dropped (allow counts it: pkg/ratelimit's
// Limiter.AllowLog). Call before the service serves.
func (l *Logger) LimitRefusals(allow func() bool) {
	if l != nil {
		l.allowRefusal = allow
	}
}

// New writes events to w as JSON lines.
func New(w io.Writer, service string) *Logger {
	return &Logger{log: slog.New(slog.NewJSONHandler(w, nil)).With("log", "audit", "service", service),
		folded: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name:        "fris_audit_anonymous_folded_total",
			Help:        "Anonymous refused or failed attempts stored as counts (one record per action, outcome, client address and minute) instead of one by one; the audit log has each.",
			ConstLabels: prometheus.Labels{"service": service},
		}, []string{"action"})}
}

// RegisterMetrics adds l's metrics to reg (the service's /metrics).
func (l *Logger) RegisterMetrics(reg prometheus.Registerer) {
	if l != nil && reg != nil {
		reg.MustRegister(l.folded)
	}
}

// Discard records nothing.
func Discard() *Logger { return nil }

// Event is one audited action.
type Event struct {
	// Action names what was done, "<area>.<verb>": "auth.login",
	// "broker.bank.register".
	Action string
	// Actor is who did it. Empty: the verified caller the gateway
	// forwarded (its subject, and client when there is one), else
	// "anonymous".
	Actor string
	// Target is what it was done to: a user, client, bank, inquiry.
	Target string
	// Err is the failure; nil is success.
	Err error
	// Attrs are further facts, never secrets.
	Attrs []slog.Attr
	// Class is the event's class (ClassAdmin, ClassSignedIn,
	// ClassAnonymous), which decides where it is stored. Empty: signed-in
	// when the call carries a verified identity (only the gateway sends
	// one, for a valid token or session), else anonymous; an Actor the
	// call merely names (an email, a client id) counts for nothing.
	// AdminService sets admin; a service sets signed-in on the success of
	// a call whose caller proved who it is in the call itself (a sign-in,
	// a token grant, a mailed link).
	Class string
}

// Record writes e with the caller's address: the client address the
// gateway forwarded (identity.KeyClientAddr, which no client can set
// through the gateway) and the gRPC peer that made the call.
func (l *Logger) Record(ctx context.Context, e Event) {
	if l == nil {
		return
	}
	if l.allowRefusal != nil && e.Err != nil && status.Code(e.Err) == codes.ResourceExhausted && !l.allowRefusal() {
		return
	}
	id := identity.FromIncoming(ctx)
	actor := e.Actor
	if actor == "" {
		actor = id.Subject
	}
	if actor == "" {
		actor = "anonymous"
	}
	attrs := []slog.Attr{slog.String("action", e.Action), slog.String("actor", actor)}
	if id.Client != "" {
		attrs = append(attrs, slog.String("client", id.Client))
	}
	if e.Target != "" {
		attrs = append(attrs, slog.String("target", e.Target))
	}
	if a := identity.Incoming(ctx, identity.KeyClientAddr); a != "" {
		attrs = append(attrs, slog.String("client_addr", a))
	}
	if p, ok := peer.FromContext(ctx); ok && p.Addr != nil {
		attrs = append(attrs, slog.String("peer", p.Addr.String()))
	}
	if rid := identity.Incoming(ctx, "x-request-id"); rid != "" {
		attrs = append(attrs, slog.String("request_id", rid))
	}
	level := slog.LevelInfo
	if e.Err == nil {
		attrs = append(attrs, slog.String("outcome", Success))
	} else {
		level = slog.LevelWarn
		attrs = append(attrs, slog.String("outcome", Failure), slog.String("reason", reason(e.Err)))
	}
	attrs = append(attrs, e.Attrs...)
	l.log.LogAttrs(ctx, level, "audit", attrs...)
	if l.keep != nil {
		s := stored(attrs, outcome(e.Err))
		s.Class = classify(e.Class, id)
		if s.Class == ClassAnonymous && s.Outcome != OutcomeOK {
			l.folded.WithLabelValues(e.Action).Inc()
			l.keep.fold(s)
			return
		}
		l.keep.add(s)
	}
}

// classify is an event's class: the one its recorder chose, else
// signed-in for a verified caller, else anonymous.
func classify(class string, id identity.Identity) string {
	switch {
	case ValidClass(class):
		return class
	case !id.Anonymous():
		return ClassSignedIn
	}
	return ClassAnonymous
}

// stored is the event the attributes Record logged describe.
func stored(attrs []slog.Attr, outcome string) Stored {
	s := Stored{Time: time.Now(), Outcome: outcome}
	for _, a := range attrs {
		v := a.Value.Resolve().String()
		switch a.Key {
		case "action":
			s.Action = v
		case "actor":
			s.Actor = v
		case "client":
			s.Client = v
		case "target":
			s.Target = v
		case "client_addr":
			s.ClientAddr = v
		case "request_id":
			s.RequestID = v
		case "reason":
			s.Reason = v
		case "outcome", "peer":
		default:
			s.Attrs = append(s.Attrs, KV{K: a.Key, V: v})
		}
	}
	return s
}

// reason is a failure's gRPC code and message. Services' messages name no
// secrets; errors that are no status (a store failure) are summarized.
func reason(err error) string {
	if st, ok := status.FromError(err); ok {
		return st.Code().String() + ": " + st.Message()
	}
	var se interface{ GRPCStatus() *status.Status }
	if errors.As(err, &se) {
		return se.GRPCStatus().Code().String() + ": " + se.GRPCStatus().Message()
	}
	return err.Error()
}
