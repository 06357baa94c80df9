// Package app wires the central upload: config -> store -> registry client
// -> server.
package app

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"

	"fris.dev/pkg/audit"
	"fris.dev/pkg/backup"
	"fris.dev/pkg/kv"
	"fris.dev/pkg/password"
	"fris.dev/pkg/ratelimit"
	"fris.dev/pkg/rpcclient"
	"fris.dev/pkg/server"
	"fris.dev/pkg/throttles"
	brokerv1 "fris.dev/proto/broker/v1"
	mdrv1 "fris.dev/proto/mdr/v1"
	uploadv1 "fris.dev/proto/upload/v1"
	"fris.dev/services/upload/internal/service"
	"fris.dev/services/upload/internal/storage"
)

// Config is everything `upload serve` reads from flags and FRIS_UPLOAD_*.
type Config struct {
	server.Base
	MDRAddr          string
	BrokerAddr       string
	Validation       string
	RegistryTimeout  time.Duration
	MaxDocumentBytes int64
	MaxDepth         int
	MaxParseBytes    int64
	SecretCacheTTL   time.Duration
	Argon2Memory     uint
	// Abuse limits of failed Basic credentials (docs/security.md, "Abuse
	// limits").
	LimitBasic   ratelimit.Policy
	LimitAddr    ratelimit.Policy
	LimitCeiling ratelimit.Policy
}

// RegisterFlags adds the serve flags to fs.
func (c *Config) RegisterFlags(fs *flag.FlagSet) {
	// Connectors upload in bulk and wait for each answer: 2ms more per
	// upload lets concurrent uploads share one commit (one fsync) on both
	// stores (BENCHMARKS.md, suite upload).
	c.Store.BatchDelay = 2 * time.Millisecond
	// A message holds one document (-max-document-bytes) and its framing;
	// more is nobody's upload, and each message received is held whole.
	c.Server.MaxRecvBytes = 24 << 20
	c.Base.RegisterFlags(fs, "127.0.0.1:9103", "127.0.0.1:9203")
	fs.StringVar(&c.MDRAddr, "mdr-addr", "", "gRPC address of the mdr service, for value validation (empty: validation off)")
	fs.StringVar(&c.BrokerAddr, "broker-addr", "", "gRPC address of the broker, whose site registry a new credential's site must be in (empty: not checked)")
	fs.StringVar(&c.Validation, "validation", "", "values checked against the registry: off, warn (stored, problems logged and counted) or reject (422); default warn with -mdr-addr, else off")
	fs.DurationVar(&c.RegistryTimeout, "registry-timeout", 5*time.Second, "longest wait for the registry's value check of one upload; then warn stores the document unchecked and reject answers 503")
	fs.Int64Var(&c.MaxDocumentBytes, "max-document-bytes", 10<<20, "largest patient document")
	fs.IntVar(&c.MaxDepth, "max-depth", 32, "deepest element nesting of a patient document")
	fs.Int64Var(&c.MaxParseBytes, "max-parse-bytes", 16<<20, "most bytes of patient documents parsed at once; more wait for their turn within the call's deadline (0: no bound; else at least -max-document-bytes)")
	fs.DurationVar(&c.SecretCacheTTL, "secret-cache-ttl", 5*time.Minute, "how long a verified site password is remembered (0: never)")
	ratelimit.PolicyVar(fs, &c.LimitBasic, "limit-basic", "10/15m:10s..15m", "failed Basic credentials per username and client address")
	ratelimit.PolicyVar(fs, &c.LimitCeiling, "limit-account-ceiling", "100/1h", "failed Basic credentials per username from all addresses together; an address the site's connector succeeded from before skips it")
	ratelimit.PolicyVar(fs, &c.LimitAddr, "limit-addr", "30/1m:1s..5m", "failed Basic credentials per client address")
	fs.UintVar(&c.Argon2Memory, "argon2-memory-kib", uint(password.Default.Memory), "argon2id memory cost of new password hashes, KiB")
}

// Validate reports every configuration mistake at once.
func (c *Config) Validate() error {
	errs := []error{c.Base.Validate()}
	if c.Validation == "" {
		c.Validation = service.ValidateOff
		if c.MDRAddr != "" {
			c.Validation = service.ValidateWarn
		}
	}
	switch c.Validation {
	case service.ValidateOff:
	case service.ValidateWarn, service.ValidateReject:
		if c.MDRAddr == "" {
			errs = append(errs, fmt.Errorf("-validation %s needs -mdr-addr (or -validation off)", c.Validation))
		}
	default:
		errs = append(errs, fmt.Errorf("-validation %q: want off, warn or reject", c.Validation))
	}
	if c.MaxDocumentBytes <= 0 || c.MaxDocumentBytes > int64(c.Server.MaxRecvBytes)/2 {
		errs = append(errs, errors.New("-max-document-bytes must be positive and at most half of -max-recv-bytes"))
	}
	if c.MaxParseBytes < 0 || c.MaxParseBytes > 0 && c.MaxParseBytes < c.MaxDocumentBytes {
		errs = append(errs, errors.New("-max-parse-bytes must be 0 or at least -max-document-bytes"))
	}
	if c.MaxDepth < 4 || c.MaxDepth > 1000 {
		errs = append(errs, errors.New("-max-depth must be between 4 and 1000"))
	}
	if c.RegistryTimeout <= 0 {
		errs = append(errs, errors.New("-registry-timeout must be positive"))
	}
	if c.SecretCacheTTL < 0 {
		errs = append(errs, errors.New("-secret-cache-ttl must not be negative"))
	}
	if c.Argon2Memory < 1024 || c.Argon2Memory > 1<<22 {
		errs = append(errs, errors.New("-argon2-memory-kib must be between 1024 and 4194304"))
	}
	for name, p := range map[string]ratelimit.Policy{"-limit-basic": c.LimitBasic, "-limit-addr": c.LimitAddr, "-limit-account-ceiling": c.LimitCeiling} {
		if err := p.Validate(name); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// counters are the service's Prometheus metrics.
type counters struct {
	uploads  *prometheus.CounterVec
	problems prometheus.Counter
}

func newCounters(reg prometheus.Registerer) counters {
	c := counters{
		uploads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "fris_upload_patients_total", Help: "Patient uploads by outcome (created, replaced, rejected, invalid).",
		}, []string{"outcome"}),
		problems: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "fris_upload_value_problems_total", Help: "Values the registry refused (stored in mode warn, refused in mode reject).",
		}),
	}
	reg.MustRegister(c.uploads, c.problems)
	return c
}

func (c counters) Upload(outcome string) { c.uploads.WithLabelValues(outcome).Inc() }
func (c counters) ValueProblems(n int)   { c.problems.Add(float64(n)) }

// Run serves the upload until ctx ends.
func Run(ctx context.Context, cfg Config, log *slog.Logger) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	cfg.Store.Partitions = storage.Partitions
	// Readiness after a full disk waits until a document of the largest
	// size fits, not only a small write.
	cfg.Store.LargestWrite = cfg.MaxDocumentBytes
	deps, err := cfg.Open(ctx, "upload", log)
	if err != nil {
		return err
	}
	defer deps.Close()
	db, auditLog := deps.Store, deps.Audit
	var checker service.Checker
	if cfg.Validation != service.ValidateOff {
		// Upload's own certificate: mdr admits it to CheckValues.
		transport, err := cfg.Server.TLS.DialOption()
		if err != nil {
			return err
		}
		cc, err := rpcclient.Dial(cfg.MDRAddr, transport)
		if err != nil {
			return fmt.Errorf("mdr: %w", err)
		}
		defer cc.Close()
		// Resolve and connect now, not on the first upload: a slow DNS
		// answer is then paid at start, not by a connector's request.
		cc.Connect()
		checker = service.Registry{Client: mdrv1.NewMdrServiceClient(cc)}
	}
	var sites service.Sites
	if cfg.BrokerAddr != "" {
		// Upload's own certificate: the broker admits it to GetSite and
		// CreateSite.
		transport, err := cfg.Server.TLS.DialOption()
		if err != nil {
			return err
		}
		cc, err := rpcclient.Dial(cfg.BrokerAddr, transport)
		if err != nil {
			return fmt.Errorf("broker: %w", err)
		}
		defer cc.Close()
		sites = service.BrokerSites{Client: brokerv1.NewBrokerAdminClient(cc)}
	} else {
		log.Warn("no -broker-addr: credentials are created for any site id, unchecked against the site registry")
	}
	params := password.Default
	params.Memory = uint32(cfg.Argon2Memory)
	reg := prometheus.NewRegistry()
	if b, ok := db.(*kv.Bolt); ok {
		// Uploads per commit is the group-commit factor the benchmark reports.
		reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "fris_upload_store_commits_total",
			Help: "Write transactions the embedded store committed (each one durable flush, two fdatasyncs), since the file was created.",
		}, func() float64 { return float64(b.Commits()) }))
	}
	auditLog.RegisterMetrics(reg)
	limits := ratelimit.New(db, reg, log)
	auditLog.LimitRefusals(limits.AllowLog)
	hasher := password.New(params, cfg.SecretCacheTTL)
	reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "fris_password_hashes_total",
		Help: "argon2id computations (Basic password checks, burns for unknown usernames, new hashes): what the abuse limits bound.",
	}, func() float64 { return float64(hasher.Computations()) }))
	svc := service.New(service.Config{
		MaxDocumentBytes: cfg.MaxDocumentBytes, MaxDepth: cfg.MaxDepth, Validation: cfg.Validation, MaxParseBytes: cfg.MaxParseBytes,
		RegistryTimeout: cfg.RegistryTimeout,
		Guard:           limits.Guard("basic", cfg.LimitBasic, cfg.LimitAddr).WithCeiling(cfg.LimitCeiling), Sites: sites,
	}, storage.New(db), hasher, checker, newCounters(reg), log)
	// In the background: the broker may start after upload, and uploads
	// need no registry.
	go migrateSites(ctx, svc, log)
	return server.Run(ctx, cfg.Server, server.Service{
		Name: "fris.upload.v1.UploadService",
		Log:  log,
		Register: func(s *grpc.Server) {
			uploadv1.RegisterUploadServiceServer(s, service.Public{Service: svc})
			s.RegisterService(audit.AdminService(&uploadv1.UploadAdmin_ServiceDesc, auditLog), service.Admin{Service: svc})
			backup.Register(s, "upload", db, auditLog, log)
			audit.Register(s, "upload", deps.Events, cfg.Settings(settingNames...), log)
			throttles.Register(s, "upload", limits, auditLog, log)
		},
		Ready:   svc.Ready,
		Metrics: reg,
		// The Explorer's view of the sites' uploads, for operators
		// (docs/security.md): counts and times, never a patient.
		// The audit and settings views (pkg/audit) too.
		// The throttles view (pkg/throttles): the credentials slowed now.
		Operator: slices.Concat([]string{uploadv1.UploadAdmin_ListTeilers_FullMethodName}, audit.OperatorMethods, throttles.OperatorMethods),
	})
}

// migrateSites puts the sites the credentials name into the broker's site
// registry, retrying until the broker answers or ctx ends.
func migrateSites(ctx context.Context, svc *service.Service, log *slog.Logger) {
	wait := time.Second
	for {
		err := svc.MigrateSites(ctx)
		if err == nil || ctx.Err() != nil {
			return
		}
		log.WarnContext(ctx, "site registry: the sites of the credentials could not be added yet; retrying", "err", err, "retry_in", wait)
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		wait = min(2*wait, time.Minute)
	}
}
