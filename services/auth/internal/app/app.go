// Package app wires the identity provider: config -> store -> keys ->
// server.
package app

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/encoding/protojson"

	"fris.dev/pkg/audit"
	"fris.dev/pkg/cmdutil"
	"fris.dev/pkg/kv"
	"fris.dev/pkg/password"
	"fris.dev/pkg/ratelimit"
	"fris.dev/pkg/server"
	authv1 "fris.dev/proto/auth/v1"
	"fris.dev/services/auth/internal/envelope"
	"fris.dev/services/auth/internal/keys"
	"fris.dev/services/auth/internal/service"
	"fris.dev/services/auth/internal/storage"
	"fris.dev/services/auth/internal/tokens"
)

// Config is everything `auth serve` reads from flags and FRIS_AUTH_*.
type Config struct {
	server.Base
	Issuer         string
	KeyBits        int
	KeyAlg         string
	KeyRotation    time.Duration
	AccessTTL      time.Duration
	IDTTL          time.Duration
	RefreshTTL     time.Duration
	Skew           time.Duration
	Registration   bool
	MinKeyBits     int
	SignRequestTTL time.Duration
	CodeTTL        time.Duration
	SecretCacheTTL time.Duration
	Argon2Memory   uint
	Scopes         string
	RegisterScopes string
	// KeySecretFile and KeySecrets give the secrets that encrypt the
	// private signing keys at rest; see keySecrets.
	KeySecretFile string
	KeySecrets    string
	// Abuse limits of failed credential checks (docs/security.md, "Abuse
	// limits"): per account, and per client address for all of them.
	LimitLogin     ratelimit.Policy
	LimitSecret    ratelimit.Policy
	LimitSignature ratelimit.Policy
	LimitAddr      ratelimit.Policy
	// LimitCeiling is what all addresses together may fail for one
	// account (of any of the above), skipped by known addresses and
	// devices; LimitRegister bounds registrations per address.
	LimitCeiling  ratelimit.Policy
	LimitRegister ratelimit.Policy
}

// RegisterFlags adds the serve flags to fs.
func (c *Config) RegisterFlags(fs *flag.FlagSet) {
	c.Base.RegisterFlags(fs, "127.0.0.1:9101", "127.0.0.1:9201")
	// The refresh's spend, auth's one durable write under load, has its
	// own bound (service.Config.SpendWait), so the common -batch-delay
	// default serves the rest.
	fs.StringVar(&c.Issuer, "issuer", "http://127.0.0.1:8080", "public base URL of the deployment: the tokens' iss, and the base of the discovery document's URLs")
	fs.IntVar(&c.KeyBits, "key-bits", 2048, "RSA modulus size of new signing keys (>= 2048)")
	fs.StringVar(&c.KeyAlg, "key-alg", "RS256", "JWT signing algorithm: RS256 or RS512")
	fs.DurationVar(&c.KeyRotation, "key-rotation", 7*24*time.Hour, "age at which the signing key is replaced (0: never automatically, for networks whose clients pin one public key; rotate-keys still works)")
	fs.DurationVar(&c.AccessTTL, "access-ttl", time.Hour, "lifetime of access tokens")
	fs.DurationVar(&c.IDTTL, "id-ttl", time.Hour, "lifetime of id tokens")
	fs.DurationVar(&c.RefreshTTL, "refresh-ttl", 30*24*time.Hour, "lifetime of refresh tokens")
	fs.DurationVar(&c.Skew, "skew", 30*time.Second, "clock skew tolerated: nbf is set this far in the past")
	fs.BoolVar(&c.Registration, "registration", true, "allow POST /register (false: 501)")
	fs.IntVar(&c.MinKeyBits, "min-key-bits", 2048, "smallest RSA key /register accepts")
	fs.DurationVar(&c.SignRequestTTL, "sign-request-ttl", 5*time.Minute, "how long a sign request's code may be used")
	fs.DurationVar(&c.CodeTTL, "code-ttl", 5*time.Minute, "how long a login's authorization code may be used")
	fs.DurationVar(&c.SecretCacheTTL, "secret-cache-ttl", 5*time.Minute, "how long a verified client secret or password is remembered (0: never)")
	fs.UintVar(&c.Argon2Memory, "argon2-memory-kib", uint(password.Default.Memory), "argon2id memory cost of new hashes, KiB")
	fs.StringVar(&c.KeySecretFile, "key-secret-file", "", "file of the secrets that encrypt the private signing keys at rest: base64 of 32 random bytes each (head -c 32 /dev/urandom | base64), one a line, the first encrypts, the others only decrypt (rotation)")
	fs.StringVar(&c.KeySecrets, "key-secrets", "", "the same secrets as a comma-separated list, for when a file does not fit (prefer the environment to the command line, which other users can see)")
	fs.StringVar(&c.Scopes, "default-scopes", "", "comma-separated scopes every access token carries besides openid and the user's own")
	ratelimit.PolicyVar(fs, &c.LimitLogin, "limit-login", "5/15m:30s..15m", "failed sign-ins at the login form per email address and client address")
	ratelimit.PolicyVar(fs, &c.LimitSecret, "limit-client-secret", "10/15m:10s..15m", "failed client secrets per client ID and client address")
	ratelimit.PolicyVar(fs, &c.LimitSignature, "limit-signature", "10/15m:10s..15m", "failed signed codes per user key and client address")
	ratelimit.PolicyVar(fs, &c.LimitAddr, "limit-addr", "30/1m:1s..5m", "failed credential checks (any of the above) per client address")
	ratelimit.PolicyVar(fs, &c.LimitCeiling, "limit-account-ceiling", "100/1h", "failed credential checks per account (email, client ID, user key) from all addresses together; an address or device that signed in before skips it")
	ratelimit.PolicyVar(fs, &c.LimitRegister, "limit-register", "20/1h", "registrations (POST /register, new or taken email) per client address")
	fs.StringVar(&c.RegisterScopes, "register-scopes", "", "comma-separated scopes a user registered by POST /register starts with (e.g. broker:researcher,users:search; default none: operators grant them with set-scopes)")
}

// Validate reports every configuration mistake at once.
func (c *Config) Validate() error {
	errs := []error{c.Base.Validate()}
	if u, err := url.Parse(c.Issuer); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		errs = append(errs, fmt.Errorf("-issuer %q must be an absolute http(s) URL", c.Issuer))
	}
	if c.KeyBits < 2048 {
		errs = append(errs, errors.New("-key-bits must be at least 2048"))
	}
	if c.KeyAlg != "RS256" && c.KeyAlg != "RS512" {
		errs = append(errs, fmt.Errorf("-key-alg %q: want RS256 or RS512", c.KeyAlg))
	}
	if c.KeyRotation < 0 {
		errs = append(errs, errors.New("-key-rotation must not be negative (0: no automatic rotation)"))
	}
	for name, d := range map[string]time.Duration{"-access-ttl": c.AccessTTL, "-id-ttl": c.IDTTL,
		"-refresh-ttl": c.RefreshTTL, "-sign-request-ttl": c.SignRequestTTL, "-code-ttl": c.CodeTTL} {
		if d <= 0 {
			errs = append(errs, fmt.Errorf("%s must be positive", name))
		}
	}
	if c.MinKeyBits < 1024 {
		errs = append(errs, errors.New("-min-key-bits must be at least 1024"))
	}
	for name, list := range map[string]string{"-default-scopes": c.Scopes, "-register-scopes": c.RegisterScopes} {
		for _, sc := range cmdutil.SplitList(list) {
			if strings.ContainsAny(sc, " \t\n") {
				errs = append(errs, fmt.Errorf("%s: scope %q must be one word", name, sc))
			}
		}
	}
	for name, p := range map[string]ratelimit.Policy{"-limit-login": c.LimitLogin, "-limit-client-secret": c.LimitSecret, "-limit-signature": c.LimitSignature, "-limit-addr": c.LimitAddr,
		"-limit-account-ceiling": c.LimitCeiling, "-limit-register": c.LimitRegister} {
		if err := p.Validate(name); err != nil {
			errs = append(errs, err)
		}
	}
	if c.Argon2Memory < 1024 {
		errs = append(errs, errors.New("-argon2-memory-kib must be at least 1024"))
	}
	if _, err := c.keySecrets(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// keySecrets returns the box that seals the private signing keys. There is
// no default and no way around it: keys must never be stored in clear, and
// a secret made up at start would lose every key at the next one.
func (c *Config) keySecrets() (*envelope.Box, error) {
	var (
		secrets [][]byte
		err     error
	)
	switch {
	case c.KeySecretFile != "" && c.KeySecrets != "":
		return nil, errors.New("key secrets: set -key-secret-file or -key-secrets, not both (list several secrets in the one you use)")
	case c.KeySecretFile != "":
		if secrets, err = envelope.ReadFile(c.KeySecretFile); err != nil {
			return nil, fmt.Errorf("-key-secret-file: %w", err)
		}
	case c.KeySecrets != "":
		if secrets, err = envelope.Parse(c.KeySecrets); err != nil {
			return nil, fmt.Errorf("-key-secrets: %w", err)
		}
	}
	if len(secrets) == 0 {
		return nil, errors.New("no key secret: set -key-secret-file or FRIS_AUTH_KEY_SECRET_FILE (a file with a base64 32-byte secret; make one with: head -c 32 /dev/urandom | base64), or -key-secrets / FRIS_AUTH_KEY_SECRETS; the private signing keys are encrypted under it (make run creates one for the demo)")
	}
	box, err := envelope.New(secrets)
	if err != nil {
		return nil, fmt.Errorf("key secrets: %w", err)
	}
	return box, nil
}

// Run serves the identity provider until ctx ends.
func Run(ctx context.Context, cfg Config, log *slog.Logger) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	cfg.Store.Partitions = storage.Partitions
	deps, err := cfg.Open(ctx, "auth", log)
	if err != nil {
		return err
	}
	defer deps.Close()
	db, auditLog := deps.Store, deps.Audit
	codes, err := kv.OpenVolatile(cfg.Store, "auth", db, log)
	if err != nil {
		return err
	}
	defer codes.Close()
	box, err := cfg.keySecrets()
	if err != nil {
		return err
	}
	store := storage.NewSplit(db, codes, box)
	// The revocation log serves resource servers, which accept access
	// tokens only.
	store.LogRetention = cfg.AccessTTL + cfg.Skew
	// Keys sealed under an older secret, or kept in clear before encryption
	// at rest, move to the first secret before anything reads them; a
	// secret that opens none of them stops the start here (below, the keys
	// manager would otherwise fail the same way, never replace them).
	rewrapped, err := store.RewrapSigningKeys(ctx)
	if errors.Is(err, envelope.ErrUnknownSecret) {
		return fmt.Errorf("wrong key secret: %w; start with the secret the signing keys were encrypted under (when rotating: the new secret first, the old one after it)", err)
	}
	if err != nil {
		return fmt.Errorf("signing keys: %w", err)
	}
	if len(rewrapped.KIDs) > 0 {
		log.InfoContext(ctx, "signing keys re-encrypted under the first key secret", "kids", rewrapped.KIDs, "secret_id", box.Current())
	}
	if len(rewrapped.Plain) > 0 {
		// Encrypting the record does not erase the copies a store keeps
		// (bbolt's free pages, Redis's AOF and snapshots, backups).
		log.WarnContext(ctx, "signing keys were stored in clear before this start: copies may remain in the store's free pages, its AOF or snapshots and in backups; run `auth rotate-keys` so a key never stored in clear signs from now on", "kids", rewrapped.Plain)
	}
	log.InfoContext(ctx, "signing keys encrypted at rest", "secret_id", box.Current(), "secret_ids", box.IDs())
	// Retired keys stay published as long as the longest-lived token.
	longest := max(cfg.AccessTTL, cfg.IDTTL, cfg.RefreshTTL) + cfg.Skew
	km, err := keys.New(ctx, store, keys.Options{
		Bits: cfg.KeyBits, Alg: jwa.SignatureAlgorithm(cfg.KeyAlg), RotateEvery: cfg.KeyRotation, PublishFor: longest, Log: log,
	})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// Replicas pick up a rotation made elsewhere within seconds, so every
	// replica's /jwks soon publishes the new key (a store read each time).
	maintain := 10 * time.Second
	if cfg.KeyRotation > 0 {
		maintain = min(maintain, cfg.KeyRotation/4)
	}
	go km.Run(ctx, maintain)
	go publishPending(ctx, store, log, time.Minute)

	iss := tokens.New(km, strings.TrimRight(cfg.Issuer, "/"), tokens.Lifetimes{Access: cfg.AccessTTL, ID: cfg.IDTTL, Refresh: cfg.RefreshTTL, Skew: cfg.Skew})
	reg := prometheus.NewRegistry()
	limits := ratelimit.New(db, reg, log)
	auditLog.LimitRefusals(limits.AllowLog)
	params := password.Default
	params.Memory = uint32(cfg.Argon2Memory)
	hasher := password.New(params, cfg.SecretCacheTTL)
	reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "fris_password_hashes_total",
		Help: "argon2id computations (password and secret checks, burns for unknown accounts, new hashes): what the abuse limits bound.",
	}, func() float64 { return float64(hasher.Computations()) }))
	svc := service.New(service.Config{
		Issuer: strings.TrimRight(cfg.Issuer, "/"), AllowRegister: cfg.Registration, MinKeyBits: cfg.MinKeyBits,
		SignRequestTTL: cfg.SignRequestTTL, AuthCodeTTL: cfg.CodeTTL, DefaultScopes: cmdutil.SplitList(cfg.Scopes),
		RegisterScopes: cmdutil.SplitList(cfg.RegisterScopes), Audit: auditLog,
		Guards: service.Guards{
			Login:     limits.Guard("login", cfg.LimitLogin, cfg.LimitAddr).WithCeiling(cfg.LimitCeiling),
			Secret:    limits.Guard("client_secret", cfg.LimitSecret, cfg.LimitAddr).WithCeiling(cfg.LimitCeiling),
			Signature: limits.Guard("signature", cfg.LimitSignature, cfg.LimitAddr).WithCeiling(cfg.LimitCeiling),
			Register:  limits.Guard("register", ratelimit.Policy{}, cfg.LimitRegister),
		},
	}, store, km, iss, hasher, log)

	jwks := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := protojson.Marshal(km.JWKS())
		if err != nil {
			http.Error(w, "internal error", http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/jwk-set+json; charset=utf-8")
		w.Header().Set("Cache-Control", "max-age=60")
		_, _ = w.Write(b)
	})
	// The gateway polls this every second or so: what was revoked since
	// the version it holds, usually nothing (one store read and an empty
	// scan).
	revocations := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var since uint64
		if q := r.URL.Query().Get("since"); q != "" {
			var err error
			if since, err = strconv.ParseUint(q, 10, 32); err != nil {
				http.Error(w, "since must be a version number", http.StatusBadRequest)
				return
			}
		}
		list, err := svc.RevocationList(r.Context(), uint32(since))
		if err != nil {
			log.WarnContext(r.Context(), "revocation list", "err", err)
			http.Error(w, "revocation list unavailable", http.StatusServiceUnavailable)
			return
		}
		b, err := protojson.Marshal(list)
		if err != nil {
			http.Error(w, "internal error", http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		_, _ = w.Write(b)
	})
	return server.Run(ctx, cfg.Server, server.Service{
		Name: "fris.auth.v1.AuthService",
		Log:  log,
		Register: func(s *grpc.Server) {
			authv1.RegisterAuthServiceServer(s, service.Public{Service: svc})
			s.RegisterService(audit.AdminService(&authv1.AuthAdmin_ServiceDesc, auditLog), service.Admin{Service: svc})
		},
		Ready:   svc.Ready,
		Metrics: reg,
		Ops:     map[string]http.Handler{"GET /jwks": jwks, "GET /revocations": revocations},
	})
}

// publishPending logs the revocations a replica wrote but could not log
// (the log is in another partition, and the replica failed or died between
// the two writes): at start, then every interval.
func publishPending(ctx context.Context, store *storage.KV, log *slog.Logger, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		n, err := store.PublishPending(ctx)
		if n > 0 {
			log.InfoContext(ctx, "revocations logged late", "count", n)
		}
		if err != nil && ctx.Err() == nil {
			log.WarnContext(ctx, "log pending revocations", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
