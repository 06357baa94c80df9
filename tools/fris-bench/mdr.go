package main

// The mdr suite: registry reads through the gateway, each path judged
// against a plain net/http baseline of the same bytes.

import (
	"context"
	"fmt"
	"io"
	"net/http"
)

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

// runMDR is the mdr suite: each path's baseline, then the gateway.
func runMDR(ctx context.Context, cfg config, sc Scenario, cpu *cpuWatch, rep *Report, stderr io.Writer, errored func(string, *Measurement)) error {
	// Capture each path's answer once; the baseline serves exactly that.
	pages := make([]page, 0, len(cfg.paths))
	for _, p := range cfg.paths {
		pg, err := capture(ctx, cfg.gateway+p, nil)
		if err != nil {
			return err
		}
		pg.path = p
		pages = append(pages, pg)
	}
	base, err := startBaseline(pages)
	if err != nil {
		return fmt.Errorf("baseline: %w", err)
	}
	defer base.Close()

	for _, pg := range pages {
		want := Expect{Status: http.StatusOK, Body: pg.body}
		var pair [2]*Measurement
		for i, t := range []struct{ name, base string }{{"baseline", base.URL}, {"gateway", cfg.gateway}} {
			fmt.Fprintf(stderr, "fris-bench: %s %s %s: %s warm-up + %s at %d connections\n",
				sc.Name, t.name, pg.path, cfg.warmup, cfg.duration, cfg.connections)
			m := sc.RunStatic(ctx, t.base+pg.path, nil, want, cpu)
			m.Path, m.Target = pg.path, t.name
			rep.Results = append(rep.Results, m)
			pair[i] = m
			errored(t.name+" "+pg.path, m)
			if ctx.Err() != nil {
				return ctx.Err()
			}
		}
		rep.Pairs = append(rep.Pairs, judge(pg.path, pair[0], pair[1], cfg))
	}
	return nil
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
