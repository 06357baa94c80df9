package authn

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/hashicorp/golang-lru/v2/expirable"
	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/lestrrat-go/jwx/v2/jwk"

	"fris.dev/pkg/accesstoken"
	"fris.dev/pkg/identity"
)

// Verification errors. Callers only need to know that a token was refused;
// the reasons help tests and debug logs.
var (
	ErrMalformed     = errors.New("token is not a compact JWS")
	ErrAlgorithm     = errors.New("token algorithm not accepted")
	ErrUnknownKey    = errors.New("token signed by an unknown key")
	ErrNoKeys        = errors.New("signing keys not available")
	ErrTokenType     = errors.New("token is not an access token")
	ErrInvalidClaims = errors.New("token claims not valid")
)

// allowedAlgs are the only JWS algorithms the auth service signs with:
// RSA for every client by default, ES256 or EdDSA for a client an operator
// set so (a key of each is published with its alg).
var allowedAlgs = map[jwa.SignatureAlgorithm]bool{jwa.RS256: true, jwa.RS512: true, jwa.ES256: true, jwa.EdDSA: true}

// minRSABits refuses weak keys even when published.
const minRSABits = 2048

// JWTConfig configures a JWT verifier.
type JWTConfig struct {
	// JWKSURL is where the auth service publishes its public keys.
	JWKSURL string
	// Issuer, when set, must equal the token's `iss`.
	Issuer string
	// Skew is the clock difference tolerated on exp, nbf and iat.
	Skew time.Duration
	// RefreshInterval is how often the key set is fetched in the
	// background (default 15 minutes).
	RefreshInterval time.Duration
	// MinRefreshInterval is the least time between two fetches caused by
	// tokens (an unknown kid, or no keys yet), default 2 s. It is what keeps
	// a flood of made-up kids from hammering the auth service: such fetches
	// are coalesced, at most one per interval.
	MinRefreshInterval time.Duration
	// HTTPClient fetches the key set (default: 5 s timeout, no proxy).
	HTTPClient *http.Client
	// Now is the clock (tests); default time.Now.
	Now func() time.Time
	// Log receives fetch failures; default discards.
	Log *slog.Logger
	// RevocationsURL is the auth service's revocation list (GET
	// ?since=VERSION); empty: no token is refused as revoked.
	RevocationsURL string
	// RevocationPoll is how often the list is polled (default 1 s): the
	// longest a revoked token is still accepted, plus one request.
	RevocationPoll time.Duration
	// RevocationFailClosed refuses every token (ErrRevocationStale) while
	// the list has not been fetched for longer than RevocationMaxStale;
	// false keeps the last list in force however old it is (fail open).
	RevocationFailClosed bool
	// RevocationMaxStale is how long the list may go unfetched before
	// RevocationFailClosed refuses tokens (default 1 minute). The clock
	// starts with the verifier, so a gateway that never reaches the auth
	// service refuses tokens from then on.
	RevocationMaxStale time.Duration
}

// JWT verifies access tokens signed by the auth service against the keys it
// publishes as a JWK Set, cached with jwk.Cache.
type JWT struct {
	cfg   JWTConfig
	cache *jwk.Cache
	keys  atomic.Pointer[keySet]

	// sem serialises token-triggered fetches; the fields below it are
	// guarded by it.
	sem       chan struct{}
	lastStart time.Time
	lastErr   error
	// gen counts fetches started; a caller that saw generation g and finds
	// gen > g knows a fetch began after it looked.
	gen atomic.Uint64

	// verified remembers tokens that passed, so a client reusing its access
	// token for many reads is not RSA-verified and parsed each time (that
	// made a read with a token ~30% slower than one without).
	verified *expirable.LRU[string, verifiedToken]

	// rev is the revocation list every token is checked against, those
	// remembered in verified included; nil when not configured.
	rev *revocations
}

// verifiedToken is a token that passed Verify: it stays good until its exp
// (plus skew) and only while the key that signed it is still published.
type verifiedToken struct {
	id  identity.Identity
	kid string
	key *pubKey
	nbf time.Time
	exp time.Time
	ref tokenRef
}

// maxVerifiedAge bounds how long a verified token is remembered, so memory
// turns over even for long-lived tokens.
const maxVerifiedAge = 5 * time.Minute

// keySet is one fetched JWKS, indexed by kid.
type keySet struct {
	byKID map[string]*pubKey
}

func (ks *keySet) get(kid string) (*pubKey, bool) {
	if ks == nil {
		return nil, false
	}
	k, ok := ks.byKID[kid]
	return k, ok
}

func loaded(ks *keySet) bool { return ks != nil }

// pubKey is one published key; a fetch makes new ones, so a remembered
// token is only good while its key is the very one still published.
type pubKey struct {
	// alg is the key's algorithm: the JWK's, or without one the only
	// algorithm its kind is used with here (ES256 for P-256, EdDSA for
	// Ed25519); "" for an RSA key that names none (RS256 or RS512).
	alg jwa.SignatureAlgorithm
	key any // *rsa.PublicKey, *ecdsa.PublicKey or ed25519.PublicKey
}

// accepts reports whether a token whose header names alg may be verified
// with k: only with the key's own algorithm, so an ES256 or HS256 header
// on an RSA key's kid (alg confusion) is refused.
func (k *pubKey) accepts(alg jwa.SignatureAlgorithm) bool {
	if k.alg == "" {
		return alg == jwa.RS256 || alg == jwa.RS512
	}
	return alg == k.alg
}

// NewJWT sets up the key cache and starts one background fetch. It never
// fails because the auth service is down: keys are fetched lazily on the
// first token, and by the cache's own schedule. The cache lives until ctx
// ends.
func NewJWT(ctx context.Context, cfg JWTConfig) (*JWT, error) {
	if cfg.JWKSURL == "" {
		return nil, errors.New("authn: JWKS URL is empty")
	}
	if cfg.RefreshInterval <= 0 {
		cfg.RefreshInterval = 15 * time.Minute
	}
	if cfg.RefreshInterval < time.Second {
		cfg.RefreshInterval = time.Second
	}
	if cfg.MinRefreshInterval <= 0 {
		cfg.MinRefreshInterval = 2 * time.Second
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{Proxy: nil}}
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	v := &JWT{cfg: cfg, sem: make(chan struct{}, 1), verified: expirable.NewLRU[string, verifiedToken](10000, nil, maxVerifiedAge)}
	// The refresh window is how often the cache looks for due fetches.
	window := min(time.Minute, cfg.RefreshInterval)
	v.cache = jwk.NewCache(ctx, jwk.WithRefreshWindow(window), jwk.WithErrSink(httprcSink{v}))
	err := v.cache.Register(cfg.JWKSURL,
		jwk.WithHTTPClient(limitedClient{cfg.HTTPClient}),
		jwk.WithRefreshInterval(cfg.RefreshInterval),
		jwk.WithMinRefreshInterval(cfg.RefreshInterval),
		// Every successful fetch, background ones included, replaces the
		// snapshot verification reads without locks.
		jwk.WithPostFetcher(jwk.PostFetchFunc(func(_ string, set jwk.Set) (jwk.Set, error) {
			v.keys.Store(index(set))
			return set, nil
		})),
	)
	if err != nil {
		return nil, fmt.Errorf("authn: %w", err)
	}
	if cfg.RevocationsURL != "" {
		if cfg.RevocationPoll <= 0 {
			cfg.RevocationPoll = time.Second
		}
		if cfg.RevocationMaxStale <= 0 {
			cfg.RevocationMaxStale = time.Minute
		}
		v.rev = &revocations{url: cfg.RevocationsURL, every: cfg.RevocationPoll, http: cfg.HTTPClient, now: cfg.Now, log: cfg.Log,
			failClosed: cfg.RevocationFailClosed, maxStale: cfg.RevocationMaxStale}
		v.rev.fetched.Store(cfg.Now().UnixNano())
		go v.rev.run(ctx)
	}
	go func() {
		if err := v.refresh(ctx, v.gen.Load(), loaded); err != nil {
			v.cfg.Log.Warn("signing keys not fetched yet; will retry on demand", "url", cfg.JWKSURL, "err", err)
		}
	}()
	return v, nil
}

// maxJWKS bounds a fetched key set; a real one is a few KiB.
const maxJWKS = 1 << 20

// limitedClient cuts key set responses at maxJWKS (a longer one then fails
// to parse, and the keys already known stay in use).
type limitedClient struct{ c *http.Client }

func (l limitedClient) Get(u string) (*http.Response, error) {
	res, err := l.c.Get(u)
	if err != nil {
		return nil, err
	}
	res.Body = struct {
		io.Reader
		io.Closer
	}{io.LimitReader(res.Body, maxJWKS), res.Body}
	return res, nil
}

type httprcSink struct{ v *JWT }

func (s httprcSink) Error(err error) {
	s.v.cfg.Log.Warn("background refresh of signing keys failed", "url", s.v.cfg.JWKSURL, "err", err)
}

// index keeps the set's usable signing keys: use "sig" or unset, with a
// kid, and of a kind and algorithm the auth service signs with: RSA of
// 2048 bits or more (RS256, RS512), EC P-256 (ES256), OKP Ed25519 (EdDSA).
// A key whose named alg does not fit its kind is dropped.
func index(set jwk.Set) *keySet {
	ks := &keySet{byKID: map[string]*pubKey{}}
	for i := 0; i < set.Len(); i++ {
		k, _ := set.Key(i)
		if k.KeyID() == "" {
			continue
		}
		if u := k.KeyUsage(); u != "" && u != string(jwk.ForSignature) {
			continue
		}
		var alg jwa.SignatureAlgorithm
		if a := k.Algorithm(); a != nil && a.String() != "" {
			alg = jwa.SignatureAlgorithm(a.String())
			if !allowedAlgs[alg] {
				continue
			}
		}
		if pk := usable(k, alg); pk != nil {
			ks.byKID[k.KeyID()] = pk
		}
	}
	return ks
}

// usable is k as a verification key, or nil when its kind, size or curve
// is not one the auth service signs with, or alg (the JWK's, "" for none)
// does not fit it.
func usable(k jwk.Key, alg jwa.SignatureAlgorithm) *pubKey {
	switch k.KeyType() {
	case jwa.RSA:
		var pub rsa.PublicKey
		if alg != "" && alg != jwa.RS256 && alg != jwa.RS512 {
			return nil
		}
		if err := k.Raw(&pub); err != nil || pub.N == nil || pub.N.BitLen() < minRSABits {
			return nil
		}
		return &pubKey{alg: alg, key: &pub}
	case jwa.EC:
		var pub ecdsa.PublicKey
		if (alg != "" && alg != jwa.ES256) || k.Raw(&pub) != nil || pub.Curve != elliptic.P256() {
			return nil
		}
		return &pubKey{alg: jwa.ES256, key: &pub}
	case jwa.OKP:
		var pub ed25519.PublicKey
		if (alg != "" && alg != jwa.EdDSA) || k.Raw(&pub) != nil || len(pub) != ed25519.PublicKeySize {
			return nil
		}
		return &pubKey{alg: jwa.EdDSA, key: pub}
	}
	return nil
}

// Ready reports whether signing keys are loaded, fetching them (rate
// limited) when they are not.
func (v *JWT) Ready(ctx context.Context) error {
	if v.keys.Load() != nil {
		return nil
	}
	if err := v.refresh(ctx, v.gen.Load(), loaded); err != nil {
		return fmt.Errorf("%w: %v", ErrNoKeys, err)
	}
	if v.keys.Load() == nil {
		return ErrNoKeys
	}
	return nil
}

// refresh makes sure the keys reflect a fetch started after the caller saw
// generation seen, unless have already holds for the current keys: it joins
// such a fetch, or waits out the rate limit and fetches. Fetches are
// serialised and at most one starts per MinRefreshInterval. When the last
// fetch failed within that interval (the auth service is down), it gives up
// at once rather than delay the caller.
func (v *JWT) refresh(ctx context.Context, seen uint64, have func(*keySet) bool) error {
	select {
	case v.sem <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-v.sem }()
	if have(v.keys.Load()) {
		return nil // a fetch that ended while we waited brought it
	}
	if v.gen.Load() > seen {
		return v.lastErr // a fetch began after the caller looked
	}
	if wait := time.Until(v.lastStart.Add(v.cfg.MinRefreshInterval)); wait > 0 {
		if v.lastErr != nil {
			return v.lastErr
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		}
	}
	v.lastStart = time.Now()
	v.gen.Add(1)
	_, err := v.cache.Refresh(ctx, v.cfg.JWKSURL)
	v.lastErr = err
	return err
}

// lookup finds the key of kid, fetching the key set once when it is unknown
// (not for Known: see noFetch).
func (v *JWT) lookup(ctx context.Context, kid string) (*pubKey, error) {
	seen := v.gen.Load()
	if ks := v.keys.Load(); ks != nil {
		if k, ok := ks.get(kid); ok {
			return k, nil
		}
	}
	if ctx.Value(noFetch{}) != nil {
		return nil, ErrUnknownKey
	}
	err := v.refresh(ctx, seen, func(ks *keySet) bool {
		_, ok := ks.get(kid)
		return ok
	})
	ks := v.keys.Load()
	if ks == nil {
		if err == nil {
			err = errors.New("empty key set")
		}
		return nil, fmt.Errorf("%w: %v", ErrNoKeys, err)
	}
	if k, ok := ks.byKID[kid]; ok {
		return k, nil
	}
	return nil, ErrUnknownKey
}

// noFetch marks Known's verifications: a token whose key is not loaded is
// refused at once instead of waiting for a fetch of the key set.
type noFetch struct{}

// Known returns the identity of token when the gateway can tell without
// waiting that it is valid: Verify's checks (revocation included), with a
// remembered token a map lookup, a new one checked against the keys
// already loaded (one signature check; never a fetch of the key set). For
// the per-subject budgets (package addrlimit), which run before any
// route; false for anything else.
func (v *JWT) Known(ctx context.Context, token string) (identity.Identity, bool) {
	id, err := v.Verify(context.WithValue(ctx, noFetch{}, true), token)
	return id, err == nil && !id.Anonymous()
}

// Verify checks an access token and returns its identity.
func (v *JWT) Verify(ctx context.Context, token string) (identity.Identity, error) {
	if !accesstoken.WellFormed(token) {
		return identity.Identity{}, ErrMalformed
	}
	// Fail closed: no token is good while its revocation cannot be known,
	// and none costs a signature check then.
	if v.rev.stale() {
		return identity.Identity{}, ErrRevocationStale
	}
	if e, ok := v.verified.Get(token); ok {
		now := v.cfg.Now()
		if k, ok := v.keys.Load().get(e.kid); ok && k == e.key &&
			now.Before(e.exp.Add(v.cfg.Skew)) && !now.Before(e.nbf.Add(-v.cfg.Skew)) {
			// A revoked token stays remembered: sending it again costs no
			// new RSA verification.
			if v.rev.covers(&e.ref) {
				return identity.Identity{}, ErrRevoked
			}
			return e.id, nil
		}
		v.verified.Remove(token)
	}
	id, e, err := v.verify(ctx, token)
	if err != nil {
		return identity.Identity{}, err
	}
	v.verified.Add(token, e)
	if v.rev.covers(&e.ref) {
		return identity.Identity{}, ErrRevoked
	}
	return id, nil
}

func (v *JWT) verify(ctx context.Context, token string) (identity.Identity, verifiedToken, error) {
	fail := func(err error) (identity.Identity, verifiedToken, error) {
		return identity.Identity{}, verifiedToken{}, err
	}
	var used *pubKey
	var usedKID string
	payload, err := accesstoken.Verify(ctx, token, func(ctx context.Context, alg jwa.SignatureAlgorithm, kid string) (accesstoken.Key, error) {
		if !allowedAlgs[alg] {
			// none, HS*, PS*, RS384, ES384...: never what the auth service signs with.
			return accesstoken.Key{}, fmt.Errorf("%w: %q", ErrAlgorithm, alg)
		}
		if kid == "" {
			return accesstoken.Key{}, ErrUnknownKey
		}
		k, err := v.lookup(ctx, kid)
		if err != nil {
			return accesstoken.Key{}, err
		}
		if !k.accepts(alg) {
			return accesstoken.Key{}, fmt.Errorf("%w: %q with a %q key", ErrAlgorithm, alg, k.alg)
		}
		used, usedKID = k, kid
		return accesstoken.Key{Alg: alg, Key: k.key}, nil
	})
	switch {
	case errors.Is(err, accesstoken.ErrMalformed):
		return fail(ErrMalformed)
	case errors.Is(err, accesstoken.ErrSignature):
		return fail(fmt.Errorf("%w: %v", ErrInvalidClaims, err))
	case err != nil:
		return fail(err)
	}
	c, err := accesstoken.Parse(payload)
	if err != nil {
		return fail(fmt.Errorf("%w: %v", ErrInvalidClaims, err))
	}
	if err := c.Check(v.cfg.Now(), accesstoken.Rules{Issuer: v.cfg.Issuer, Skew: v.cfg.Skew}); errors.Is(err, accesstoken.ErrType) {
		return fail(ErrTokenType)
	} else if err != nil {
		return fail(fmt.Errorf("%w: %v", ErrInvalidClaims, err))
	}
	id := identity.Identity{Subject: c.Subject, Client: c.ClientID(), Scopes: []string(c.Scope)}
	ref := tokenRef{sub: id.Subject, client: id.Client, jti: c.ID, sid: c.Session, iat: int64(c.IssuedAt)}
	return id, verifiedToken{id: id, kid: usedKID, key: used, nbf: c.NotBeforeTime(), exp: c.Expiration(), ref: ref}, nil
}
