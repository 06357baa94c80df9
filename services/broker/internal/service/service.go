// Package service is the search broker: banks register, poll the inquiries
// addressed to their site and reply (BrokerService); researchers and
// operators write inquiries and read the replies (ResearcherService,
// BrokerAdmin).
package service

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"fris.dev/pkg/audit"
	"fris.dev/pkg/ratelimit"
	"fris.dev/pkg/rpcerr"
	brokerv1 "fris.dev/proto/broker/v1"
	"fris.dev/services/broker/internal/mailer"
	"fris.dev/services/broker/internal/samplyxml"
	"fris.dev/services/broker/internal/storage"
)

// Registration modes.
const (
	ModeApproval       = "approval"
	ModeActivationCode = "activation-code"
)

// Config is the broker's behaviour.
type Config struct {
	Name string
	// Registration is ModeApproval or ModeActivationCode.
	Registration  string
	ActivationTTL time.Duration
	// MaxActivationAttempts wrong codes drop the pending activation
	// (default 100). It bounds the guesses at one code; it is no lower
	// than the account ceiling's default burst, so strangers cannot drop a
	// bank's activation with fewer guesses than it takes them to fill that
	// ceiling (which the abuse limits bound anyway).
	MaxActivationAttempts int
	MaxReplyBytes         int
	MaxExposeBytes        int
	// MinCount is the small-count rule's threshold: researchers see a
	// count below it only as "below MinCount" (package suppress); 0: off.
	MinCount int32
	// TokenCacheTTL bounds how long a replica trusts a bank it looked up
	// by token: a bank deleted or relinked through another replica is seen
	// within this time (0: no cache).
	TokenCacheTTL time.Duration
	// ListCacheTTL bounds how long a replica reuses the rendered inquiry
	// lists: a change made through another replica is seen within it.
	ListCacheTTL time.Duration
	// PublicURL is the banks' API base as clients reach it (the prefix
	// .../searchbroker), for ExposeURL.
	PublicURL string
	// Audit records bank registrations and deletions and researchers'
	// changes to inquiries (admin calls are recorded around the admin API,
	// audit.AdminService); nil records nothing.
	Audit *audit.Logger
	// WatchInterval is how often WatchReplies re-reads the replies, so a
	// reply stored through another replica shows within it (default 2 s).
	WatchInterval time.Duration
	// Done, closed when the broker begins to shut down, ends the open
	// WatchReplies calls (their clients reconnect to another replica)
	// rather than holding the graceful stop until its timeout.
	Done <-chan struct{}
	// Guards are the abuse limits (docs/security.md, "Abuse limits"); nil
	// ones limit nothing.
	Guards Guards
}

// Guards limit what banks and anonymous callers may try.
type Guards struct {
	// BankToken: failed bank tokens, per bank email where the path names
	// one (and per client address, also for tokens alone).
	BankToken *ratelimit.Guard
	// ActivationCode: failed activation codes, per bank email.
	ActivationCode *ratelimit.Guard
	// ActivationMail: activation mails sent, per bank email and per
	// client address (each spends one).
	ActivationMail *ratelimit.Guard
}

// Service holds the broker's logic; Public, Researcher and Admin expose it.
type Service struct {
	cfg    Config
	store  storage.Store
	mail   mailer.Mailer
	log    *slog.Logger
	now    func() time.Time
	tokens *tokenCache
	// watchers are the open WatchReplies calls, woken by Reply.
	watchers notifier
	// parsed remembers what stored replies say: watchers re-read them
	// every WatchInterval.
	parsed parseMemo

	// gen counts local inquiry and bank changes; a list snapshot built
	// before the latest change is stale.
	gen       atomic.Int64
	snap      atomic.Pointer[snapshot]
	rebuildMu sync.Mutex
}

// New returns the broker on store.
func New(cfg Config, store storage.Store, m mailer.Mailer, log *slog.Logger) *Service {
	if cfg.MaxActivationAttempts <= 0 {
		cfg.MaxActivationAttempts = 100
	}
	return &Service{cfg: cfg, store: store, mail: m, log: log, now: time.Now, tokens: newTokenCache(cfg.TokenCacheTTL, 100_000)}
}

// SetClock replaces the clock (tests).
func (s *Service) SetClock(now func() time.Time) { s.now = now }

// Ready reports whether the store answers.
func (s *Service) Ready(ctx context.Context) error { return s.store.Ping(ctx) }

// changed marks local data as changed: cached lists are rebuilt.
func (s *Service) changed() { s.gen.Add(1) }

// snapshot is the rendered inquiry list of every site at one moment.
type snapshot struct {
	gen        int64
	validUntil time.Time
	bySite     map[string][]byte
}

var emptyList = samplyxml.List(nil)

// siteList returns the rendered list for a site: released, unexpired
// inquiries addressed to it, in id order.
func (s *Service) siteList(ctx context.Context, site string) ([]byte, error) {
	if snap := s.fresh(); snap != nil {
		return snap.list(site), nil
	}
	s.rebuildMu.Lock()
	defer s.rebuildMu.Unlock()
	if snap := s.fresh(); snap != nil {
		return snap.list(site), nil
	}
	gen := s.gen.Load()
	now := s.now()
	all, err := s.store.Inquiries(ctx)
	if err != nil {
		return nil, err
	}
	refs := map[string][]samplyxml.Ref{}
	validUntil := now.Add(s.cfg.ListCacheTTL)
	for _, in := range all {
		if !listed(in, now) {
			continue
		}
		if exp := in.GetExpiresAt(); exp != nil && exp.AsTime().Before(validUntil) {
			validUntil = exp.AsTime()
		}
		for _, site := range in.GetTargetSites() {
			refs[site] = append(refs[site], samplyxml.Ref{ID: in.GetId(), Revision: in.GetRevision()})
		}
	}
	snap := &snapshot{gen: gen, validUntil: validUntil, bySite: make(map[string][]byte, len(refs))}
	for site, r := range refs {
		snap.bySite[site] = samplyxml.List(r)
	}
	if s.cfg.ListCacheTTL > 0 {
		s.snap.Store(snap)
	}
	return snap.list(site), nil
}

func (s *Service) fresh() *snapshot {
	snap := s.snap.Load()
	if snap == nil || snap.gen != s.gen.Load() || !s.now().Before(snap.validUntil) {
		return nil
	}
	return snap
}

func (sn *snapshot) list(site string) []byte {
	if b, ok := sn.bySite[site]; ok {
		return b
	}
	return emptyList
}

// listed reports whether banks see an inquiry at all: released and not
// expired.
func listed(in *brokerv1.Inquiry, now time.Time) bool {
	if in.GetStatus() != brokerv1.InquiryStatus_RELEASED {
		return false
	}
	exp := in.GetExpiresAt()
	return exp == nil || now.Before(exp.AsTime())
}

// visibleTo reports whether a bank may read an inquiry.
func visibleTo(in *brokerv1.Inquiry, b storage.Bank, now time.Time) bool {
	if b.Status != storage.BankActive || b.SiteID == "" || !listed(in, now) {
		return false
	}
	for _, site := range in.GetTargetSites() {
		if site == b.SiteID {
			return true
		}
	}
	return false
}

// errNoInquiry is the one answer for unknown inquiries and for inquiries
// the caller may not see, so ids cannot be enumerated.
func errNoInquiry(id string) error {
	return rpcerr.New(storage.ErrNotFound, "no inquiry %s", id)
}

// notFound gives a storage ErrNotFound a message of its own for the caller.
func notFound(err error, format string, a ...any) error {
	if errors.Is(err, storage.ErrNotFound) {
		return rpcerr.New(storage.ErrNotFound, format, a...)
	}
	return err
}

func trimmed(s string) string { return strings.TrimSpace(s) }
