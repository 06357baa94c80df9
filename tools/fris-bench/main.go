// Command fris-bench loads the gateway with vegeta. Its suites (mdr, auth,
// bearer, broker, upload, guess; BENCHMARKS.md) include these four:
//
//   - mdr: registry reads next to a baseline, a plain net/http server started
//     in this process that answers the same path with the same bytes and
//     Content-Type, i.e. the cost of HTTP alone. For every PATH it runs the
//     baseline, then the gateway, with the same closed-loop scenario.
//
//   - auth: the token endpoint's machine flows (refresh token; sign request,
//     client signature and token) as token responses per second, next to the
//     raw RSA signing rate of this machine measured in the same run, i.e. the
//     crypto limit.
//
//   - bearer: one registry read with and without a valid access token, so
//     the cost of checking a bearer token shows.
//
//   - guess: a real user's sign-ins at the login form, alone and while 64
//     guessers send wrong passwords from another loopback address, so the
//     abuse limits' effect shows.
//
//     fris-bench -gateway http://127.0.0.1:8080 -connections 64 -duration 10s \
//     /v3/api/mdr/namespaces/mdr16/members
//     FRIS_BENCH_CLIENT_SECRET=... FRIS_BENCH_USER_PASSWORD=... fris-bench \
//     -suites auth,bearer -client-id fris-bench -user-email bench@fris.example
//
// Suite hydra (hydra.go) puts FRIS next to Ory Hydra on the same cores; it
// runs only when named, from tools/hydra-compare/run.sh, which starts both.
//
// It prints Markdown tables with the targets' verdicts. It exits 1 when any
// response is an error (an unexpected status, or a body other than the one
// expected) or a set-up step fails, and 2 on bad usage; a missed target is
// reported, not an exit status.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/signal"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"fris.dev/pkg/mtls"
	"fris.dev/pkg/server"
)

func main() {
	// The load generator shares the cores with what it measures; it
	// collects garbage as rarely as the services do (server.DefaultGCPercent).
	server.ApplyGCPercent(server.DefaultGCPercent)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

type config struct {
	gateway     string
	connections int
	duration    time.Duration
	warmup      time.Duration
	jsonPath    string
	minRatio    float64
	maxP99      time.Duration
	watch       string
	allowRemote bool
	paths       []string

	suites            []string
	tokenConnections  int
	tokenRounds       int
	tokenDuration     time.Duration
	tokenFlows        []string
	flowProcs         int
	flowBatch         bool
	rsaDuration       time.Duration
	minCryptoShare    float64
	bearerPath        string
	bearerRounds      int
	maxBearerSlowdown float64
	creds             credentials
	// es256Client and nullClient are the clients of the refresh-es256 and
	// refresh-null flows (same secret as -client-id's); empty: not run.
	es256Client, nullClient string

	brokerAdmin       string
	brokerTLS         mtls.Config
	brokerBanks       int
	brokerSites       int
	brokerInquiries   int
	brokerRate        int
	brokerConnections int
	brokerDuration    time.Duration
	brokerMaxP99      time.Duration

	uploadStore       string
	uploadSite        string
	uploadTeiler      string
	uploadSites       int
	uploadUser        string
	uploadPassword    string
	uploadTemplate    string
	uploadDocBytes    int
	uploadClients     int
	uploadDuration    time.Duration
	uploadMetrics     string
	uploadMaxP99      time.Duration
	uploadMinPerFsync float64
	fsyncDir          string
	fsyncDuration     time.Duration

	guessers      int
	guessSource   string
	guessDuration time.Duration
	guessMaxP99   time.Duration

	attacks         map[string]bool
	attackDuration  time.Duration
	attackSettle    time.Duration
	attackRate      float64
	attackBodies    int
	attackBodyMiB   int
	attackSlowConns int
	attackMaxRatio  float64

	streams            int
	streamsInquiry     string
	streamsSources     int
	streamsReplies     int
	streamsIdle        time.Duration
	streamsIdleTarget  float64
	streamsAfterTarget float64

	hydraPublic string
	hydraAdmin  string
}

// Suites, in the order they run.
const (
	suiteMDR     = "mdr"
	suiteBearer  = "bearer"
	suiteAuth    = "auth"
	suiteBroker  = "broker"
	suiteUpload  = "upload"
	suiteGuess   = "guess"
	suiteAttack  = "attack"
	suiteStreams = "streams"
	// suiteHydra is FRIS next to Ory Hydra (tools/hydra-compare), not part of make bench.
	suiteHydra = "hydra"
)

var allSuites = []string{suiteMDR, suiteBearer, suiteAuth, suiteBroker, suiteUpload, suiteGuess, suiteAttack, suiteStreams, suiteHydra}

func (c config) has(suite string) bool { return slices.Contains(c.suites, suite) }

// Environment fallbacks of the secret flags, so they stay out of ps.
const (
	envClientSecret = "FRIS_BENCH_CLIENT_SECRET"
	envUserPassword = "FRIS_BENCH_USER_PASSWORD"
	envSitePassword = "FRIS_BENCH_SITE_PASSWORD"
)

func parseFlags(args []string, stderr io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("fris-bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: fris-bench [flags] [PATH...]   (PATHs: the mdr suite's)")
		fs.PrintDefaults()
	}
	fs.StringVar(&c.gateway, "gateway", "http://127.0.0.1:8080", "base URL of the running gateway")
	fs.IntVar(&c.connections, "connections", 64, "mdr, bearer: connections (= workers) of the closed loop")
	fs.DurationVar(&c.duration, "duration", 10*time.Second, "measured time of each run")
	fs.DurationVar(&c.warmup, "warmup", 2*time.Second, "warm-up of each run, discarded")
	fs.StringVar(&c.jsonPath, "json", "", "also write the raw numbers to this file")
	fs.Float64Var(&c.minRatio, "min-ratio", 0.5, "mdr suite target: gateway req/s at least this share of the baseline's")
	fs.DurationVar(&c.maxP99, "max-p99", 10*time.Millisecond, "mdr suite target: gateway p99 latency below this")
	fs.StringVar(&c.watch, "watch", "", "name=pid,... of local processes whose CPU time per request (token response) to report (Linux)")
	fs.BoolVar(&c.allowRemote, "allow-remote", false, "allow a gateway that is not on a loopback address")
	suites := fs.String("suites", suiteMDR, "comma-separated suites to run: "+strings.Join(allSuites, ", ")+" (or all)")
	fs.IntVar(&c.tokenConnections, "token-connections", 16, "auth suite: connections (= workers) of the token flows")
	fs.DurationVar(&c.tokenDuration, "token-duration", 4*time.Second, "auth suite: measured time of each flow in each round (after -warmup)")
	tokenFlows := fs.String("token-flows", strings.Join(allFlows, ","), "auth suite: the flows to run, comma-separated: "+strings.Join(allFlows, ", ")+" (refresh-oauth: a refresh with grant_type, whose refresh token the auth service signs HS256 under a key derived from its refresh key)")
	fs.IntVar(&c.tokenRounds, "token-rounds", 5, "auth suite: rounds of both flows, each between two raw-rate measurements")
	fs.BoolVar(&c.flowBatch, "flow-batch", true, "auth suite: run this load generator under SCHED_BATCH while a flow runs (Linux), so its wake-ups do not preempt the services")
	fs.IntVar(&c.flowProcs, "flow-procs", 1, "auth suite: GOMAXPROCS of this load generator while a flow runs (the raw rate always uses every CPU); 0 leaves it")
	fs.DurationVar(&c.rsaDuration, "rsa-duration", 3*time.Second, "auth suite: how long the raw RSA signing rate is measured, before and after the flows")
	fs.Float64Var(&c.minCryptoShare, "min-crypto-share", 0.7, "auth suite target: token responses/s at least this share of the crypto limit")
	fs.StringVar(&c.bearerPath, "bearer-path", "/v3/api/mdr/dataelements/urn:mdr16:dataelement:23:1", "bearer suite: the registry read")
	fs.IntVar(&c.bearerRounds, "bearer-rounds", 2, "bearer suite: alternating rounds of without/with token")
	fs.Float64Var(&c.maxBearerSlowdown, "max-bearer-slowdown", 0.10, "bearer suite target: reads with a token at most this much slower")
	fs.StringVar(&c.creds.clientID, "client-id", "", "auth, bearer: the seeded client")
	fs.StringVar(&c.es256Client, "es256-client-id", "", "auth: a client set to ES256 (-alg), with -client-id's secret: adds the "+flowRefreshES256+" flow, and "+flowSignatureES256+" when "+flowSignature+" runs")
	fs.StringVar(&c.nullClient, "null-client-id", "", "auth: the client an auth service built with -tags fris_bench_null answers with signing stubbed out (-bench-null-signer), with -client-id's secret: adds the "+flowRefreshNull+" flow")
	fs.StringVar(&c.creds.clientSecret, "client-secret", "", "auth, bearer: its secret (default $"+envClientSecret+")")
	fs.StringVar(&c.creds.email, "user-email", "", "auth, bearer: the seeded user, who signs in with a password")
	fs.StringVar(&c.creds.password, "user-password", "", "auth, bearer: the user's password (default $"+envUserPassword+")")
	fs.StringVar(&c.brokerAdmin, "broker-admin", "127.0.0.1:9104", "broker: gRPC address of the broker's admin API (banks are approved there)")
	// The admin API admits only an operator's certificate ("admin").
	c.brokerTLS.RegisterFlags(fs, mtls.Dev(mtls.DefaultDir(), mtls.Admin))
	fs.IntVar(&c.brokerBanks, "broker-banks", 1000, "broker: banks registered and polling")
	fs.IntVar(&c.brokerSites, "broker-sites", 10, "broker: sites the banks are spread over")
	fs.IntVar(&c.brokerInquiries, "broker-inquiries", 3, "broker: released inquiries, addressed to every site")
	fs.IntVar(&c.brokerRate, "broker-rate", 1000, "broker: polls per second in all (each bank once a second at rate = banks)")
	fs.IntVar(&c.brokerConnections, "broker-connections", 256, "broker: most connections (= workers) of the open loop")
	fs.DurationVar(&c.brokerDuration, "broker-duration", 30*time.Second, "broker: measured time")
	fs.DurationVar(&c.brokerMaxP99, "broker-max-p99", 50*time.Millisecond, "broker target: p99 latency below this")
	fs.StringVar(&c.uploadStore, "upload-store", "bolt", "upload: the store the upload service runs on, for the report (bolt or redis)")
	fs.StringVar(&c.uploadSite, "upload-site", "bench", "upload: site id of the credentials")
	fs.StringVar(&c.uploadTeiler, "upload-teiler", "teiler1", "upload: teiler id of the credentials")
	fs.StringVar(&c.uploadUser, "upload-user", "bench-teiler1", "upload: Basic username")
	fs.IntVar(&c.uploadSites, "upload-sites", 1, "upload: sites the uploads are spread over, round robin; above 1, site i (1..n) is <upload-site>-<i> with user <upload-user>-<i>, all with the one password")
	fs.StringVar(&c.uploadPassword, "upload-password", "", "upload: its password (default $"+envSitePassword+")")
	fs.StringVar(&c.uploadTemplate, "upload-template", "tools/fris-bench/testdata/patient.xml", "upload: the patient document the uploads are made from (a connector-shaped patient of about 3.5 KB)")
	fs.IntVar(&c.uploadDocBytes, "upload-doc-bytes", 5000, "upload: size of each document (the template, padded with attributes)")
	fs.IntVar(&c.uploadClients, "upload-clients", 8, "upload: concurrent clients (closed loop)")
	fs.DurationVar(&c.uploadDuration, "upload-duration", 10*time.Second, "upload: measured time")
	fs.StringVar(&c.uploadMetrics, "upload-metrics", "", "upload: the upload service's /metrics URL (its store commits; empty: not read)")
	fs.DurationVar(&c.uploadMaxP99, "upload-max-p99", 50*time.Millisecond, "upload target: p99 latency below this")
	fs.Float64Var(&c.uploadMinPerFsync, "upload-min-per-fsync", 5, "upload target: uploads per fsync at least this (group commit)")
	fs.StringVar(&c.fsyncDir, "fsync-dir", os.TempDir(), "upload: directory on the disk the store writes to, for the plain fsync rate")
	fs.DurationVar(&c.fsyncDuration, "fsync-duration", 2*time.Second, "upload: how long each plain sync rate is measured")
	fs.IntVar(&c.guessers, "guessers", 64, "guess: goroutines guessing passwords at the login form")
	fs.StringVar(&c.guessSource, "guess-source", "127.0.0.2", "guess: local address the guessers connect from (another address than the real user's; Linux routes all of 127.0.0.0/8 to loopback)")
	fs.DurationVar(&c.guessDuration, "guess-duration", 10*time.Second, "guess: measured time of the real user's sign-ins, alone and under guessing (after -warmup)")
	fs.DurationVar(&c.guessMaxP99, "guess-max-p99", 200*time.Millisecond, "guess target: the real user's p99 under guessing below this")
	attackList := fs.String("attacks", "", "attack: the attacks to run, comma-separated (empty: all): "+strings.Join(attackNames, ", "))
	fs.DurationVar(&c.attackDuration, "attack-duration", 8*time.Second, "attack: measured time of the legitimate traffic, quiet and under each attack (after -warmup)")
	fs.DurationVar(&c.attackSettle, "attack-settle", 2*time.Second, "attack: pause after each attack, before the next one starts")
	fs.Float64Var(&c.attackRate, "attack-rate", 100, "attack: requests per second of each guessing attack")
	fs.IntVar(&c.attackBodies, "attack-bodies", 24, "attack: most anonymous uploads of the bodies attack at once (they start at -attack-rate)")
	fs.IntVar(&c.attackBodyMiB, "attack-body-mib", 8, "attack: size of each anonymous upload, MiB")
	fs.IntVar(&c.attackSlowConns, "attack-slow-conns", 4200, "attack: connections the slow attack holds from one address")
	fs.Float64Var(&c.attackMaxRatio, "attack-max-ratio", 2, "attack target: each p99 under attack at most this many times the quiet one")
	fs.IntVar(&c.streams, "streams", 200, "streams: Explorer results streams open on one inquiry")
	fs.StringVar(&c.streamsInquiry, "streams-inquiry", "", "streams: id of a released inquiry of the user (-user-email) to which the banks of $"+envBankTokens+" reply")
	fs.IntVar(&c.streamsSources, "streams-sources", 4, "streams: loopback addresses the streams come from (signed in, they count against the user's -max-inflight-per-subject, which the bench lifts, not the address's)")
	fs.IntVar(&c.streamsReplies, "streams-replies", 30, "streams: replies sent, each after every stream received the last")
	fs.DurationVar(&c.streamsIdle, "streams-idle", time.Minute, "streams: wait after the streams closed before the memory is read again")
	fs.Float64Var(&c.streamsIdleTarget, "streams-idle-target-mib", 120, "streams target: the watched processes' VmRSS before, in all, under this")
	fs.Float64Var(&c.streamsAfterTarget, "streams-after-target-mib", 150, "streams target: their VmRSS -streams-idle after the streams closed, in all, under this")
	fs.StringVar(&c.hydraPublic, "hydra-public", "", "hydra: base URL of Ory Hydra's public API (tools/hydra-compare starts one)")
	fs.StringVar(&c.hydraAdmin, "hydra-admin", "", "hydra: base URL of Ory Hydra's admin API (clients, login and consent, introspection)")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	c.paths = fs.Args()
	for _, a := range strings.Split(*attackList, ",") {
		if a = strings.TrimSpace(a); a != "" {
			if !slices.Contains(attackNames, a) {
				return c, fmt.Errorf("-attacks: unknown attack %q (have %s)", a, strings.Join(attackNames, ", "))
			}
			if c.attacks == nil {
				c.attacks = map[string]bool{}
			}
			c.attacks[a] = true
		}
	}
	if c.uploadPassword == "" {
		c.uploadPassword = os.Getenv(envSitePassword)
	}
	for _, s := range strings.Split(*suites, ",") {
		switch s = strings.TrimSpace(s); {
		case s == "all":
			// The hydra suite needs a Hydra: only when named.
			c.suites = append(c.suites, slices.DeleteFunc(slices.Clone(allSuites), func(s string) bool { return s == suiteHydra })...)
		case slices.Contains(allSuites, s):
			c.suites = append(c.suites, s)
		case s != "":
			return c, fmt.Errorf("-suites: unknown suite %q (have %s)", s, strings.Join(allSuites, ", "))
		}
	}
	if err := c.parseTokenFlows(*tokenFlows); err != nil {
		return c, err
	}
	// Fixed order, each once.
	c.suites = slices.DeleteFunc(slices.Clone(allSuites), func(s string) bool { return !slices.Contains(c.suites, s) })
	if c.creds.clientSecret == "" {
		c.creds.clientSecret = os.Getenv(envClientSecret)
	}
	if c.creds.password == "" {
		c.creds.password = os.Getenv(envUserPassword)
	}
	needCreds := c.has(suiteAuth) || c.has(suiteBearer) || c.has(suiteGuess) || c.has(suiteAttack) || c.has(suiteHydra)
	switch {
	case len(c.suites) == 0:
		return c, errors.New("-suites: name at least one suite")
	case c.has(suiteMDR) && len(c.paths) == 0:
		return c, errors.New("the mdr suite needs at least one PATH")
	case !c.has(suiteMDR) && len(c.paths) > 0:
		return c, errors.New("PATHs are for the mdr suite, which is not selected")
	case c.tokenRounds <= 0 || c.tokenDuration <= 0 || c.flowProcs < 0:
		return c, errors.New("-token-rounds and -token-duration must be positive and -flow-procs not negative")
	case c.connections <= 0 || c.tokenConnections <= 0:
		return c, errors.New("-connections and -token-connections must be positive")
	case c.duration <= 0 || c.warmup < 0:
		return c, errors.New("-duration must be positive and -warmup not negative")
	case c.has(suiteBroker) && (c.brokerBanks <= 0 || c.brokerSites <= 0 || c.brokerInquiries <= 0 || c.brokerRate <= 0 || c.brokerConnections <= 0 || c.brokerDuration <= 0):
		return c, errors.New("-broker-banks, -broker-sites, -broker-inquiries, -broker-rate, -broker-connections and -broker-duration must be positive")
	case c.has(suiteUpload) && (c.uploadPassword == "" || c.uploadSites <= 0 || c.uploadClients <= 0 || c.uploadDuration <= 0 || c.uploadDocBytes <= 0 || c.fsyncDuration <= 0):
		return c, fmt.Errorf("the upload suite needs -upload-password (or $%s) and positive -upload-sites, -upload-clients, -upload-duration, -upload-doc-bytes and -fsync-duration", envSitePassword)
	case c.has(suiteGuess) && (c.guessers <= 0 || c.guessDuration <= 0):
		return c, errors.New("-guessers and -guess-duration must be positive")
	case c.has(suiteAttack) && (c.uploadPassword == "" || c.attackDuration <= 0 || c.attackRate <= 0 || c.attackBodies <= 0 || c.attackBodyMiB <= 0 || c.attackSlowConns <= 0 || c.attackMaxRatio <= 0 || c.attackSettle < 0):
		return c, fmt.Errorf("the attack suite needs -upload-password (or $%s) and positive -attack-duration, -attack-rate, -attack-bodies, -attack-body-mib, -attack-slow-conns and -attack-max-ratio", envSitePassword)
	case c.has(suiteStreams) && (c.streams <= 0 || c.streamsSources <= 0 || c.streamsReplies <= 0 || c.streamsInquiry == "" || c.creds.email == "" || c.creds.password == "" || c.watch == ""):
		return c, fmt.Errorf("the streams suite needs -streams-inquiry, -user-email, -user-password (or $%s), -watch with gateway=PID, and positive -streams, -streams-sources and -streams-replies", envUserPassword)
	case c.has(suiteHydra) && (!loopbackURL(c.hydraPublic) || !loopbackURL(c.hydraAdmin)):
		return c, errors.New("the hydra suite needs -hydra-public and -hydra-admin, http URLs on a loopback address")
	case c.rsaDuration <= 0 || c.bearerRounds <= 0:
		return c, errors.New("-rsa-duration and -bearer-rounds must be positive")
	case needCreds && (c.creds.clientID == "" || c.creds.clientSecret == "" || c.creds.email == "" || c.creds.password == ""):
		return c, fmt.Errorf("the auth, bearer and guess suites need -client-id, -client-secret (or $%s), -user-email and -user-password (or $%s)", envClientSecret, envUserPassword)
	case c.has(suiteBearer) && !strings.HasPrefix(c.bearerPath, "/"):
		return c, fmt.Errorf("-bearer-path %q must start with /", c.bearerPath)
	}
	for _, p := range c.paths {
		if !strings.HasPrefix(p, "/") {
			return c, fmt.Errorf("path %q must start with /", p)
		}
	}
	u, err := url.Parse(c.gateway)
	if err != nil || u.Scheme != "http" || u.Host == "" {
		return c, fmt.Errorf("-gateway %q: want http://host:port", c.gateway)
	}
	if !c.allowRemote && !isLoopback(u.Hostname()) {
		return c, fmt.Errorf("-gateway %q is not a loopback address (use -allow-remote to load another host)", c.gateway)
	}
	c.gateway = strings.TrimRight(c.gateway, "/")
	return c, nil
}

func loopbackURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && u.Scheme == "http" && isLoopback(u.Hostname())
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Report is what -json writes.
type Report struct {
	Started    time.Time      `json:"started"`
	GoVersion  string         `json:"go_version"`
	NumCPU     int            `json:"num_cpu"`
	GOMAXPROCS int            `json:"gomaxprocs"`
	Gateway    string         `json:"gateway"`
	Suites     []string       `json:"suites"`
	Scenario   Scenario       `json:"scenario"` // of the mdr suite
	Targets    Targets        `json:"targets"`
	Results    []*Measurement `json:"results"` // of the mdr suite
	Pairs      []Pair         `json:"pairs"`
	Bearer     *BearerReport  `json:"bearer,omitempty"`
	Token      *TokenReport   `json:"token,omitempty"`
	Broker     *BrokerReport  `json:"broker,omitempty"`
	Upload     *UploadReport  `json:"upload,omitempty"`
	Guess      *GuessReport   `json:"guess,omitempty"`
	Attack     *AttackReport  `json:"attack,omitempty"`
	Streams    *StreamsReport `json:"streams,omitempty"`
	Hydra      *HydraReport   `json:"hydra,omitempty"`
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cfg, err := parseFlags(args, stderr)
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(stderr, "fris-bench:", err)
		}
		return 2
	}
	cpu, err := parseWatch(cfg.watch)
	if err != nil {
		fmt.Fprintln(stderr, "fris-bench:", err)
		return 2
	}

	sc := ClosedLoop(cfg.connections, cfg.warmup, cfg.duration)
	rep := &Report{
		Started: time.Now().UTC(), GoVersion: runtime.Version(), NumCPU: runtime.NumCPU(), GOMAXPROCS: runtime.GOMAXPROCS(0),
		Gateway: cfg.gateway, Suites: cfg.suites, Scenario: sc,
		Targets: Targets{MinRatio: cfg.minRatio, MaxP99Ms: ms(cfg.maxP99)},
	}
	failed := false
	// errored reports a run with error responses.
	errored := func(what string, m *Measurement) {
		if m.Errors > 0 || m.WarmupErrors > 0 || m.Requests == 0 {
			failed = true
			fmt.Fprintf(stderr, "fris-bench: %s: %d errors (+%d in warm-up) of %d requests: %s\n",
				what, m.Errors, m.WarmupErrors, m.Requests, strings.Join(m.ErrorSamples, "; "))
		}
	}
	for _, suite := range cfg.suites {
		var err error
		switch suite {
		case suiteMDR:
			err = runMDR(ctx, cfg, sc, cpu, rep, stderr, errored)
		case suiteBearer:
			rep.Bearer, err = runBearer(ctx, cfg, cpu, stderr)
			if rep.Bearer != nil {
				for _, m := range rep.Bearer.Results {
					errored(fmt.Sprintf("bearer %s round %d", m.Target, m.Round), m)
				}
			}
		case suiteBroker:
			rep.Broker, err = runBroker(ctx, cfg, cpu, stderr)
			if rep.Broker != nil {
				errored("broker polls", rep.Broker.Result)
			}
		case suiteUpload:
			rep.Upload, err = runUpload(ctx, cfg, cpu, stderr)
			if rep.Upload != nil {
				errored("upload", rep.Upload.Result)
			}
		case suiteGuess:
			rep.Guess, err = runGuess(ctx, cfg, stderr)
		case suiteAttack:
			rep.Attack, err = runAttack(ctx, cfg, stderr)
		case suiteStreams:
			rep.Streams, err = runStreams(ctx, cfg, cpu, stderr)
		case suiteHydra:
			rep.Hydra, err = runHydra(ctx, cfg, cpu, stderr)
			if rep.Hydra != nil {
				for _, m := range rep.Hydra.Results {
					errored(fmt.Sprintf("hydra %s round %d", m.Target, m.Round), m)
				}
			}
		case suiteAuth:
			rep.Token, err = runTokens(ctx, cfg, cpu, stderr)
			if rep.Token != nil {
				for _, f := range rep.Token.Flows {
					errored("auth "+f.Name+" flow", f.M)
				}
			}
		}
		if ctx.Err() != nil {
			fmt.Fprintln(stderr, "fris-bench: interrupted")
			return 1
		}
		if err != nil {
			// What was measured so far is still printed.
			fmt.Fprintln(stderr, "fris-bench:", err)
			failed = true
			break
		}
	}

	writeMarkdown(stdout, rep, cpu)
	if cfg.jsonPath != "" {
		b, err := json.MarshalIndent(rep, "", "  ")
		if err == nil {
			err = os.WriteFile(cfg.jsonPath, append(b, '\n'), 0o644)
		}
		if err != nil {
			fmt.Fprintln(stderr, "fris-bench: -json:", err)
			return 1
		}
	}
	if failed {
		fmt.Fprintln(stderr, "fris-bench: some responses were errors")
		return 1
	}
	return 0
}
