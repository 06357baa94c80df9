// Command fris-bench loads the gateway with vegeta and puts each result next
// to a baseline: a plain net/http server, started in this process, that
// answers the same path with the same bytes and Content-Type, i.e. the cost
// of HTTP alone. For every path it runs the baseline, then the gateway, with
// the same scenario, and prints a Markdown table with req/s, latency
// percentiles, errors and the gateway/baseline throughput ratio.
//
//	fris-bench -gateway http://127.0.0.1:8080 -connections 64 -duration 10s \
//	    /v3/api/mdr/namespaces/mdr16/members
//
// It exits 1 when any response is an error (not 200, or a body other than
// the one first captured) and 2 on bad usage; a missed target is reported,
// not an exit status.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"syscall"
	"time"
)

func main() {
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
}

func parseFlags(args []string, stderr io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("fris-bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: fris-bench [flags] PATH...")
		fs.PrintDefaults()
	}
	fs.StringVar(&c.gateway, "gateway", "http://127.0.0.1:8080", "base URL of the running gateway")
	fs.IntVar(&c.connections, "connections", 64, "connections (= workers) of the closed loop")
	fs.DurationVar(&c.duration, "duration", 10*time.Second, "measured time per path and target")
	fs.DurationVar(&c.warmup, "warmup", 2*time.Second, "time per path and target run first and discarded")
	fs.StringVar(&c.jsonPath, "json", "", "also write the raw numbers to this file")
	fs.Float64Var(&c.minRatio, "min-ratio", 0.5, "target: gateway req/s at least this share of the baseline's")
	fs.DurationVar(&c.maxP99, "max-p99", 10*time.Millisecond, "target: gateway p99 latency below this")
	fs.StringVar(&c.watch, "watch", "", "name=pid,... of local processes whose CPU time per request to report (Linux)")
	fs.BoolVar(&c.allowRemote, "allow-remote", false, "allow a gateway that is not on a loopback address")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	c.paths = fs.Args()
	switch {
	case len(c.paths) == 0:
		return c, errors.New("name at least one PATH")
	case c.connections <= 0:
		return c, errors.New("-connections must be positive")
	case c.duration <= 0 || c.warmup < 0:
		return c, errors.New("-duration must be positive and -warmup not negative")
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
	Scenario   Scenario       `json:"scenario"`
	Targets    Targets        `json:"targets"`
	Results    []*Measurement `json:"results"`
	Pairs      []Pair         `json:"pairs"`
}

// Targets are the goals a gateway run is judged by.
type Targets struct {
	MinRatio float64 `json:"min_ratio"`
	MaxP99Ms float64 `json:"max_p99_ms"`
}

// Pair is one path's gateway run judged against its baseline run.
type Pair struct {
	Path     string  `json:"path"`
	Ratio    float64 `json:"ratio"` // gateway req/s / baseline req/s
	RatioMet bool    `json:"ratio_met"`
	P99Met   bool    `json:"p99_met"`
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

	// Capture each path's answer once; the baseline serves exactly that.
	pages := make([]page, 0, len(cfg.paths))
	for _, p := range cfg.paths {
		pg, err := capture(ctx, cfg.gateway+p)
		if err != nil {
			fmt.Fprintln(stderr, "fris-bench:", err)
			return 1
		}
		pg.path = p
		pages = append(pages, pg)
	}
	base, err := startBaseline(pages)
	if err != nil {
		fmt.Fprintln(stderr, "fris-bench: baseline:", err)
		return 1
	}
	defer base.Close()

	sc := ClosedLoop(cfg.connections, cfg.warmup, cfg.duration)
	rep := &Report{
		Started: time.Now().UTC(), GoVersion: runtime.Version(), NumCPU: runtime.NumCPU(), GOMAXPROCS: runtime.GOMAXPROCS(0),
		Gateway: cfg.gateway, Scenario: sc,
		Targets: Targets{MinRatio: cfg.minRatio, MaxP99Ms: ms(cfg.maxP99)},
	}
	failed := false
	for _, pg := range pages {
		want := Expect{Status: http.StatusOK, Body: pg.body}
		var pair [2]*Measurement
		for i, t := range []struct{ name, base string }{{"baseline", base.URL}, {"gateway", cfg.gateway}} {
			fmt.Fprintf(stderr, "fris-bench: %s %s %s: %s warm-up + %s at %d connections\n",
				sc.Name, t.name, pg.path, cfg.warmup, cfg.duration, cfg.connections)
			m := sc.Run(ctx, t.base+pg.path, want, cpu)
			m.Path, m.Target = pg.path, t.name
			rep.Results = append(rep.Results, m)
			pair[i] = m
			if m.Errors > 0 || m.WarmupErrors > 0 || m.Requests == 0 {
				failed = true
				fmt.Fprintf(stderr, "fris-bench: %s %s: %d errors (+%d in warm-up) of %d requests: %s\n",
					t.name, pg.path, m.Errors, m.WarmupErrors, m.Requests, strings.Join(m.ErrorSamples, "; "))
			}
			if ctx.Err() != nil {
				fmt.Fprintln(stderr, "fris-bench: interrupted")
				return 1
			}
		}
		rep.Pairs = append(rep.Pairs, judge(pg.path, pair[0], pair[1], cfg))
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

func judge(path string, base, gw *Measurement, cfg config) Pair {
	p := Pair{Path: path}
	if base.ReqPerSec > 0 {
		p.Ratio = gw.ReqPerSec / base.ReqPerSec
	}
	p.RatioMet = p.Ratio >= cfg.minRatio
	p.P99Met = gw.Requests > 0 && gw.P99Ms < ms(cfg.maxP99)
	return p
}
