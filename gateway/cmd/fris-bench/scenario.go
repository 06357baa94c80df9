package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// A Scenario is one way of loading a target: how many connections, how fast,
// for how long. Only the closed loop exists so far (a fixed number of
// workers, each sending its next request as soon as the previous one is
// answered); later scenarios (N clients at a fixed rate, POST bodies) add
// fields here and their own attacker/pacer.
type Scenario struct {
	Name        string
	Method      string
	Connections int
	// Rate is the request rate; the zero Rate means as fast as the
	// connections go (closed loop).
	Rate     vegeta.Rate
	Warmup   time.Duration // run first, results discarded
	Duration time.Duration // measured
	Timeout  time.Duration // of one request
}

// ClosedLoop is the scenario of the first bench: n connections at max effort.
func ClosedLoop(n int, warmup, duration time.Duration) Scenario {
	return Scenario{
		Name:        fmt.Sprintf("closed-%d", n),
		Method:      http.MethodGet,
		Connections: n,
		Rate:        vegeta.Rate{Freq: 0},
		Warmup:      warmup,
		Duration:    duration,
		Timeout:     10 * time.Second,
	}
}

func (s Scenario) attacker() *vegeta.Attacker {
	n := uint64(s.Connections)
	return vegeta.NewAttacker(
		vegeta.Workers(n),
		vegeta.MaxWorkers(n),
		vegeta.Connections(s.Connections),
		vegeta.MaxConnections(s.Connections),
		vegeta.KeepAlive(true),
		vegeta.Timeout(s.Timeout),
		vegeta.Redirects(vegeta.NoFollow),
		// Loopback only: never let an environment proxy see this traffic.
		vegeta.Proxy(func(*http.Request) (*url.URL, error) { return nil, nil }),
	)
}

// Expect is what every response of a run must be; anything else is an error.
type Expect struct {
	Status int
	Body   []byte
}

// Measurement is one run of a scenario against one target.
type Measurement struct {
	Path        string  `json:"path"`
	Target      string  `json:"target"` // baseline or gateway
	URL         string  `json:"url"`
	Scenario    string  `json:"scenario"`
	Connections int     `json:"connections"`
	Seconds     float64 `json:"seconds"` // measured window (vegeta duration + wait)
	Requests    uint64  `json:"requests"`
	// ReqPerSec counts successful responses per second of the window.
	ReqPerSec float64 `json:"req_per_sec"`
	// SentPerSec is vegeta's rate: requests sent per second.
	SentPerSec      float64            `json:"sent_per_sec"`
	MeanMs          float64            `json:"mean_ms"`
	P50Ms           float64            `json:"p50_ms"`
	P90Ms           float64            `json:"p90_ms"`
	P99Ms           float64            `json:"p99_ms"`
	MaxMs           float64            `json:"max_ms"`
	Errors          uint64             `json:"errors"`
	WarmupErrors    uint64             `json:"warmup_errors"`
	ErrorSamples    []string           `json:"error_samples,omitempty"`
	StatusCodes     map[string]int     `json:"status_codes"`
	BytesInMean     float64            `json:"bytes_in_mean"`
	CPUMicrosPerReq map[string]float64 `json:"cpu_us_per_req,omitempty"`
	// Metrics is vegeta's own summary of the measured window.
	Metrics *vegeta.Metrics `json:"vegeta"`
}

const maxErrorSamples = 5

// Run attacks target (a full URL) with the scenario: one vegeta attack of
// Warmup+Duration whose first Warmup of results is discarded, so the measured
// window starts on warm connections. cpu, when set, is sampled when the
// measured window starts and when the attack ends.
func (s Scenario) Run(ctx context.Context, target string, want Expect, cpu *cpuWatch) *Measurement {
	atk := s.attacker()
	tr := vegeta.NewStaticTargeter(vegeta.Target{Method: s.Method, URL: target})
	stop := context.AfterFunc(ctx, func() { atk.Stop() })
	defer stop()

	began := time.Now()
	measureFrom := began.Add(s.Warmup)
	var (
		m       vegeta.Metrics
		out     = &Measurement{URL: target, Scenario: s.Name, Connections: s.Connections}
		seen    = map[string]bool{}
		started bool
		cpu0    cpuSample
	)
	for r := range atk.Attack(tr, s.Rate, s.Warmup+s.Duration, s.Name) {
		bad := check(r, want)
		if r.Timestamp.Before(measureFrom) {
			if bad != "" {
				out.WarmupErrors++
			}
			continue
		}
		if !started {
			started = true
			cpu0 = cpu.sample()
		}
		m.Add(r)
		if bad != "" {
			out.Errors++
			if !seen[bad] && len(out.ErrorSamples) < maxErrorSamples {
				seen[bad] = true
				out.ErrorSamples = append(out.ErrorSamples, bad)
			}
		}
	}
	cpu1 := cpu.sample()
	m.Close()

	window := m.Duration + m.Wait
	out.Metrics = &m
	out.Seconds = window.Seconds()
	out.Requests = m.Requests
	if out.Seconds > 0 {
		out.ReqPerSec = float64(m.Requests-out.Errors) / out.Seconds
	}
	out.SentPerSec = m.Rate
	out.MeanMs = ms(m.Latencies.Mean)
	out.P50Ms = ms(m.Latencies.P50)
	out.P90Ms = ms(m.Latencies.P90)
	out.P99Ms = ms(m.Latencies.P99)
	out.MaxMs = ms(m.Latencies.Max)
	out.StatusCodes = m.StatusCodes
	out.BytesInMean = m.BytesIn.Mean
	if started && m.Requests > 0 {
		out.CPUMicrosPerReq = cpu1.perRequest(cpu0, m.Requests)
	}
	return out
}

// check returns why r is an error, or "".
func check(r *vegeta.Result, want Expect) string {
	switch {
	case r.Error != "" && r.Code == 0:
		return r.Error
	case int(r.Code) != want.Status:
		return fmt.Sprintf("status %d", r.Code)
	case want.Body != nil && !bytes.Equal(r.Body, want.Body):
		return fmt.Sprintf("body differs (%d bytes, want %d)", len(r.Body), len(want.Body))
	}
	return ""
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
