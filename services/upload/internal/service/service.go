// Package service is the central upload: the sites' connectors store one
// patient document per request, read and set their last upload timestamp and
// delete patients (UploadService); operators manage the connectors'
// credentials and read what was stored (UploadAdmin).
package service

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"time"
	"unicode/utf8"

	"google.golang.org/grpc/metadata"

	"fris.dev/pkg/authheader"
	"fris.dev/pkg/inputlimit"
	"fris.dev/pkg/password"
	"fris.dev/pkg/ratelimit"
	"fris.dev/pkg/rpcerr"
	"fris.dev/services/upload/internal/contenttype"
	"fris.dev/services/upload/internal/patient"
	"fris.dev/services/upload/internal/stats"
	"fris.dev/services/upload/internal/storage"
)

// Validation modes: what an upload with values the registry refuses gets.
const (
	ValidateOff    = "off"
	ValidateWarn   = "warn"
	ValidateReject = "reject"
)

// Config is the service's behaviour.
type Config struct {
	MaxDocumentBytes int64
	MaxDepth         int
	// Validation is ValidateOff, ValidateWarn or ValidateReject.
	Validation string
	// Guard limits failed Basic credentials per username and per client
	// address (docs/security.md, "Abuse limits"); nil limits nothing.
	Guard *ratelimit.Guard
	// MaxParseBytes bounds the bytes of documents parsed at once (a
	// document waits for its share); 0: no bound.
	MaxParseBytes int64
	// Sites, when set, is the site registry a new credential's site must
	// be in; nil checks nothing.
	Sites Sites
	// RegistryTimeout bounds the value check of one upload, so that a
	// registry that does not answer is noticed (stored unchecked in warn,
	// 503 in reject) well before the gateway gives up on the request;
	// 0: only the call's own deadline.
	RegistryTimeout time.Duration
}

// Checker validates values against the registry.
type Checker interface {
	Check(ctx context.Context, values []patient.Value) ([]Problem, error)
}

// Problem is one value the registry refused.
type Problem struct {
	patient.Value
	Reason string
}

// Counters observe what happened to uploads (Prometheus in production).
type Counters interface {
	Upload(outcome string)
	ValueProblems(n int)
}

type noCounters struct{}

func (noCounters) Upload(string)     {}
func (noCounters) ValueProblems(int) {}

// Service holds the upload's logic; Public and Admin expose it over gRPC.
type Service struct {
	cfg     Config
	store   storage.Store
	hasher  *password.Hasher
	checker Checker
	count   Counters
	log     *slog.Logger
	now     func() time.Time
	guard   *ratelimit.Guard
	parsing *parseBudget
}

// New returns the service. checker may be nil when validation is off.
func New(cfg Config, store storage.Store, hasher *password.Hasher, checker Checker, counters Counters, log *slog.Logger) *Service {
	if counters == nil {
		counters = noCounters{}
	}
	if cfg.Validation == "" {
		cfg.Validation = ValidateOff
	}
	return &Service{cfg: cfg, store: store, hasher: hasher, checker: checker, count: counters, log: log, now: time.Now, guard: cfg.Guard,
		parsing: newParseBudget(cfg.MaxParseBytes, 2*time.Second, freeMemory)}
}

// SetClock replaces the clock (tests).
func (s *Service) SetClock(now func() time.Time) { s.now = now }

// Ready reports whether the store answers.
func (s *Service) Ready(ctx context.Context) error { return s.store.Ping(ctx) }

func (s *Service) err(ctx context.Context, err error) error { return rpcerr.From(ctx, s.log, err) }

// authorize checks the Basic credentials the gateway forwarded against the
// teiler of the request path.
func (s *Service) authorize(ctx context.Context, t storage.Teiler) error {
	user, pass, ok := basicAuth(ctx)
	if !ok {
		return rpcerr.New(rpcerr.ErrUnauthenticated, "Basic credentials are required")
	}
	c, err := s.store.Credential(ctx, user)
	if err != nil && !errors.Is(err, storage.ErrNotFound) {
		return err
	}
	if errors.Is(err, storage.ErrNotFound) {
		// Spend a check's time so the answer does not tell which usernames
		// exist, under the same abuse limit as a wrong password.
		a, err := s.guard.Begin(ctx, user, false)
		if err != nil {
			return err
		}
		s.hasher.Burn(ctx, pass)
		if ctx.Err() != nil {
			a.Cancel(ctx)
			return ctx.Err()
		}
		a.Failed(ctx)
		return rpcerr.New(rpcerr.ErrUnauthenticated, "wrong username or password")
	}
	// A credential right a moment ago costs no limiter round trip (a
	// connector presents it with every upload), concurrent checks of it
	// share one hash, and its holder skips the per-username ceiling from
	// an address it succeeded from before: guessing strangers cannot stop
	// a site's uploads.
	if err := s.hasher.Verify(ctx, c.Hash, pass, s.guard.Gate(user, false)); err != nil || c.Disabled {
		if ratelimit.IsThrottled(err) {
			return err
		}
		if ctx.Err() != nil {
			// Gave up waiting for a hashing slot: not the client's mistake.
			return ctx.Err()
		}
		return rpcerr.New(rpcerr.ErrUnauthenticated, "wrong username or password")
	}
	if c.Teiler != t {
		return rpcerr.New(rpcerr.ErrPermission, "these credentials may not upload for %s", t)
	}
	return nil
}

func basicAuth(ctx context.Context) (user, pass string, ok bool) {
	md, _ := metadata.FromIncomingContext(ctx)
	v := md.Get("authorization")
	if len(v) != 1 {
		return "", "", false
	}
	user, pass, err := authheader.Basic(v[0])
	return user, pass, err == nil && user != ""
}

func checkTeiler(t storage.Teiler) error {
	if t.SiteID == "" || t.TeilerID == "" {
		return rpcerr.New(rpcerr.ErrInvalid, "site and teiler ids are required")
	}
	if len(t.SiteID) > maxTeilerID || len(t.TeilerID) > maxTeilerID {
		return rpcerr.New(rpcerr.ErrInvalid, "site and teiler ids are at most %d bytes", maxTeilerID)
	}
	return nil
}

// maxTeilerID bounds site and teiler ids so that, with a patient id of up to
// 512 bytes, a store key almost always fits (see checkID).
const maxTeilerID = 128

// checkID refuses patient ids no client should send: empty, not UTF-8,
// with control characters, or too long for a key.
func checkID(t storage.Teiler, id string) error {
	switch {
	case id == "":
		return rpcerr.New(rpcerr.ErrInvalid, "the patient id is empty")
	case len(id) > 512:
		return rpcerr.New(rpcerr.ErrInvalid, "the patient id is longer than 512 bytes")
	case !utf8.ValidString(id):
		return rpcerr.New(rpcerr.ErrInvalid, "the patient id is not UTF-8")
	case strings.ContainsFunc(id, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		return rpcerr.New(rpcerr.ErrInvalid, "the patient id contains control characters")
	case !storage.FitsKey(t, id):
		// Only ids (and site or teiler ids) full of % and / get here.
		return rpcerr.New(rpcerr.ErrInvalid, "the patient id is too long: each %% and / counts three bytes")
	}
	return nil
}

// Outcome of a patient upload.
type Outcome int

const (
	Created Outcome = iota + 1
	Replaced
	Rejected
)

// mediaType refuses a body whose Content-Type the service does not read.
// It comes before every other check, the credentials' too, as when the
// gateway decided it: a client learns what to send first.
func mediaType(contentType string, b contenttype.Body) (contenttype.Charset, error) {
	cs, err := contenttype.Parse(contentType, b)
	var ue *contenttype.UnsupportedError
	if errors.As(err, &ue) {
		return cs, rpcerr.New(rpcerr.ErrMediaType, "%s", ue.Reason)
	}
	return cs, err
}

// CheckCredentials runs the checks a call with a body of kind b (0: none)
// runs before it looks at the body: media type, teiler, credentials. The
// gateway calls it before it reads a body, so that a request without valid
// credentials never makes it (or this service) hold one.
func (s *Service) CheckCredentials(ctx context.Context, t storage.Teiler, contentType string, b contenttype.Body) error {
	if b != 0 {
		if _, err := mediaType(contentType, b); err != nil {
			return err
		}
	}
	if err := checkTeiler(t); err != nil {
		return err
	}
	return s.authorize(ctx, t)
}

// PutPatient parses, optionally validates and stores one document sent as
// contentType.
func (s *Service) PutPatient(ctx context.Context, t storage.Teiler, id string, doc []byte, contentType string) (Outcome, []Problem, error) {
	if _, err := mediaType(contentType, contenttype.Patient); err != nil {
		return 0, nil, err
	}
	if err := checkTeiler(t); err != nil {
		return 0, nil, err
	}
	if err := s.authorize(ctx, t); err != nil {
		return 0, nil, err
	}
	if err := checkID(t, id); err != nil {
		return 0, nil, err
	}
	if int64(len(doc)) > s.cfg.MaxDocumentBytes {
		return 0, nil, rpcerr.New(rpcerr.ErrTooLarge, "the document is larger than %d bytes", s.cfg.MaxDocumentBytes)
	}
	release, err := s.parsing.acquire(ctx, int64(len(doc)))
	if err != nil {
		return 0, nil, err
	}
	defer release()
	p, err := patient.Parse(bytes.NewReader(doc), patient.Limits{MaxBytes: s.cfg.MaxDocumentBytes, MaxDepth: s.cfg.MaxDepth})
	var invalid *patient.InvalidError
	switch {
	case errors.Is(err, patient.ErrTooLarge):
		return 0, nil, rpcerr.New(rpcerr.ErrTooLarge, "the document is larger than %d bytes", s.cfg.MaxDocumentBytes)
	case errors.As(err, &invalid):
		s.count.Upload("invalid")
		return 0, nil, rpcerr.New(rpcerr.ErrInvalid, "%s", invalid.Reason)
	case err != nil:
		return 0, nil, err
	}
	if p.ID != id {
		s.count.Upload("invalid")
		return 0, nil, rpcerr.New(rpcerr.ErrInvalid, "the document's id %q is not the path's patient id %q", clip(p.ID), clip(id))
	}
	problems, err := s.validate(ctx, t, p)
	if err != nil {
		return 0, nil, err
	}
	if len(problems) > 0 && s.cfg.Validation == ValidateReject {
		s.count.Upload("rejected")
		return Rejected, problems, nil
	}
	n := p.Counts()
	replaced, err := s.store.PutPatient(ctx, storage.Summary{
		Teiler: t, PatientID: id, Stored: s.now().UnixNano(), Size: len(doc),
		Cases: n.Cases, Samples: n.Samples, Attributes: n.Attributes, Containers: n.Containers, Refs: n.Refs,
	}, doc)
	if err != nil {
		return 0, nil, err
	}
	if replaced {
		s.count.Upload("replaced")
		return Replaced, problems, nil
	}
	s.count.Upload("created")
	return Created, problems, nil
}

// validate asks the registry about every value, per the configured mode.
func (s *Service) validate(ctx context.Context, t storage.Teiler, p *patient.Patient) ([]Problem, error) {
	if s.cfg.Validation == ValidateOff || s.checker == nil {
		return nil, nil
	}
	values := p.Values()
	if len(values) == 0 {
		return nil, nil
	}
	cctx := ctx
	if s.cfg.RegistryTimeout > 0 {
		var cancel context.CancelFunc
		cctx, cancel = context.WithTimeout(ctx, s.cfg.RegistryTimeout)
		defer cancel()
	}
	problems, err := s.checker.Check(cctx, values)
	if err != nil {
		if s.cfg.Validation == ValidateReject {
			// Storing unchecked values would break the promise of the mode;
			// the connector retries later.
			s.log.ErrorContext(ctx, "value validation failed", "err", err)
			return nil, rpcerr.Errorf(unavailable, "the registry cannot validate values right now; try again later")
		}
		s.log.WarnContext(ctx, "value validation skipped: the registry did not answer", "site", t.SiteID, "teiler", t.TeilerID, "patient", p.ID, "err", err)
		return nil, nil
	}
	if len(problems) > 0 {
		s.count.ValueProblems(len(problems))
		if s.cfg.Validation == ValidateWarn {
			for _, pr := range problems {
				s.log.WarnContext(ctx, "stored a value the registry refuses", "site", t.SiteID, "teiler", t.TeilerID,
					"patient", p.ID, "where", pr.Where, "mdr_key", pr.MdrKey, "reason", pr.Reason)
			}
		}
	}
	return problems, nil
}

// DeletePatient removes one patient of the teiler.
func (s *Service) DeletePatient(ctx context.Context, t storage.Teiler, id string) error {
	if err := checkTeiler(t); err != nil {
		return err
	}
	if err := s.authorize(ctx, t); err != nil {
		return err
	}
	if err := s.store.DeletePatient(ctx, t, id); err != nil {
		if errors.Is(err, storage.ErrNotFound) {
			return rpcerr.New(storage.ErrNotFound, "no patient %q at %s", clip(id), t)
		}
		return err
	}
	return nil
}

// DeleteByPrefix removes the teiler's patients whose id starts with prefix.
func (s *Service) DeleteByPrefix(ctx context.Context, t storage.Teiler, prefix string) (int, error) {
	if err := checkTeiler(t); err != nil {
		return 0, err
	}
	if err := s.authorize(ctx, t); err != nil {
		return 0, err
	}
	if prefix == "" {
		return 0, rpcerr.New(rpcerr.ErrInvalid, "the prefix must not be empty")
	}
	return s.store.DeletePatientsByPrefix(ctx, t, prefix)
}

// LastUpload is the teiler's timestamp; zero time when it never set one.
func (s *Service) LastUpload(ctx context.Context, t storage.Teiler) (time.Time, error) {
	if err := checkTeiler(t); err != nil {
		return time.Time{}, err
	}
	if err := s.authorize(ctx, t); err != nil {
		return time.Time{}, err
	}
	n, err := s.store.LastUpload(ctx, t)
	if errors.Is(err, storage.ErrNotFound) {
		return time.Time{}, nil
	}
	if err != nil {
		return time.Time{}, err
	}
	return time.Unix(0, n).UTC(), nil
}

// SetLastUpload stores the document's timestamp when it holds a parseable
// one that is not in the future, else the current time (an empty document
// too). contentType's charset says how doc is encoded.
func (s *Service) SetLastUpload(ctx context.Context, t storage.Teiler, doc []byte, contentType string) (time.Time, bool, error) {
	cs, err := mediaType(contentType, contenttype.Stats)
	if err != nil {
		return time.Time{}, false, err
	}
	if err := checkTeiler(t); err != nil {
		return time.Time{}, false, err
	}
	if err := s.authorize(ctx, t); err != nil {
		return time.Time{}, false, err
	}
	// Only a timestamp is kept; a real document is a few hundred bytes.
	if err := inputlimit.Size("the uploadStats document", len(doc), inputlimit.Text); err != nil {
		return time.Time{}, false, err
	}
	at, ok, err := stats.Parse(bytes.NewReader(doc), cs)
	if err != nil {
		return time.Time{}, false, rpcerr.New(rpcerr.ErrInvalid, "%s", err.Error())
	}
	now := s.now()
	// A client clock slightly ahead is common; a timestamp from the future
	// would make the next upload skip patients, so the server's clock wins.
	if !ok || at.After(now) {
		at, ok = now, false
	}
	at = at.UTC().Truncate(time.Second)
	if err := s.store.SetLastUpload(ctx, t, at.UnixNano()); err != nil {
		return time.Time{}, false, err
	}
	return at, ok, nil
}

// clip shortens what a client sent before it is echoed in an error.
func clip(s string) string {
	if len(s) <= 80 {
		return s
	}
	for i := 80; i > 0; i-- {
		if utf8.RuneStart(s[i]) {
			return s[:i] + "..."
		}
	}
	return ""
}
