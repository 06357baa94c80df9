package app

import (
	"errors"
	"flag"
	"fmt"
	"net/url"
	"strings"
	"time"

	"fris.dev/gateway/internal/authshape"
	"fris.dev/gateway/internal/explorer"
	"fris.dev/gateway/internal/routes"
	"fris.dev/pkg/mtls"
	"fris.dev/pkg/server"
)

// Config is everything the gateway reads from flags and FRIS_GATEWAY_*,
// one part per concern; each part registers and validates its own flags,
// and their fields read as the Config's (cfg.MaxBody).
type Config struct {
	Listen
	Services
	Tokens
	Limits
	Explorer
	// flags is the set RegisterFlags added to: what the settings view
	// reads once it is parsed.
	flags *flag.FlagSet
}

// RegisterFlags adds the gateway's flags to fs.
func (c *Config) RegisterFlags(fs *flag.FlagSet) {
	c.flags = fs
	c.Listen.RegisterFlags(fs)
	c.Services.RegisterFlags(fs)
	c.Tokens.RegisterFlags(fs)
	c.Limits.RegisterFlags(fs)
	c.Explorer.RegisterFlags(fs)
}

// Validate reports every configuration mistake at once.
func (c *Config) Validate() error {
	return errors.Join(c.Listen.Validate(), c.Services.Validate(), c.Tokens.Validate(),
		c.Limits.Validate(), c.Explorer.Validate())
}

// Listen is the gateway's own side: its ports, logs and shutdown.
type Listen struct {
	Addr string
	// OpsAddr is the operations port: /metrics, never on the public port
	// (empty: off).
	OpsAddr         string
	CORSOrigins     string
	LogLevel        string
	ShutdownTimeout time.Duration
	GCPercent       int
}

// RegisterFlags adds the flags of the gateway's own side to fs.
func (c *Listen) RegisterFlags(fs *flag.FlagSet) {
	fs.StringVar(&c.Addr, "addr", "127.0.0.1:8080", "HTTP listen address")
	fs.StringVar(&c.OpsAddr, "ops-addr", "127.0.0.1:9200", "HTTP address of the operations port: /metrics (not on the public port), /healthz, /readyz (empty: off)")
	fs.StringVar(&c.CORSOrigins, "cors-origins", "*", "comma-separated origins allowed by CORS on the JSON groups (* for any)")
	fs.StringVar(&c.LogLevel, "log-level", "info", "debug, info, warn or error")
	fs.DurationVar(&c.ShutdownTimeout, "shutdown-timeout", 15*time.Second, "how long in-flight requests may finish on shutdown")
	fs.IntVar(&c.GCPercent, "gogc", server.DefaultGCPercent, "garbage collector target percentage, as GOGC (an explicit GOGC environment variable wins)")
}

// Validate reports the mistakes of the gateway's own side.
func (c *Listen) Validate() error {
	var errs []error
	if c.Addr == "" {
		errs = append(errs, errors.New("-addr is required"))
	}
	if c.OpsAddr != "" && c.OpsAddr == c.Addr && !strings.HasSuffix(c.Addr, ":0") {
		errs = append(errs, errors.New("-ops-addr must differ from -addr: /metrics stays off the public port"))
	}
	return errors.Join(errs...)
}

// Services are the services behind the four groups: where each is, the
// path prefix it is served under, and how the gateway calls it.
type Services struct {
	MDRAddr      string
	MDRPrefix    string
	AuthAddr     string
	AuthPrefix   string
	UploadAddr   string
	UploadPrefix string
	BrokerAddr   string
	BrokerPrefix string
	// AuthAnswers is group A's answer shape: the names its answers carry
	// (authshape; docs/decisions.md, "Answer shapes").
	AuthAnswers     authshape.Shape
	UpstreamTimeout time.Duration
	MDRCacheTTL     time.Duration
	MDRCacheSize    int
	// TLS is the gateway's side of the services' mutual TLS: its
	// certificate ("gateway", the one peer whose identity metadata the
	// services believe) and the deployment's CA.
	TLS mtls.Config
}

// RegisterFlags adds the upstream services' flags to fs.
func (c *Services) RegisterFlags(fs *flag.FlagSet) {
	fs.StringVar(&c.MDRAddr, "mdr-addr", "127.0.0.1:9102", "gRPC address of the mdr service")
	fs.StringVar(&c.MDRPrefix, "mdr-prefix", routes.CanonicalMDRPrefix, "path prefix of the metadata registry (group B)")
	fs.StringVar(&c.AuthAddr, "auth-addr", "", "gRPC address of the auth service, e.g. 127.0.0.1:9101 (empty: group A answers 503)")
	fs.StringVar(&c.AuthPrefix, "auth-prefix", routes.CanonicalAuthPrefix, "path prefix of the identity provider (group A)")
	c.AuthAnswers = authshape.Both
	fs.Var(shapeFlag{&c.AuthAnswers}, "auth-answers", "names in the identity provider's answers: both (the spec's and the Samply auth client's), spec (the spec's only) or samply (auth-dto's only, for Jackson readers that refuse unknown names)")
	fs.StringVar(&c.UploadAddr, "upload-addr", "", "gRPC address of the upload service, e.g. 127.0.0.1:9103 (empty: group C answers 503)")
	fs.StringVar(&c.UploadPrefix, "upload-prefix", "/dktk", "path prefix of the central upload (group C)")
	fs.StringVar(&c.BrokerAddr, "broker-addr", "", "gRPC address of the broker service, e.g. 127.0.0.1:9104 (empty: group D answers 503)")
	fs.StringVar(&c.BrokerPrefix, "broker-prefix", "/broker/rest", "path prefix of the search broker (group D); its API lives under <prefix>/searchbroker, its health check at <prefix>/health")
	fs.DurationVar(&c.UpstreamTimeout, "upstream-timeout", 30*time.Second, "deadline of one call to a service")
	fs.DurationVar(&c.MDRCacheTTL, "mdr-cache-ttl", time.Second, "how long anonymous registry responses are reused (0: no cache)")
	fs.IntVar(&c.MDRCacheSize, "mdr-cache-size", 4096, "most registry responses kept in the cache")
	c.TLS.RegisterFlags(fs, mtls.Dev(mtls.DefaultDir(), mtls.Gateway))
}

// Validate reports the mistakes of the upstreams' flags: prefixes that
// are no paths, collide with each other or with the Explorer's.
func (c *Services) Validate() error {
	var errs []error
	if c.MDRAddr == "" {
		errs = append(errs, errors.New("-mdr-addr is required"))
	}
	if !strings.HasPrefix(c.MDRPrefix, "/") {
		errs = append(errs, fmt.Errorf("-mdr-prefix %q must start with /", c.MDRPrefix))
	}
	if !strings.HasPrefix(c.AuthPrefix, "/") || strings.TrimRight(c.AuthPrefix, "/") == "" {
		errs = append(errs, fmt.Errorf("-auth-prefix %q must start with / and name a path", c.AuthPrefix))
	}
	prefixes := map[string]string{}
	for flagName, p := range map[string]string{"-mdr-prefix": c.MDRPrefix, "-auth-prefix": c.AuthPrefix, "-upload-prefix": c.UploadPrefix, "-broker-prefix": c.BrokerPrefix} {
		p = strings.TrimRight(p, "/")
		if flagName == "-upload-prefix" || flagName == "-broker-prefix" {
			if !strings.HasPrefix(p, "/") {
				errs = append(errs, fmt.Errorf("%s %q must start with / and name a path", flagName, p))
				continue
			}
		}
		if p == explorer.Prefix || strings.HasPrefix(p, explorer.Prefix+"/") {
			errs = append(errs, fmt.Errorf("%s %q is the Explorer's (%s)", flagName, p, explorer.Prefix))
		}
		if other, dup := prefixes[p]; dup {
			errs = append(errs, fmt.Errorf("%s and %s must differ", other, flagName))
		}
		prefixes[p] = flagName
	}
	if c.MDRCacheTTL < 0 || c.MDRCacheSize < 0 {
		errs = append(errs, errors.New("-mdr-cache-ttl and -mdr-cache-size must not be negative"))
	}
	if err := c.TLS.Validate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// shapeFlag is -auth-answers: a flag.Value, so that -h and the README's
// check see its default.
type shapeFlag struct{ s *authshape.Shape }

func (f shapeFlag) String() string {
	if f.s == nil {
		return ""
	}
	return string(*f.s)
}

func (f shapeFlag) Set(v string) error {
	sh, err := authshape.Parse(v)
	if err == nil {
		*f.s = sh
	}
	return err
}

// Tokens is how bearer tokens are checked: the keys they are signed with,
// their issuer, the clock skew tolerated and the revocation list.
type Tokens struct {
	JWKSURL        string
	Issuer         string
	TokenSkew      time.Duration
	JWKSRefresh    time.Duration
	JWKSMinRefresh time.Duration
	RevocationsURL string
	RevocationPoll time.Duration
	// RevocationFailClosed refuses bearer tokens and Explorer sessions
	// (503) once the revocation list is older than RevocationMaxStale.
	RevocationFailClosed bool
	RevocationMaxStale   time.Duration
}

// RegisterFlags adds the token checks' flags to fs.
func (c *Tokens) RegisterFlags(fs *flag.FlagSet) {
	fs.StringVar(&c.JWKSURL, "jwks-url", "http://127.0.0.1:9201/jwks", "JWK Set of the auth service's signing keys (empty: no bearer token is ever accepted)")
	fs.StringVar(&c.Issuer, "issuer", "http://127.0.0.1:8080", "required iss of access tokens (empty: not checked)")
	fs.DurationVar(&c.TokenSkew, "token-skew", 30*time.Second, "clock skew tolerated on token exp, nbf and iat")
	fs.DurationVar(&c.JWKSRefresh, "jwks-refresh", 15*time.Minute, "how often the signing keys are fetched in the background")
	fs.StringVar(&c.RevocationsURL, "revocations-url", "", "the auth service's revocation list, polled so revoked tokens are refused (empty: -jwks-url with /jwks replaced by /revocations; \"off\": no revocation checks)")
	fs.DurationVar(&c.RevocationPoll, "revocation-poll", time.Second, "how often the revocation list is polled: the longest a revoked access token is still accepted")
	fs.BoolVar(&c.RevocationFailClosed, "revocation-fail-closed", false, "refuse bearer tokens and Explorer sessions (503, Retry-After) while the revocation list has not been fetched for longer than -revocation-max-stale (default: the last list stays in force)")
	fs.DurationVar(&c.RevocationMaxStale, "revocation-max-stale", time.Minute, "with -revocation-fail-closed, how long the revocation list may go unfetched before tokens are refused")
	fs.DurationVar(&c.JWKSMinRefresh, "jwks-min-refresh", 2*time.Second, "least time between fetches of the signing keys caused by tokens with an unknown kid (such tokens wait for the next allowed fetch; at most 30s)")
}

// Validate reports the mistakes of the token checks' flags.
func (c *Tokens) Validate() error {
	var errs []error
	if c.JWKSURL != "" && !httpURL(c.JWKSURL) {
		errs = append(errs, fmt.Errorf("-jwks-url %q must be an http(s) URL", c.JWKSURL))
	}
	if u := c.revocationsURL(); u != "" && !httpURL(u) {
		errs = append(errs, fmt.Errorf("-revocations-url %q must be an http(s) URL", u))
	}
	if c.RevocationPoll < 100*time.Millisecond || c.RevocationPoll > time.Minute {
		errs = append(errs, errors.New("-revocation-poll must be between 100ms and 1m"))
	}
	// A bound under two polls would refuse tokens on one slow poll.
	if c.RevocationFailClosed && (c.RevocationMaxStale < 2*c.RevocationPoll || c.RevocationMaxStale > time.Hour) {
		errs = append(errs, errors.New("-revocation-max-stale must be at least twice -revocation-poll and at most 1h"))
	}
	if c.RevocationFailClosed && (c.JWKSURL == "" || c.revocationsURL() == "") {
		errs = append(errs, errors.New("-revocation-fail-closed needs a revocation list (-jwks-url, -revocations-url not \"off\")"))
	}
	if c.TokenSkew < 0 || c.TokenSkew > 5*time.Minute {
		errs = append(errs, errors.New("-token-skew must be between 0 and 5m"))
	}
	if c.JWKSRefresh < time.Second {
		errs = append(errs, errors.New("-jwks-refresh must be at least 1s"))
	}
	// Requests with an unknown kid may wait up to -jwks-min-refresh.
	if c.JWKSMinRefresh <= 0 || c.JWKSMinRefresh > 30*time.Second {
		errs = append(errs, errors.New("-jwks-min-refresh must be between 0 and 30s"))
	}
	return errors.Join(errs...)
}

// httpURL tells whether s is an absolute http(s) URL.
func httpURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// revocationsURL is the revocation list to poll: -revocations-url, or next
// to the key set on the auth service's operations port, where auth serves
// both; "" when none.
func (c *Tokens) revocationsURL() string {
	switch {
	case c.RevocationsURL == "off":
		return ""
	case c.RevocationsURL != "":
		return c.RevocationsURL
	case strings.HasSuffix(c.JWKSURL, "/jwks"):
		return strings.TrimSuffix(c.JWKSURL, "/jwks") + "/revocations"
	}
	return ""
}
