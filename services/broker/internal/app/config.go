package app

import (
	"errors"
	"flag"
	"fmt"
	"net"
	"net/mail"
	"net/url"
	"time"

	"fris.dev/pkg/ratelimit"
	"fris.dev/pkg/server"
	"fris.dev/services/broker/internal/service"
)

// Config is everything `broker serve` reads from flags and FRIS_BROKER_*,
// one part per concern; each part registers and validates its own flags,
// and their fields read as the Config's (cfg.SMTPAddr).
type Config struct {
	server.Base
	Public
	Signup
	Mail
	Sizes
	Caches
	Limits
	Privacy
}

// RegisterFlags adds the serve flags to fs.
func (c *Config) RegisterFlags(fs *flag.FlagSet) {
	// Each results stream the gateway holds open on an inquiry of its own
	// (1,000 researchers behind one address, one tab each) is a
	// WatchReplies call on the gateway's one connection here. At the
	// services' 1,000 RPCs a connection, 1,000 such streams left no room
	// for the gateway's other calls (a bank's reply waited out its
	// deadline): the broker admits as many calls on a connection as it
	// admits watches, and 1,000 more.
	c.Server.MaxStreams = service.MaxWatchers + 1000
	c.Base.RegisterFlags(fs, "127.0.0.1:9104", "127.0.0.1:9204")
	c.Public.RegisterFlags(fs)
	c.Signup.RegisterFlags(fs)
	c.Mail.RegisterFlags(fs)
	c.Sizes.RegisterFlags(fs)
	c.Caches.RegisterFlags(fs)
	c.Limits.RegisterFlags(fs)
	c.Privacy.RegisterFlags(fs)
}

// Validate reports every configuration mistake at once.
func (c *Config) Validate() error {
	errs := []error{c.Base.Validate(), c.Public.Validate(), c.Signup.Validate(), c.Mail.Validate(),
		c.Sizes.Validate(), c.Caches.Validate(), c.Limits.Validate(), c.Privacy.Validate()}
	if c.MaxExposeBytes > c.Server.MaxRecvBytes/2 {
		errs = append(errs, errors.New("-max-expose-bytes must be at most half of -max-recv-bytes"))
	}
	return errors.Join(errs...)
}

// Public is how clients see the broker: its name and its API's URL.
type Public struct {
	Name      string
	PublicURL string
}

// RegisterFlags adds the public face's flags to fs.
func (c *Public) RegisterFlags(fs *flag.FlagSet) {
	fs.StringVar(&c.Name, "name", "FRIS Search Broker", "the broker's name: GET /name and the Server header of every response")
	fs.StringVar(&c.PublicURL, "public-url", "http://127.0.0.1:8080/broker/rest/searchbroker", "the banks' API as clients reach it, for the ExposeURL of inquiries")
}

// Validate reports the public face's mistakes.
func (c *Public) Validate() error {
	var errs []error
	if c.Name == "" {
		errs = append(errs, errors.New("-name must not be empty"))
	}
	if u, err := url.Parse(c.PublicURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		errs = append(errs, fmt.Errorf("-public-url %q must be an absolute http(s) URL", c.PublicURL))
	}
	return errors.Join(errs...)
}

// Signup is how banks register.
type Signup struct {
	Registration  string
	ActivationTTL time.Duration
}

// RegisterFlags adds the registration's flags to fs.
func (c *Signup) RegisterFlags(fs *flag.FlagSet) {
	fs.StringVar(&c.Registration, "registration", service.ModeActivationCode, "how banks register: activation-code (a code is mailed first; the only flow deployed connectors complete) or approval (token at once, an operator approves)")
	fs.DurationVar(&c.ActivationTTL, "activation-ttl", 24*time.Hour, "how long a mailed activation code is valid")
}

// Validate reports the registration's mistakes.
func (c *Signup) Validate() error {
	var errs []error
	if c.Registration != service.ModeApproval && c.Registration != service.ModeActivationCode {
		errs = append(errs, fmt.Errorf("-registration %q: want approval or activation-code", c.Registration))
	}
	if c.ActivationTTL <= 0 {
		errs = append(errs, errors.New("-activation-ttl must be positive"))
	}
	return errors.Join(errs...)
}

// Mail is the SMTP server activation codes go out through.
type Mail struct {
	SMTPAddr     string
	SMTPFrom     string
	SMTPUser     string
	SMTPPassword string
}

// RegisterFlags adds the mail's flags to fs.
func (c *Mail) RegisterFlags(fs *flag.FlagSet) {
	fs.StringVar(&c.SMTPAddr, "smtp-addr", "", "SMTP server host:port for activation codes (empty: codes go to the log)")
	fs.StringVar(&c.SMTPFrom, "smtp-from", "", "sender address of activation mails")
	fs.StringVar(&c.SMTPUser, "smtp-user", "", "SMTP user (empty: no authentication)")
	fs.StringVar(&c.SMTPPassword, "smtp-password", "", "SMTP password (prefer FRIS_BROKER_SMTP_PASSWORD)")
}

// Validate reports the mail's mistakes.
func (c *Mail) Validate() error {
	if c.SMTPAddr == "" {
		return nil
	}
	var errs []error
	if _, _, err := net.SplitHostPort(c.SMTPAddr); err != nil {
		errs = append(errs, fmt.Errorf("-smtp-addr %q must be host:port", c.SMTPAddr))
	}
	if _, err := mail.ParseAddress(c.SMTPFrom); err != nil {
		errs = append(errs, fmt.Errorf("-smtp-from %q must be an email address when -smtp-addr is set", c.SMTPFrom))
	}
	return errors.Join(errs...)
}

// Sizes bound what a bank may send.
type Sizes struct {
	MaxReplyBytes  int
	MaxExposeBytes int
}

// RegisterFlags adds the sizes' flags to fs.
func (c *Sizes) RegisterFlags(fs *flag.FlagSet) {
	fs.IntVar(&c.MaxReplyBytes, "max-reply-bytes", 1<<20, "largest reply a bank may send")
	fs.IntVar(&c.MaxExposeBytes, "max-expose-bytes", 10<<20, "largest expose PDF")
}

// Validate reports the sizes' mistakes (their bound by -max-recv-bytes is
// Config's).
func (c *Sizes) Validate() error {
	if c.MaxReplyBytes <= 0 || c.MaxExposeBytes <= 0 {
		return errors.New("-max-reply-bytes and -max-expose-bytes must be positive")
	}
	return nil
}

// Caches are how long a replica reuses what it read: the bound for a
// change made through another replica.
type Caches struct {
	TokenCacheTTL time.Duration
	ListCacheTTL  time.Duration
	WatchInterval time.Duration
}

// RegisterFlags adds the caches' flags to fs.
func (c *Caches) RegisterFlags(fs *flag.FlagSet) {
	fs.DurationVar(&c.TokenCacheTTL, "token-cache-ttl", 5*time.Second, "how long a bank found by its token is remembered (a deletion or relink through another replica takes effect within it; 0: off)")
	fs.DurationVar(&c.ListCacheTTL, "list-cache-ttl", time.Second, "how long rendered inquiry lists are reused (a change through another replica is seen within it; 0: off)")
	fs.DurationVar(&c.WatchInterval, "watch-interval", 2*time.Second, "how often an open WatchReplies call re-reads the replies (a reply stored through another replica shows within it)")
}

// Validate reports the caches' mistakes.
func (c *Caches) Validate() error {
	if c.TokenCacheTTL < 0 || c.ListCacheTTL < 0 || c.TokenCacheTTL > time.Minute || c.ListCacheTTL > time.Minute {
		return errors.New("-token-cache-ttl and -list-cache-ttl must be between 0 and 1m")
	}
	return nil
}

// Limits are the abuse limits (docs/security.md, "Abuse limits").
type Limits struct {
	LimitBankToken      ratelimit.Policy
	LimitActivationCode ratelimit.Policy
	LimitAddr           ratelimit.Policy
	LimitMail           ratelimit.Policy
	LimitMailAddr       ratelimit.Policy
	LimitCeiling        ratelimit.Policy
}

// RegisterFlags adds the abuse limits' flags to fs.
func (c *Limits) RegisterFlags(fs *flag.FlagSet) {
	ratelimit.PolicyVar(fs, &c.LimitBankToken, "limit-bank-token", "10/15m:10s..15m", "failed bank tokens per bank email and client address")
	ratelimit.PolicyVar(fs, &c.LimitActivationCode, "limit-activation-code", "5/15m:30s..15m", "failed activation codes per bank email and client address")
	ratelimit.PolicyVar(fs, &c.LimitCeiling, "limit-account-ceiling", "100/1h", "failed bank tokens or activation codes per bank email from all addresses together; an address the bank succeeded from before skips it")
	ratelimit.PolicyVar(fs, &c.LimitAddr, "limit-addr", "30/1m:1s..5m", "failed bank tokens and activation codes per client address")
	ratelimit.PolicyVar(fs, &c.LimitMail, "limit-mail", "3/1h", "activation mails per bank email")
	ratelimit.PolicyVar(fs, &c.LimitMailAddr, "limit-mail-addr", "10/1h", "activation mails per client address")
}

// Validate reports the abuse limits' mistakes.
func (c *Limits) Validate() error {
	var errs []error
	for name, p := range map[string]ratelimit.Policy{"-limit-bank-token": c.LimitBankToken, "-limit-activation-code": c.LimitActivationCode,
		"-limit-addr": c.LimitAddr, "-limit-mail": c.LimitMail, "-limit-mail-addr": c.LimitMailAddr, "-limit-account-ceiling": c.LimitCeiling} {
		if err := p.Validate(name); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Privacy is what researchers may learn from replies.
type Privacy struct {
	MinCount int
}

// maxMinCount bounds -min-count: a threshold beyond it hides nearly every
// answer and is more likely a typo than a policy.
const maxMinCount = 1000

// RegisterFlags adds the privacy flags to fs.
func (c *Privacy) RegisterFlags(fs *flag.FlagSet) {
	fs.IntVar(&c.MinCount, "min-count", 0, "researchers see a count below this only as \"< N\" (page, results stream, CSV, API); totals sum the counts shown; operators see them exact (0: off; deployments set 5)")
}

// Validate reports the privacy flags' mistakes.
func (c *Privacy) Validate() error {
	if c.MinCount < 0 || c.MinCount > maxMinCount {
		return fmt.Errorf("-min-count must be between 0 and %d", maxMinCount)
	}
	return nil
}
