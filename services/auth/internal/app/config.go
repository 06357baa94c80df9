package app

import (
	"errors"
	"flag"
	"fmt"
	"net"
	"net/mail"
	"net/url"
	"time"

	"google.golang.org/grpc/status"

	"fris.dev/pkg/cmdutil"
	"fris.dev/pkg/password"
	"fris.dev/pkg/ratelimit"
	"fris.dev/pkg/server"
	"fris.dev/services/auth/internal/envelope"
	"fris.dev/services/auth/internal/service"
)

// Config is everything `auth serve` reads from flags and FRIS_AUTH_*, one
// part per concern; each part registers and validates its own flags, and
// their fields read as the Config's (cfg.AccessTTL).
type Config struct {
	server.Base
	Tokens
	Keys
	Signup
	Hashing
	Limits
	Account
	Passkeys
	Passwords
}

// RegisterFlags adds the serve flags to fs.
func (c *Config) RegisterFlags(fs *flag.FlagSet) {
	// The refresh's spend, auth's one durable write under load, has its
	// own bound (service.Config.SpendWait), so the common -batch-delay
	// default serves the rest.
	c.Base.RegisterFlags(fs, "127.0.0.1:9101", "127.0.0.1:9201")
	c.Tokens.RegisterFlags(fs)
	c.Keys.RegisterFlags(fs)
	c.Signup.RegisterFlags(fs)
	c.Hashing.RegisterFlags(fs)
	c.Limits.RegisterFlags(fs)
	c.Account.RegisterFlags(fs)
	c.Passkeys.RegisterFlags(fs)
	c.Passwords.RegisterFlags(fs)
}

// Validate reports every configuration mistake at once.
func (c *Config) Validate() error {
	return errors.Join(c.Base.Validate(), c.Tokens.Validate(), c.Keys.Validate(),
		c.Signup.Validate(), c.Hashing.Validate(), c.Limits.Validate(), c.Account.Validate(),
		c.Passkeys.validate(c.Issuer), c.Passwords.Validate())
}

// Tokens is what the issued tokens and codes carry: their issuer, their
// lifetimes and default scopes.
type Tokens struct {
	Issuer         string
	AccessTTL      time.Duration
	IDTTL          time.Duration
	RefreshTTL     time.Duration
	Skew           time.Duration
	SignRequestTTL time.Duration
	CodeTTL        time.Duration
	Scopes         string
	// LegacyRefresh and RefreshSupersedesAccess: service.Config's.
	LegacyRefresh           bool
	RefreshSupersedesAccess bool
}

// RegisterFlags adds the tokens' flags to fs.
func (c *Tokens) RegisterFlags(fs *flag.FlagSet) {
	fs.StringVar(&c.Issuer, "issuer", "http://127.0.0.1:8080", "public base URL of the deployment: the tokens' iss, and the base of the discovery document's URLs")
	fs.DurationVar(&c.AccessTTL, "access-ttl", time.Hour, "lifetime of access tokens")
	fs.DurationVar(&c.IDTTL, "id-ttl", time.Hour, "lifetime of id tokens")
	fs.DurationVar(&c.RefreshTTL, "refresh-ttl", 30*24*time.Hour, "lifetime of refresh tokens")
	fs.DurationVar(&c.Skew, "skew", 30*time.Second, "clock skew tolerated: nbf is set this far in the past")
	fs.DurationVar(&c.SignRequestTTL, "sign-request-ttl", 5*time.Minute, "how long a sign request's code may be used")
	fs.DurationVar(&c.CodeTTL, "code-ttl", 5*time.Minute, "how long a login's authorization code may be used")
	fs.StringVar(&c.Scopes, "default-scopes", "", "comma-separated scopes every access token carries besides openid and the user's own")
	fs.BoolVar(&c.LegacyRefresh, "legacy-refresh", false, "sign every refresh token with the RSA signing key and put an id token in every refresh response, as before the refresh key (two more RSA signatures per OAuth 2.0 refresh; for comparison)")
	fs.BoolVar(&c.RefreshSupersedesAccess, "refresh-supersedes-access", false, "once a refresh token is spent, the access token issued with it answers active:false at introspection, userinfo and tokeninfo (Hydra's behaviour; costs a claim in every access token and a store read per check; the gateway's own verification does not see it)")
}

// Validate reports the tokens' mistakes.
func (c *Tokens) Validate() error {
	var errs []error
	if u, err := url.Parse(c.Issuer); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		errs = append(errs, fmt.Errorf("-issuer %q must be an absolute http(s) URL", c.Issuer))
	}
	for name, d := range map[string]time.Duration{"-access-ttl": c.AccessTTL, "-id-ttl": c.IDTTL,
		"-refresh-ttl": c.RefreshTTL, "-sign-request-ttl": c.SignRequestTTL, "-code-ttl": c.CodeTTL} {
		if d <= 0 {
			errs = append(errs, fmt.Errorf("%s must be positive", name))
		}
	}
	return errors.Join(append(errs, scopesError("-default-scopes", c.Scopes))...)
}

// scopesError reports the scopes of list that cannot be granted
// (service.CheckScopes: RFC 6749 scope-tokens only).
func scopesError(name, list string) error {
	if err := service.CheckScopes(cmdutil.SplitList(list)); err != nil {
		return fmt.Errorf("%s: %s", name, status.Convert(err).Message())
	}
	return nil
}

// Keys are the signing keys: their size, algorithm and rotation, and the
// secrets that encrypt them at rest.
type Keys struct {
	KeyBits     int
	KeyAlg      string
	KeyRotation time.Duration
	// KeySecretFile and KeySecrets give the secrets that encrypt the
	// private signing keys at rest; see keySecrets.
	KeySecretFile string
	KeySecrets    string
	// BenchNullSigner is the client whose tokens the benchmark's stub
	// signs: set only by -bench-null-signer, which only a build with the
	// fris_bench_null tag has (benchnull_on.go).
	BenchNullSigner string
}

// RegisterFlags adds the signing keys' flags to fs.
func (c *Keys) RegisterFlags(fs *flag.FlagSet) {
	fs.IntVar(&c.KeyBits, "key-bits", 2048, "RSA modulus size of new signing keys (>= 2048)")
	fs.StringVar(&c.KeyAlg, "key-alg", "RS256", "JWT signing algorithm: RS256 or RS512")
	fs.DurationVar(&c.KeyRotation, "key-rotation", 7*24*time.Hour, "age at which the signing keys (one per algorithm, and the refresh key) are replaced (0: never automatically, for networks whose clients pin one public key; rotate-keys still works)")
	fs.StringVar(&c.KeySecretFile, "key-secret-file", "", "file of the secrets that encrypt the private signing keys at rest: base64 of 32 random bytes each (head -c 32 /dev/urandom | base64), one a line, the first encrypts, the others only decrypt (rotation)")
	fs.StringVar(&c.KeySecrets, "key-secrets", "", "the same secrets as a comma-separated list, for when a file does not fit (prefer the environment to the command line, which other users can see)")
	registerBenchFlags(fs, c)
}

// Validate reports the signing keys' mistakes, a missing or unreadable
// key secret among them.
func (c *Keys) Validate() error {
	errs := []error{validateBench(c)}
	if c.KeyBits < 2048 {
		errs = append(errs, errors.New("-key-bits must be at least 2048"))
	}
	if c.KeyAlg != "RS256" && c.KeyAlg != "RS512" {
		errs = append(errs, fmt.Errorf("-key-alg %q: want RS256 or RS512", c.KeyAlg))
	}
	if c.KeyRotation < 0 {
		errs = append(errs, errors.New("-key-rotation must not be negative (0: no automatic rotation)"))
	}
	if _, err := c.keySecrets(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// keySecrets returns the box that seals the private signing keys. There is
// no default and no way around it: keys must never be stored in clear, and
// a secret made up at start would lose every key at the next one.
func (c *Keys) keySecrets() (*envelope.Box, error) {
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

// Signup is what POST /register allows: whether it is open, the least
// user key, the scopes a new user starts with.
type Signup struct {
	Registration   bool
	MinKeyBits     int
	RegisterScopes string
}

// RegisterFlags adds the registration's flags to fs.
func (c *Signup) RegisterFlags(fs *flag.FlagSet) {
	fs.BoolVar(&c.Registration, "registration", true, "allow POST /register (false: 501)")
	fs.IntVar(&c.MinKeyBits, "min-key-bits", 2048, "smallest RSA key /register accepts")
	fs.StringVar(&c.RegisterScopes, "register-scopes", "", "comma-separated scopes a user registered by POST /register starts with (e.g. broker:researcher,users:search; default none: operators grant them with set-scopes)")
}

// Validate reports the registration's mistakes.
func (c *Signup) Validate() error {
	var errs []error
	if c.MinKeyBits < 1024 {
		errs = append(errs, errors.New("-min-key-bits must be at least 1024"))
	}
	return errors.Join(append(errs, scopesError("-register-scopes", c.RegisterScopes))...)
}

// Hashing is the cost of password and client secret hashes and how long
// a verified one is remembered.
type Hashing struct {
	SecretCacheTTL time.Duration
	Argon2Memory   uint
}

// RegisterFlags adds the hashing's flags to fs.
func (c *Hashing) RegisterFlags(fs *flag.FlagSet) {
	fs.DurationVar(&c.SecretCacheTTL, "secret-cache-ttl", 5*time.Minute, "how long a verified client secret or password is remembered (0: never)")
	fs.UintVar(&c.Argon2Memory, "argon2-memory-kib", uint(password.Default.Memory), "argon2id memory cost of new hashes, KiB")
}

// Validate reports the hashing's mistakes.
func (c *Hashing) Validate() error {
	if c.Argon2Memory < 1024 {
		return errors.New("-argon2-memory-kib must be at least 1024")
	}
	return nil
}

// Limits are the abuse limits of failed credential checks
// (docs/security.md, "Abuse limits"): per account, and per client address
// for all of them.
type Limits struct {
	LimitLogin     ratelimit.Policy
	LimitSecret    ratelimit.Policy
	LimitSignature ratelimit.Policy
	LimitAddr      ratelimit.Policy
	// LimitCeiling is what all addresses together may fail for one
	// account (of any of the above), skipped by known addresses and
	// devices; LimitRegister bounds registrations per address.
	LimitCeiling  ratelimit.Policy
	LimitRegister ratelimit.Policy
	// Password-reset requests: per email and address, per address, and
	// per email from all addresses (the holder's known device skips it).
	LimitReset        ratelimit.Policy
	LimitResetAddr    ratelimit.Policy
	LimitResetCeiling ratelimit.Policy
}

// RegisterFlags adds the abuse limits' flags to fs.
func (c *Limits) RegisterFlags(fs *flag.FlagSet) {
	ratelimit.PolicyVar(fs, &c.LimitLogin, "limit-login", "5/15m:30s..15m", "failed sign-ins at the login form per email address and client address")
	ratelimit.PolicyVar(fs, &c.LimitSecret, "limit-client-secret", "10/15m:10s..15m", "failed client secrets per client ID and client address")
	ratelimit.PolicyVar(fs, &c.LimitSignature, "limit-signature", "10/15m:10s..15m", "failed signed codes per user key and client address")
	ratelimit.PolicyVar(fs, &c.LimitAddr, "limit-addr", "30/1m:1s..5m", "failed credential checks (any of the above) per client address")
	ratelimit.PolicyVar(fs, &c.LimitCeiling, "limit-account-ceiling", "100/1h", "failed credential checks per account (email, client ID, user key) from all addresses together; an address or device that signed in before skips it")
	ratelimit.PolicyVar(fs, &c.LimitRegister, "limit-register", "20/1h", "registrations (POST /register, new or taken email) per client address")
	ratelimit.PolicyVar(fs, &c.LimitReset, "limit-reset", "3/1h", "password-reset requests per email address and client address (known or unknown email alike)")
	ratelimit.PolicyVar(fs, &c.LimitResetAddr, "limit-reset-addr", "10/1h", "password-reset requests per client address")
	ratelimit.PolicyVar(fs, &c.LimitResetCeiling, "limit-reset-ceiling", "20/1h", "password-reset requests per email address from all addresses together; a browser that signed in to the account before skips it")
}

// Validate reports the abuse limits' mistakes.
func (c *Limits) Validate() error {
	var errs []error
	for name, p := range map[string]ratelimit.Policy{"-limit-login": c.LimitLogin, "-limit-client-secret": c.LimitSecret, "-limit-signature": c.LimitSignature, "-limit-addr": c.LimitAddr,
		"-limit-account-ceiling": c.LimitCeiling, "-limit-register": c.LimitRegister,
		"-limit-reset": c.LimitReset, "-limit-reset-addr": c.LimitResetAddr, "-limit-reset-ceiling": c.LimitResetCeiling} {
		if err := p.Validate(name); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Account is account self-service: the links mailed to people (password
// reset, email verification) and the mail server that sends them.
type Account struct {
	ResetTTL     time.Duration
	VerifyTTL    time.Duration
	SMTPAddr     string
	SMTPFrom     string
	SMTPUser     string
	SMTPPassword string
}

// RegisterFlags adds self-service's flags to fs.
func (c *Account) RegisterFlags(fs *flag.FlagSet) {
	fs.DurationVar(&c.ResetTTL, "reset-ttl", 30*time.Minute, "how long a mailed password-reset link may be used (once)")
	fs.DurationVar(&c.VerifyTTL, "verify-ttl", 72*time.Hour, "how long a mailed email verification link may be used (once)")
	fs.StringVar(&c.SMTPAddr, "smtp-addr", "", "SMTP server host:port for password-reset and verification mails (empty: the links go to the log)")
	fs.StringVar(&c.SMTPFrom, "smtp-from", "", "sender address of the mails")
	fs.StringVar(&c.SMTPUser, "smtp-user", "", "SMTP user (empty: no authentication)")
	fs.StringVar(&c.SMTPPassword, "smtp-password", "", "SMTP password (prefer FRIS_AUTH_SMTP_PASSWORD)")
}

// Validate reports self-service's mistakes.
func (c *Account) Validate() error {
	var errs []error
	if c.ResetTTL <= 0 || c.ResetTTL > 24*time.Hour {
		errs = append(errs, errors.New("-reset-ttl must be positive and at most 24h"))
	}
	if c.VerifyTTL <= 0 || c.VerifyTTL > 30*24*time.Hour {
		errs = append(errs, errors.New("-verify-ttl must be positive and at most 720h"))
	}
	if c.SMTPAddr != "" {
		if _, _, err := net.SplitHostPort(c.SMTPAddr); err != nil {
			errs = append(errs, fmt.Errorf("-smtp-addr %q must be host:port", c.SMTPAddr))
		}
		if _, err := mail.ParseAddress(c.SMTPFrom); err != nil {
			errs = append(errs, fmt.Errorf("-smtp-from %q must be an email address when -smtp-addr is set", c.SMTPFrom))
		}
	}
	return errors.Join(errs...)
}
