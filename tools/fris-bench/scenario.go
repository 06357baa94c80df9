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
	Target      string  `json:"target"` // baseline or gateway; or the variant of a suite
	Round       int     `json:"round,omitempty"`
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

	// Units are what a flow produces (token responses), counted when they
	// complete in the measured window; for one-request scenarios a unit is
	// a good response.
	Unit             string             `json:"unit,omitempty"`
	Units            uint64             `json:"units"`
	UnitsPerSec      float64            `json:"units_per_sec"`
	UnitP50Ms        float64            `json:"unit_p50_ms"`
	UnitP99Ms        float64            `json:"unit_p99_ms"`
	UnitMaxMs        float64            `json:"unit_max_ms"`
	CPUMicrosPerUnit map[string]float64 `json:"cpu_us_per_unit,omitempty"`
	// Steps are the flow's requests by kind (measured window).
	Steps []*Step `json:"steps,omitempty"`

	// Metrics is vegeta's own summary of the measured window.
	Metrics *vegeta.Metrics `json:"vegeta"`
}

// Step is one kind of request of a flow.
type Step struct {
	Name      string  `json:"name"`
	Requests  uint64  `json:"requests"`
	Errors    uint64  `json:"errors"`
	ReqPerSec float64 `json:"req_per_sec"` // good responses
	P50Ms     float64 `json:"p50_ms"`
	P99Ms     float64 `json:"p99_ms"`
	MaxMs     float64 `json:"max_ms"`
}

const maxErrorSamples = 5

// RunStatic attacks one URL with the same request every time; every
// response must be want.
func (s Scenario) RunStatic(ctx context.Context, target string, header http.Header, want Expect, cpu *cpuWatch) *Measurement {
	tr := vegeta.NewStaticTargeter(vegeta.Target{Method: s.Method, URL: target, Header: header})
	m := s.Run(ctx, tr, staticOutcome(want), cpu)
	m.URL = target
	return m
}

// Run attacks with tr: one vegeta attack of Warmup+Duration whose first
// Warmup of results is discarded, so the measured window starts on warm
// connections. Every result, warm-up ones included, goes through handle
// first (a flow's sessions need every answer; handle may also move a
// result's timestamp past client-side preparation). cpu, when set, is
// sampled when the measured window starts and when the attack ends.
func (s Scenario) Run(ctx context.Context, tr vegeta.Targeter, handle func(*vegeta.Result) outcome, cpu *cpuWatch) *Measurement {
	atk := s.attacker()
	stop := context.AfterFunc(ctx, func() { atk.Stop() })
	defer stop()

	began := time.Now()
	measureFrom := began.Add(s.Warmup)
	var (
		m       vegeta.Metrics
		unitLat vegeta.LatencyMetrics
		out     = &Measurement{Scenario: s.Name, Connections: s.Connections}
		seen    = map[string]bool{}
		started bool
		cpu0    cpuSample
		steps   = map[string]*stepAcc{}
		order   []string
	)
	for r := range atk.Attack(tr, s.Rate, s.Warmup+s.Duration, s.Name) {
		o := handle(r)
		if o.bad != "" && !seen[o.bad] && len(out.ErrorSamples) < maxErrorSamples {
			seen[o.bad] = true
			out.ErrorSamples = append(out.ErrorSamples, o.bad)
		}
		// Steps in the order the flow first makes them.
		st, ok := steps[o.kind]
		if !ok && o.kind != "" {
			st = &stepAcc{}
			steps[o.kind] = st
			order = append(order, o.kind)
		}
		if r.Timestamp.Before(measureFrom) {
			if o.bad != "" {
				out.WarmupErrors++
			}
			continue
		}
		if !started {
			started = true
			cpu0 = cpu.sample()
		}
		m.Add(r)
		if st != nil {
			st.m.Add(r)
			if o.bad != "" {
				st.errors++
			}
		}
		if o.bad != "" {
			out.Errors++
		} else if o.unit {
			out.Units++
			unitLat.Add(o.unitLatency)
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
		out.UnitsPerSec = float64(out.Units) / out.Seconds
	}
	out.SentPerSec = m.Rate
	out.MeanMs = ms(m.Latencies.Mean)
	out.P50Ms = ms(m.Latencies.P50)
	out.P90Ms = ms(m.Latencies.P90)
	out.P99Ms = ms(m.Latencies.P99)
	out.MaxMs = ms(m.Latencies.Max)
	out.StatusCodes = m.StatusCodes
	out.BytesInMean = m.BytesIn.Mean
	if out.Units > 0 {
		out.UnitP50Ms = ms(unitLat.Quantile(0.50))
		out.UnitP99Ms = ms(unitLat.Quantile(0.99))
		out.UnitMaxMs = ms(unitLat.Max)
	}
	for _, name := range order {
		st := steps[name]
		st.m.Close()
		step := &Step{Name: name, Requests: st.m.Requests, Errors: st.errors,
			P50Ms: ms(st.m.Latencies.P50), P99Ms: ms(st.m.Latencies.P99), MaxMs: ms(st.m.Latencies.Max)}
		if out.Seconds > 0 {
			step.ReqPerSec = float64(st.m.Requests-st.errors) / out.Seconds
		}
		out.Steps = append(out.Steps, step)
	}
	if started && m.Requests > 0 {
		out.CPUMicrosPerReq = cpu1.perRequest(cpu0, m.Requests)
		out.CPUMicrosPerUnit = cpu1.perRequest(cpu0, out.Units)
	}
	return out
}

type stepAcc struct {
	m      vegeta.Metrics
	errors uint64
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
