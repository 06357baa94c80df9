// Package app wires the search broker: config -> store -> mailer -> server.
package app

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/mail"
	"net/url"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"

	"fris.dev/pkg/audit"
	"fris.dev/pkg/ratelimit"
	"fris.dev/pkg/server"
	brokerv1 "fris.dev/proto/broker/v1"
	"fris.dev/services/broker/internal/mailer"
	"fris.dev/services/broker/internal/service"
	"fris.dev/services/broker/internal/storage"
)

// Config is everything `broker serve` reads from flags and FRIS_BROKER_*.
type Config struct {
	server.Base
	Name           string
	Registration   string
	ActivationTTL  time.Duration
	SMTPAddr       string
	SMTPFrom       string
	SMTPUser       string
	SMTPPassword   string
	MaxReplyBytes  int
	MaxExposeBytes int
	TokenCacheTTL  time.Duration
	ListCacheTTL   time.Duration
	WatchInterval  time.Duration
	PublicURL      string
	// Abuse limits (docs/security.md, "Abuse limits").
	LimitBankToken      ratelimit.Policy
	LimitActivationCode ratelimit.Policy
	LimitAddr           ratelimit.Policy
	LimitMail           ratelimit.Policy
	LimitMailAddr       ratelimit.Policy
	LimitCeiling        ratelimit.Policy
}

// RegisterFlags adds the serve flags to fs.
func (c *Config) RegisterFlags(fs *flag.FlagSet) {
	c.Base.RegisterFlags(fs, "127.0.0.1:9104", "127.0.0.1:9204")
	fs.StringVar(&c.Name, "name", "FRIS Search Broker", "the broker's name: GET /name and the Server header of every response")
	fs.StringVar(&c.Registration, "registration", service.ModeActivationCode, "how banks register: activation-code (a code is mailed first; the only flow deployed connectors complete) or approval (token at once, an operator approves)")
	fs.DurationVar(&c.ActivationTTL, "activation-ttl", 24*time.Hour, "how long a mailed activation code is valid")
	fs.StringVar(&c.SMTPAddr, "smtp-addr", "", "SMTP server host:port for activation codes (empty: codes go to the log)")
	fs.StringVar(&c.SMTPFrom, "smtp-from", "", "sender address of activation mails")
	fs.StringVar(&c.SMTPUser, "smtp-user", "", "SMTP user (empty: no authentication)")
	fs.StringVar(&c.SMTPPassword, "smtp-password", "", "SMTP password (prefer FRIS_BROKER_SMTP_PASSWORD)")
	fs.IntVar(&c.MaxReplyBytes, "max-reply-bytes", 1<<20, "largest reply a bank may send")
	fs.IntVar(&c.MaxExposeBytes, "max-expose-bytes", 10<<20, "largest expose PDF")
	fs.DurationVar(&c.TokenCacheTTL, "token-cache-ttl", 5*time.Second, "how long a bank found by its token is remembered (a deletion or relink through another replica takes effect within it; 0: off)")
	fs.DurationVar(&c.ListCacheTTL, "list-cache-ttl", time.Second, "how long rendered inquiry lists are reused (a change through another replica is seen within it; 0: off)")
	fs.DurationVar(&c.WatchInterval, "watch-interval", 2*time.Second, "how often an open WatchReplies call re-reads the replies (a reply stored through another replica shows within it)")
	ratelimit.PolicyVar(fs, &c.LimitBankToken, "limit-bank-token", "10/15m:10s..15m", "failed bank tokens per bank email and client address")
	ratelimit.PolicyVar(fs, &c.LimitActivationCode, "limit-activation-code", "5/15m:30s..15m", "failed activation codes per bank email and client address")
	ratelimit.PolicyVar(fs, &c.LimitCeiling, "limit-account-ceiling", "100/1h", "failed bank tokens or activation codes per bank email from all addresses together; an address the bank succeeded from before skips it")
	ratelimit.PolicyVar(fs, &c.LimitAddr, "limit-addr", "30/1m:1s..5m", "failed bank tokens and activation codes per client address")
	ratelimit.PolicyVar(fs, &c.LimitMail, "limit-mail", "3/1h", "activation mails per bank email")
	ratelimit.PolicyVar(fs, &c.LimitMailAddr, "limit-mail-addr", "10/1h", "activation mails per client address")
	fs.StringVar(&c.PublicURL, "public-url", "http://127.0.0.1:8080/broker/rest/searchbroker", "the banks' API as clients reach it, for the ExposeURL of inquiries")
}

// Validate reports every configuration mistake at once.
func (c *Config) Validate() error {
	errs := []error{c.Base.Validate()}
	if c.Name == "" {
		errs = append(errs, errors.New("-name must not be empty"))
	}
	if c.Registration != service.ModeApproval && c.Registration != service.ModeActivationCode {
		errs = append(errs, fmt.Errorf("-registration %q: want approval or activation-code", c.Registration))
	}
	if c.ActivationTTL <= 0 {
		errs = append(errs, errors.New("-activation-ttl must be positive"))
	}
	if c.SMTPAddr != "" {
		if _, _, err := net.SplitHostPort(c.SMTPAddr); err != nil {
			errs = append(errs, fmt.Errorf("-smtp-addr %q must be host:port", c.SMTPAddr))
		}
		if _, err := mail.ParseAddress(c.SMTPFrom); err != nil {
			errs = append(errs, fmt.Errorf("-smtp-from %q must be an email address when -smtp-addr is set", c.SMTPFrom))
		}
	}
	if c.MaxReplyBytes <= 0 || c.MaxExposeBytes <= 0 {
		errs = append(errs, errors.New("-max-reply-bytes and -max-expose-bytes must be positive"))
	}
	if c.MaxExposeBytes > c.Server.MaxRecvBytes/2 {
		errs = append(errs, errors.New("-max-expose-bytes must be at most half of -max-recv-bytes"))
	}
	if c.TokenCacheTTL < 0 || c.ListCacheTTL < 0 || c.TokenCacheTTL > time.Minute || c.ListCacheTTL > time.Minute {
		errs = append(errs, errors.New("-token-cache-ttl and -list-cache-ttl must be between 0 and 1m"))
	}
	if u, err := url.Parse(c.PublicURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		errs = append(errs, fmt.Errorf("-public-url %q must be an absolute http(s) URL", c.PublicURL))
	}
	for name, p := range map[string]ratelimit.Policy{"-limit-bank-token": c.LimitBankToken, "-limit-activation-code": c.LimitActivationCode,
		"-limit-addr": c.LimitAddr, "-limit-mail": c.LimitMail, "-limit-mail-addr": c.LimitMailAddr, "-limit-account-ceiling": c.LimitCeiling} {
		if err := p.Validate(name); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Run serves the broker until ctx ends.
func Run(ctx context.Context, cfg Config, log *slog.Logger) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	cfg.Store.Partitions = storage.Partitions
	// Readiness after a full disk waits until a bank's largest reply or
	// expose fits, not only a small write.
	cfg.Store.LargestWrite = int64(max(cfg.MaxReplyBytes, cfg.MaxExposeBytes))
	deps, err := cfg.Open(ctx, "broker", log)
	if err != nil {
		return err
	}
	defer deps.Close()
	db, auditLog := deps.Store, deps.Audit
	var m mailer.Mailer = mailer.Log{Log: log}
	if cfg.SMTPAddr != "" {
		m = mailer.SMTP{Addr: cfg.SMTPAddr, From: cfg.SMTPFrom, User: cfg.SMTPUser, Password: cfg.SMTPPassword, BrokerName: cfg.Name}
	} else if cfg.Registration == service.ModeActivationCode {
		log.Warn("activation-code registration without -smtp-addr: codes are written to this log for the operator")
	}
	reg := prometheus.NewRegistry()
	limits := ratelimit.New(db, reg, log)
	auditLog.LimitRefusals(limits.AllowLog)
	svc := service.New(service.Config{
		Name: cfg.Name, Registration: cfg.Registration, ActivationTTL: cfg.ActivationTTL,
		MaxReplyBytes: cfg.MaxReplyBytes, MaxExposeBytes: cfg.MaxExposeBytes,
		TokenCacheTTL: cfg.TokenCacheTTL, ListCacheTTL: cfg.ListCacheTTL, WatchInterval: cfg.WatchInterval, Done: ctx.Done(), PublicURL: cfg.PublicURL, Audit: auditLog,
		Guards: service.Guards{
			BankToken:      limits.Guard("bank_token", cfg.LimitBankToken, cfg.LimitAddr).WithCeiling(cfg.LimitCeiling),
			ActivationCode: limits.Guard("activation_code", cfg.LimitActivationCode, cfg.LimitAddr).WithCeiling(cfg.LimitCeiling),
			ActivationMail: limits.Guard("activation_mail", cfg.LimitMail, cfg.LimitMailAddr),
		},
	}, storage.New(db), m, log)
	return server.Run(ctx, cfg.Server, server.Service{
		Name: "fris.broker.v1.BrokerService",
		Log:  log,
		Register: func(s *grpc.Server) {
			brokerv1.RegisterBrokerServiceServer(s, service.Public{Service: svc})
			brokerv1.RegisterResearcherServiceServer(s, service.Researcher{Service: svc})
			s.RegisterService(audit.AdminService(&brokerv1.BrokerAdmin_ServiceDesc, auditLog), service.Admin{Service: svc})
		},
		Ready:   svc.Ready,
		Metrics: reg,
		// The Explorer's operator views (docs/security.md): the banks and
		// their monitoring reports, never the inquiries.
		Operator: []string{
			brokerv1.BrokerAdmin_ListBanks_FullMethodName, brokerv1.BrokerAdmin_ApproveBank_FullMethodName,
			brokerv1.BrokerAdmin_LinkBankSite_FullMethodName, brokerv1.BrokerAdmin_DeleteBank_FullMethodName,
			brokerv1.BrokerAdmin_ListMonitoring_FullMethodName,
		},
	})
}
