package authn

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/url"
	"strconv"
	"sync/atomic"
	"time"

	"google.golang.org/protobuf/encoding/protojson"

	authv1 "fris.dev/proto/auth/v1"
)

// ErrRevoked: the token verifies but has been revoked (its user or client
// disabled or revoked, a new password, its chain or itself revoked).
var ErrRevoked = errors.New("token revoked")

// ErrRevocationStale: the revocation list has not been fetched for longer
// than the verifier's bound and it fails closed, so no token is accepted:
// not the client's fault, answered 503 with StaleRetryAfter.
var ErrRevocationStale = errors.New("revocation list out of date: tokens refused until it is fetched")

// StaleRetryAfter is the Retry-After, in seconds, of a refusal for
// ErrRevocationStale: a few polls' time for the auth service to come back,
// without a client retrying at every poll.
const StaleRetryAfter = "5"

// Kinds of revocation list entries (the auth service's storage.Revoke*).
const (
	revokeUser   = "user"
	revokeClient = "client"
	revokeChain  = "chain"
	revokeToken  = "token"
)

// maxRevocationList bounds a fetched list; entries are a few dozen bytes
// and live no longer than an access token.
const maxRevocationList = 16 << 20

// maxRevokedID: longer ids are no id the auth service writes.
const maxRevokedID = 256

// tokenRef is what revocation looks at in a verified token.
type tokenRef struct {
	sub, client, sid, jti string
	iat                   int64
}

// revoked is one entry in force: for users and clients, tokens issued
// before nbf are revoked; chains and tokens have none (all are).
type revoked struct {
	nbf, until int64
}

// revState is one version of the revocation list, never changed once
// published: verification reads it without locks, an update replaces it.
type revState struct {
	version                        uint32
	users, clients, chains, tokens map[string]revoked
}

// covers reports whether the state revokes t; now prunes nothing, entries
// past their until are harmless (no token they revoke is valid then).
func (s *revState) covers(t *tokenRef) bool {
	if s == nil {
		return false
	}
	if e, ok := s.users[t.sub]; ok && t.iat < e.nbf {
		return true
	}
	if t.client != "" {
		if e, ok := s.clients[t.client]; ok && t.iat < e.nbf {
			return true
		}
	}
	if t.sid != "" {
		if _, ok := s.chains[t.sid]; ok {
			return true
		}
	}
	if t.jti != "" {
		if _, ok := s.tokens[t.jti]; ok {
			return true
		}
	}
	return false
}

// apply returns the state after list: list alone when it is full, else s
// with list's entries added. Entries past their until at now are dropped,
// and so are entries that name nothing a token could carry.
func (s *revState) apply(list *authv1.RevocationList, now int64) *revState {
	n := &revState{version: list.GetVersion()}
	if s != nil && !list.GetFull() {
		n.users, n.clients, n.chains, n.tokens = maps.Clone(s.users), maps.Clone(s.clients), maps.Clone(s.chains), maps.Clone(s.tokens)
	}
	for _, m := range []*map[string]revoked{&n.users, &n.clients, &n.chains, &n.tokens} {
		if *m == nil {
			*m = map[string]revoked{}
		}
		maps.DeleteFunc(*m, func(_ string, e revoked) bool { return e.until <= now })
	}
	for _, r := range list.GetRevocations() {
		id, until := r.GetId(), int64(r.GetUntil())
		if id == "" || len(id) > maxRevokedID || until <= now {
			continue
		}
		var m map[string]revoked
		switch r.GetKind() {
		case revokeUser:
			m = n.users
		case revokeClient:
			m = n.clients
		case revokeChain:
			m = n.chains
		case revokeToken:
			m = n.tokens
		default:
			continue // a kind of a newer auth service: not ours to guess
		}
		e := m[id]
		m[id] = revoked{nbf: max(e.nbf, int64(r.GetNotBefore())), until: max(e.until, until)}
	}
	return n
}

// parseRevocationList reads the auth service's /revocations answer.
func parseRevocationList(b []byte) (*authv1.RevocationList, error) {
	var list authv1.RevocationList
	if err := (protojson.UnmarshalOptions{DiscardUnknown: true}).Unmarshal(b, &list); err != nil {
		return nil, fmt.Errorf("revocation list: %w", err)
	}
	return &list, nil
}

// revocations keeps the auth service's revocation list current by polling
// it: each poll asks for the changes since the version held, so an idle
// poll is one small request and one empty answer. Checking a token is a
// few map lookups in memory; no request waits for the auth service.
type revocations struct {
	url   string
	every time.Duration
	http  *http.Client
	now   func() time.Time
	log   *slog.Logger
	state atomic.Pointer[revState]
	// failing is set while polls fail, so the log says so once per outage.
	failing bool
	// failClosed refuses tokens (stale) once the list was last fetched
	// more than maxStale ago; fetched is when, in Unix nanoseconds (the
	// start until the first fetch).
	failClosed bool
	maxStale   time.Duration
	fetched    atomic.Int64
	// closed is set while stale refuses tokens, so the log says so once.
	closed bool
}

// stale reports whether tokens are to be refused: failing closed and the
// list older than maxStale. A load and a clock read per token.
func (r *revocations) stale() bool {
	if r == nil || !r.failClosed {
		return false
	}
	return r.now().Sub(time.Unix(0, r.fetched.Load())) > r.maxStale
}

func (r *revocations) covers(t *tokenRef) bool {
	if r == nil {
		return false
	}
	return r.state.Load().covers(t)
}

// run polls until ctx ends. When the auth service cannot be reached, the
// last list stays in force (fail open: refusing every token would turn an
// auth outage into an outage of every bearer path); the log says so. With
// failClosed, once the list is older than maxStale, tokens are refused
// (stale) until a poll succeeds; the log says that too.
func (r *revocations) run(ctx context.Context) {
	t := time.NewTicker(r.every)
	defer t.Stop()
	for {
		err := r.poll(ctx)
		switch {
		case err != nil && !r.failing && ctx.Err() == nil:
			r.failing = true
			r.log.Warn("revocation list not fetched: tokens revoked from now on are accepted until it is", "url", r.url, "err", err)
		case err == nil && r.failing:
			r.failing = false
			r.log.Info("revocation list fetched again", "url", r.url)
		}
		switch stale := r.stale(); {
		case stale && !r.closed:
			r.closed = true
			r.log.Warn("revocation list out of date: every bearer token and Explorer session is refused (503) until it is fetched (-revocation-fail-closed)",
				"url", r.url, "max_stale", r.maxStale)
		case !stale && r.closed:
			r.closed = false
			r.log.Info("revocation list current again: tokens accepted", "url", r.url)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// poll fetches the changes since the version held and publishes the new
// state.
func (r *revocations) poll(ctx context.Context) error {
	cur := r.state.Load()
	var since uint32
	if cur != nil {
		since = cur.version
	}
	u, err := url.Parse(r.url)
	if err != nil {
		return err
	}
	q := u.Query()
	q.Set("since", strconv.FormatUint(uint64(since), 10))
	u.RawQuery = q.Encode()
	// A poll never outlasts the next one's turn.
	ctx, cancel := context.WithTimeout(ctx, max(r.every, time.Second))
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return err
	}
	res, err := r.http.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("revocation list: status %d", res.StatusCode)
	}
	b, err := io.ReadAll(io.LimitReader(res.Body, maxRevocationList+1))
	if err != nil {
		return err
	}
	if len(b) > maxRevocationList {
		return errors.New("revocation list: larger than 16 MiB")
	}
	list, err := parseRevocationList(b)
	if err != nil {
		return err
	}
	if !list.GetFull() && list.GetVersion() < since {
		// Changes that end before what we hold: the auth store went back
		// (a restore). Keep what we hold until the next poll has fetched
		// everything (since=0).
		restart := *cur
		restart.version = 0
		r.state.Store(&restart)
		return errors.New("revocation list: version went back; fetching it whole")
	}
	r.state.Store(cur.apply(list, r.now().Unix()))
	r.fetched.Store(r.now().UnixNano())
	return nil
}
