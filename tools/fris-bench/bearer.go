package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
)

// BearerReport is the bearer suite: one registry read with and without a
// valid access token, in alternating rounds.
type BearerReport struct {
	Path        string   `json:"path"`
	Connections int      `json:"connections"`
	Rounds      int      `json:"rounds"`
	Scenario    Scenario `json:"scenario"`
	// AnonymousCached is set when the gateway answered a repeated anonymous
	// read from its response cache (X-Cache: hit): token holders bypass
	// that cache, so the comparison is then not like for like.
	AnonymousCached bool           `json:"anonymous_cached"`
	Results         []*Measurement `json:"results"`
	// Without and With are good responses per second over all rounds.
	Without     float64 `json:"without_req_per_sec"`
	With        float64 `json:"with_req_per_sec"`
	Slowdown    float64 `json:"slowdown"` // 1 - With/Without
	MaxSlowdown float64 `json:"max_slowdown"`
	Met         bool    `json:"met"`
}

// Variants of the bearer suite (Measurement.Target).
const (
	noToken   = "no token"
	withToken = "bearer token"
)

func runBearer(ctx context.Context, cfg config, cpu *cpuWatch, stderr io.Writer) (*BearerReport, error) {
	rep := &BearerReport{Path: cfg.bearerPath, Connections: cfg.connections, Rounds: cfg.bearerRounds, MaxSlowdown: cfg.maxBearerSlowdown}
	ac := newAuthClient(cfg.gateway)
	defer ac.close()
	fmt.Fprintf(stderr, "fris-bench: bearer: signing in %s for an access token\n", cfg.creds.email)
	ts, err := ac.signIn(ctx, cfg.creds)
	if err != nil {
		return nil, fmt.Errorf("bearer set-up: %w", err)
	}
	if err := ac.checkBearer(ctx, ts.Access); err != nil {
		return nil, fmt.Errorf("bearer set-up: %w", err)
	}
	u := cfg.gateway + cfg.bearerPath
	auth := http.Header{"Authorization": {"Bearer " + ts.Access}}
	anon, err := capture(ctx, u, nil)
	if err != nil {
		return nil, err
	}
	again, err := capture(ctx, u, nil)
	if err != nil {
		return nil, err
	}
	rep.AnonymousCached = again.cacheHit
	signed, err := capture(ctx, u, auth)
	if err != nil {
		return nil, err
	}

	sc := ClosedLoop(cfg.connections, cfg.warmup, cfg.duration)
	rep.Scenario = sc
	var secs [2]float64
	var good [2]float64
	for round := 1; round <= cfg.bearerRounds; round++ {
		for i, v := range []struct {
			name   string
			header http.Header
			want   []byte
		}{{noToken, nil, anon.body}, {withToken, auth, signed.body}} {
			fmt.Fprintf(stderr, "fris-bench: bearer %s, round %d: %s warm-up + %s at %d connections\n",
				v.name, round, cfg.warmup, cfg.duration, cfg.connections)
			m := sc.RunStatic(ctx, u, v.header, Expect{Status: http.StatusOK, Body: v.want}, cpu)
			m.Path, m.Target, m.Round = cfg.bearerPath, v.name, round
			rep.Results = append(rep.Results, m)
			secs[i] += m.Seconds
			good[i] += m.ReqPerSec * m.Seconds
			if ctx.Err() != nil {
				return rep, ctx.Err()
			}
		}
	}
	if secs[0] > 0 && secs[1] > 0 {
		rep.Without, rep.With = good[0]/secs[0], good[1]/secs[1]
	}
	if rep.Without > 0 {
		rep.Slowdown = 1 - rep.With/rep.Without
	}
	rep.Met = rep.With > 0 && rep.Slowdown <= rep.MaxSlowdown
	return rep, nil
}
