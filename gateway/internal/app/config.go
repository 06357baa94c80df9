package app

import (
	"errors"
	"flag"
	"fmt"
	"net/url"
	"strings"
	"time"

	"fris.dev/gateway/internal/authshape"
	"fris.dev/gateway/internal/clientaddr"
	"fris.dev/gateway/internal/explorer"
	"fris.dev/gateway/internal/routes"
	"fris.dev/pkg/mtls"
	"fris.dev/pkg/server"
)

// Config is everything the gateway reads from flags and FRIS_GATEWAY_*.
type Config struct {
	Addr string
	// OpsAddr is the operations port: /metrics, never on the public port
	// (empty: off).
	OpsAddr        string
	MDRAddr        string
	MDRPrefix      string
	AuthAddr       string
	AuthPrefix     string
	UploadAddr     string
	UploadPrefix   string
	BrokerAddr     string
	BrokerPrefix   string
	JWKSURL        string
	Issuer         string
	TokenSkew      time.Duration
	JWKSRefresh    time.Duration
	JWKSMinRefresh time.Duration
	RevocationsURL string
	RevocationPoll time.Duration
	CORSOrigins    string
	MaxBody        int64
	// MaxAuthBody bounds the bodies of group A's POST routes (register,
	// token, the login form...), which are small (docs/security.md,
	// "Input limits").
	MaxAuthBody int64
	// AuthAnswers is group A's answer shape: the names its answers carry
	// (authshape; docs/decisions.md, "Answer shapes").
	AuthAnswers authshape.Shape
	// MaxPathSegment bounds each path segment (400 beyond).
	MaxPathSegment int
	// TrustedProxies may tell the client's address in X-Forwarded-For
	// (comma-separated CIDR prefixes; empty: nobody).
	TrustedProxies  string
	LogLevel        string
	ShutdownTimeout time.Duration
	UpstreamTimeout time.Duration
	MDRCacheTTL     time.Duration
	MDRCacheSize    int
	GCPercent       int

	// Connection limits of the public port (docs/security.md, "Limits").
	MaxConns          int
	ReadHeaderTimeout time.Duration
	ReadTimeout       time.Duration
	WriteTimeout      time.Duration
	IdleTimeout       time.Duration
	// Per-address caps and the pace a body must keep (docs/security.md,
	// "Limits"): what one host may hold of the gateway.
	MaxConnsPerAddr    int
	MaxInFlightPerAddr int
	MinBodyRate        int64
	BodyRateWindow     time.Duration
	// BodyMemory bounds the bytes of request bodies held at once.
	BodyMemory int64

	// The Explorer's OAuth client (docs/decisions.md, "Explorer"): without
	// an id and secret its sign-in says it is not configured.
	ExplorerClientID         string
	ExplorerClientSecretFile string
	ExplorerURL              string
	ExplorerSessions         int
	// ExplorerCookieKeyFile holds the keys that seal the Explorer's
	// sign-in cookies (empty: a random key of this process).
	ExplorerCookieKeyFile string
	// ExplorerStaleAfter: the operators' sites view highlights teilers
	// that have not uploaded for longer.
	ExplorerStaleAfter time.Duration

	// TLS is the gateway's side of the services' mutual TLS: its
	// certificate ("gateway", the one peer whose identity metadata the
	// services believe) and the deployment's CA.
	TLS mtls.Config
}

// RegisterFlags adds the gateway's flags to fs.
func (c *Config) RegisterFlags(fs *flag.FlagSet) {
	fs.StringVar(&c.Addr, "addr", "127.0.0.1:8080", "HTTP listen address")
	fs.StringVar(&c.OpsAddr, "ops-addr", "127.0.0.1:9200", "HTTP address of the operations port: /metrics (not on the public port), /healthz, /readyz (empty: off)")
	fs.StringVar(&c.MDRAddr, "mdr-addr", "127.0.0.1:9102", "gRPC address of the mdr service")
	fs.StringVar(&c.MDRPrefix, "mdr-prefix", routes.CanonicalMDRPrefix, "path prefix of the metadata registry (group B)")
	fs.StringVar(&c.AuthAddr, "auth-addr", "", "gRPC address of the auth service, e.g. 127.0.0.1:9101 (empty: group A answers 503)")
	fs.StringVar(&c.AuthPrefix, "auth-prefix", routes.CanonicalAuthPrefix, "path prefix of the identity provider (group A)")
	c.AuthAnswers = authshape.Both
	fs.Func("auth-answers", "names in the identity provider's answers: both (the spec's and the Samply auth client's, default), spec (the spec's only) or samply (auth-dto's only, for Jackson readers that refuse unknown names)", func(s string) error {
		sh, err := authshape.Parse(s)
		if err == nil {
			c.AuthAnswers = sh
		}
		return err
	})
	fs.StringVar(&c.UploadAddr, "upload-addr", "", "gRPC address of the upload service, e.g. 127.0.0.1:9103 (empty: group C answers 503)")
	fs.StringVar(&c.UploadPrefix, "upload-prefix", "/dktk", "path prefix of the central upload (group C)")
	fs.StringVar(&c.BrokerAddr, "broker-addr", "", "gRPC address of the broker service, e.g. 127.0.0.1:9104 (empty: group D answers 503)")
	fs.StringVar(&c.BrokerPrefix, "broker-prefix", "/broker/rest", "path prefix of the search broker (group D); its API lives under <prefix>/searchbroker, its health check at <prefix>/health")
	fs.StringVar(&c.JWKSURL, "jwks-url", "http://127.0.0.1:9201/jwks", "JWK Set of the auth service's signing keys (empty: no bearer token is ever accepted)")
	fs.StringVar(&c.Issuer, "issuer", "http://127.0.0.1:8080", "required iss of access tokens (empty: not checked)")
	fs.DurationVar(&c.TokenSkew, "token-skew", 30*time.Second, "clock skew tolerated on token exp, nbf and iat")
	fs.DurationVar(&c.JWKSRefresh, "jwks-refresh", 15*time.Minute, "how often the signing keys are fetched in the background")
	fs.StringVar(&c.RevocationsURL, "revocations-url", "", "the auth service's revocation list, polled so revoked tokens are refused (empty: -jwks-url with /jwks replaced by /revocations; \"off\": no revocation checks)")
	fs.DurationVar(&c.RevocationPoll, "revocation-poll", time.Second, "how often the revocation list is polled: the longest a revoked access token is still accepted")
	fs.DurationVar(&c.JWKSMinRefresh, "jwks-min-refresh", 2*time.Second, "least time between fetches of the signing keys caused by tokens with an unknown kid (such tokens wait for the next allowed fetch; at most 30s)")
	fs.StringVar(&c.CORSOrigins, "cors-origins", "*", "comma-separated origins allowed by CORS on the JSON groups (* for any)")
	fs.Int64Var(&c.MaxBody, "max-body", 10<<20, "largest request body accepted, in bytes")
	fs.Int64Var(&c.MaxAuthBody, "max-auth-body", 64<<10, "largest body of the identity provider's POST routes (register, token, sign request, revoke, introspect, the login form), in bytes")
	// A patient id may have 512 bytes (the upload service's limit), the
	// longest id any path carries.
	fs.IntVar(&c.MaxPathSegment, "max-path-segment", 512, "longest path segment accepted (decoded), in bytes; longer is 400")
	fs.StringVar(&c.TrustedProxies, "trusted-proxies", "", "comma-separated CIDR prefixes of reverse proxies whose X-Forwarded-For names the client's address (empty: the connection's address is the client's, the header is ignored)")
	fs.StringVar(&c.LogLevel, "log-level", "info", "debug, info, warn or error")
	fs.DurationVar(&c.ShutdownTimeout, "shutdown-timeout", 15*time.Second, "how long in-flight requests may finish on shutdown")
	fs.DurationVar(&c.UpstreamTimeout, "upstream-timeout", 30*time.Second, "deadline of one call to a service")
	fs.DurationVar(&c.MDRCacheTTL, "mdr-cache-ttl", time.Second, "how long anonymous registry responses are reused (0: no cache)")
	fs.IntVar(&c.MDRCacheSize, "mdr-cache-size", 4096, "most registry responses kept in the cache")
	fs.IntVar(&c.GCPercent, "gogc", server.DefaultGCPercent, "garbage collector target percentage, as GOGC (an explicit GOGC environment variable wins)")
	fs.IntVar(&c.MaxConns, "max-conns", 4096, "most concurrent client connections; more wait in the kernel's accept queue (0: no cap)")
	// Headers are a few hundred bytes: 5s is ample on the slowest link,
	// and what a connection sending them byte by byte can hold.
	fs.DurationVar(&c.ReadHeaderTimeout, "read-header-timeout", 5*time.Second, "how long a client may take to send a request's headers")
	fs.IntVar(&c.MaxConnsPerAddr, "max-conns-per-addr", 128, "most open connections from one client address (IPv6: one /64); more are closed at once (0: no cap; connections from -trusted-proxies are not counted: the proxy must limit its clients)")
	fs.IntVar(&c.MaxInFlightPerAddr, "max-inflight-per-addr", 128, "most requests in flight from one client address (IPv6: one /64; behind -trusted-proxies the client's); more are 429 with Retry-After (0: no cap)")
	// 4 KiB/s is a fraction of the slowest site link FRIS serves (10 MiB
	// in 5 minutes, ~35 KB/s) and far above a trickle.
	fs.Int64Var(&c.MinBodyRate, "min-body-rate", 4096, "least bytes per second a request body must bring, measured over -body-rate-window; slower is cut off with 408 (0: no minimum, only -read-timeout)")
	fs.DurationVar(&c.BodyRateWindow, "body-rate-window", 10*time.Second, "the window -min-body-rate is measured over: the longest a body may stall")
	fs.Int64Var(&c.BodyMemory, "body-memory", 256<<20, "most bytes of request bodies the gateway holds at once; past it a body is refused with 503 and Retry-After (0: no budget; else at least -max-body)")
	// A whole request, body included: the largest body (-max-body, 10 MiB)
	// needs 5 min at ~280 kbit/s, a slow site link.
	fs.DurationVar(&c.ReadTimeout, "read-timeout", 5*time.Minute, "how long a client may take to send a whole request, body included")
	// Counted from the end of the headers, so it spans reading the body, the
	// service call (-upstream-timeout) and writing the response (a 10 MiB
	// expose PDF); hence one minute more than -read-timeout.
	fs.DurationVar(&c.WriteTimeout, "write-timeout", 6*time.Minute, "how long a request may take from the end of its headers to the last byte of its response (at least -read-timeout)")
	fs.DurationVar(&c.IdleTimeout, "idle-timeout", 30*time.Second, "how long a kept-alive connection may wait for its next request")
	fs.StringVar(&c.ExplorerClientID, "explorer-client-id", "", "the FRIS Explorer's OAuth client id at the auth service (empty: the Explorer's sign-in is not configured)")
	fs.StringVar(&c.ExplorerClientSecretFile, "explorer-client-secret-file", "", "file holding the Explorer's client secret")
	fs.StringVar(&c.ExplorerURL, "explorer-url", "", "the gateway's origin as browsers reach it, e.g. https://fris.example.org, for the Explorer's redirect URI <url>/explorer/callback (empty: each request's own Host)")
	fs.IntVar(&c.ExplorerSessions, "explorer-sessions", 10000, "most signed-in Explorer sessions kept in memory; beyond, the least recently used goes (visitors who have not signed in take none)")
	fs.StringVar(&c.ExplorerCookieKeyFile, "explorer-cookie-key-file", "", "file of the keys that seal the Explorer's sign-in cookies: base64 of 32 random bytes each (head -c 32 /dev/urandom | base64), one a line, the first seals, all open (rotation); give every gateway replica the same file so a sign-in may finish on any (empty: a random key per process, a sign-in must finish on the replica that began it)")
	c.ExplorerStaleAfter = explorer.DefaultStaleAfter
	fs.Func("explorer-stale-after", "the Explorer's sites view highlights a teiler without an upload for longer than this: days (7d) or a Go duration (36h) (default 7d)", func(s string) error {
		d, err := explorer.ParseAge(s)
		if err == nil {
			c.ExplorerStaleAfter = d
		}
		return err
	})
	c.TLS.RegisterFlags(fs, mtls.Dev(mtls.DefaultDir(), mtls.Gateway))
}

// Validate reports every configuration mistake at once.
func (c *Config) Validate() error {
	var errs []error
	if c.Addr == "" {
		errs = append(errs, errors.New("-addr is required"))
	}
	if c.MDRAddr == "" {
		errs = append(errs, errors.New("-mdr-addr is required"))
	}
	if c.OpsAddr != "" && c.OpsAddr == c.Addr && !strings.HasSuffix(c.Addr, ":0") {
		errs = append(errs, errors.New("-ops-addr must differ from -addr: /metrics stays off the public port"))
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
	if c.JWKSURL != "" {
		if u, err := url.Parse(c.JWKSURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			errs = append(errs, fmt.Errorf("-jwks-url %q must be an http(s) URL", c.JWKSURL))
		}
	}
	if u := c.revocationsURL(); u != "" {
		if pu, err := url.Parse(u); err != nil || (pu.Scheme != "http" && pu.Scheme != "https") || pu.Host == "" {
			errs = append(errs, fmt.Errorf("-revocations-url %q must be an http(s) URL", u))
		}
	}
	if c.RevocationPoll < 100*time.Millisecond || c.RevocationPoll > time.Minute {
		errs = append(errs, errors.New("-revocation-poll must be between 100ms and 1m"))
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
	if c.MDRCacheTTL < 0 || c.MDRCacheSize < 0 {
		errs = append(errs, errors.New("-mdr-cache-ttl and -mdr-cache-size must not be negative"))
	}
	if c.MaxBody <= 0 {
		errs = append(errs, errors.New("-max-body must be positive"))
	}
	if c.MaxAuthBody <= 0 {
		errs = append(errs, errors.New("-max-auth-body must be positive"))
	}
	if c.MaxPathSegment < 64 {
		errs = append(errs, errors.New("-max-path-segment must be at least 64"))
	}
	if _, err := clientaddr.Parse(c.TrustedProxies); err != nil {
		errs = append(errs, fmt.Errorf("-trusted-proxies: %w", err))
	}
	if c.MaxConns < 0 {
		errs = append(errs, errors.New("-max-conns must not be negative (0: no cap)"))
	}
	if c.ReadHeaderTimeout <= 0 || c.ReadTimeout <= 0 || c.WriteTimeout <= 0 || c.IdleTimeout <= 0 {
		errs = append(errs, errors.New("-read-header-timeout, -read-timeout, -write-timeout and -idle-timeout must be positive"))
	}
	if c.MaxConnsPerAddr < 0 || c.MaxInFlightPerAddr < 0 || c.MinBodyRate < 0 || c.BodyMemory < 0 {
		errs = append(errs, errors.New("-max-conns-per-addr, -max-inflight-per-addr, -min-body-rate and -body-memory must not be negative (0: off)"))
	}
	if c.MinBodyRate > 0 && (c.BodyRateWindow < time.Second || c.BodyRateWindow > c.ReadTimeout) {
		errs = append(errs, errors.New("-body-rate-window must be between 1s and -read-timeout"))
	}
	if c.BodyMemory > 0 && c.BodyMemory < c.MaxBody {
		errs = append(errs, errors.New("-body-memory must be at least -max-body (or 0: no budget)"))
	}
	if c.ReadHeaderTimeout > c.ReadTimeout {
		errs = append(errs, errors.New("-read-header-timeout must not exceed -read-timeout"))
	}
	if c.WriteTimeout < c.ReadTimeout {
		// The write deadline runs from the end of the headers: a shorter one
		// would cut off a body the read timeout still allows.
		errs = append(errs, errors.New("-write-timeout must be at least -read-timeout"))
	}
	if (c.ExplorerClientID == "") != (c.ExplorerClientSecretFile == "") {
		errs = append(errs, errors.New("-explorer-client-id and -explorer-client-secret-file go together"))
	}
	if c.ExplorerURL != "" {
		if u, err := url.Parse(c.ExplorerURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || strings.TrimRight(u.Path, "/") != "" || u.RawQuery != "" {
			errs = append(errs, fmt.Errorf("-explorer-url %q must be an http(s) origin, without a path", c.ExplorerURL))
		}
	}
	if c.ExplorerSessions < 1 {
		errs = append(errs, errors.New("-explorer-sessions must be positive"))
	}
	if err := c.TLS.Validate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// revocationsURL is the revocation list to poll: -revocations-url, or next
// to the key set on the auth service's operations port, where auth serves
// both; "" when none.
func (c *Config) revocationsURL() string {
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
