package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"runtime"
	"strings"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// The hydra suite puts FRIS next to an OAuth 2.0 server of another make
// (Ory Hydra, tools/hydra-compare) running on the same cores, in
// interleaved rounds: the refresh grant of each (server CPU per token
// response), then the check of an access token (Hydra's introspection, FRIS's
// introspection and the gateway's own verification of a bearer). The other
// server is driven through its public and admin APIs only; its CPU comes
// from -watch (hydra=PID), FRIS's from gateway=PID and auth=PID.

// Variants of the hydra suite (Measurement.Target).
const (
	peerFRISRefresh      = "FRIS refresh (spec shape)"
	peerFRISRefreshOAuth = "FRIS refresh (OAuth 2.0)"
	peerFRISRefreshES256 = "FRIS refresh (OAuth 2.0, ES256 client)"
	peerHydraRefresh     = "Hydra refresh"
	peerHydraIntrospect  = "Hydra introspection"
	peerFRISIntrospect   = "FRIS introspection"
	peerFRISAnonymous    = "FRIS gateway, no token"
	peerFRISBearer       = "FRIS gateway, bearer verified"
)

// peerRedirect is the redirect URI of the Hydra client; nothing listens
// there, the code is read from the redirect.
const peerRedirect = "http://127.0.0.1:9/callback"

// HydraReport is the hydra suite.
type HydraReport struct {
	Public, Admin string
	ClientID      string `json:"client_id"`
	// HydraKeys are the key ids in the headers of Hydra's access and id
	// tokens: the imported key's, when the import took.
	HydraKeys   string `json:"hydra_keys"`
	Connections int    `json:"connections"`
	Rounds      int    `json:"rounds"`
	// Carried is what a response of each refresh variant carried.
	Carried map[string]string `json:"carried"`
	Results []*Measurement    `json:"results"`
	// Summary: per variant, the mean over rounds of the server's CPU per
	// unit (Hydra: hydra; FRIS: gateway+auth) and of units/s.
	Summary []*PeerSummary `json:"summary"`
}

// PeerSummary is one variant over all rounds.
type PeerSummary struct {
	Name        string    `json:"name"`
	Servers     []string  `json:"servers"`
	UnitsPerSec float64   `json:"units_per_sec"`
	CPUMicros   float64   `json:"cpu_us"`
	RoundCPU    []float64 `json:"round_cpu_us"`
	// StoreCPU is the database server's CPU per unit (postgres=+PID in
	// -watch), for Hydra's variants; 0 when not watched.
	StoreCPU float64 `json:"store_cpu_us"`
}

// hydraChain is one refresh chain at Hydra: an OAuth 2.0 library's
// refresh (form body, the public client's id).
type hydraChain struct {
	clientID string
	token    string
	last     tokenSet
}

func (c *hydraChain) next() (vegeta.Target, error) {
	form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {c.token}, "client_id": {c.clientID}}
	return vegeta.Target{Method: http.MethodPost, URL: "/oauth2/token", Body: []byte(form.Encode()), Header: formHeader}, nil
}

func (c *hydraChain) done(r *vegeta.Result) (outcome, bool) {
	const kind = "hydra token (refresh_token)"
	if bad := check(r, Expect{Status: http.StatusOK}); bad != "" {
		return outcome{bad: bad, kind: kind}, false
	}
	ts, err := parseTokens(r.Body, true)
	if err != nil {
		return outcome{bad: err.Error(), kind: kind}, false
	}
	c.token, c.last = ts.Refresh, ts
	return outcome{kind: kind, unit: true, unitLatency: r.Latency}, true
}

// carried says what a token response carried: each token's alg, or
// "opaque" for a token that is no JWS.
func carried(ts tokenSet) string {
	var out []string
	for _, t := range []struct{ name, tok string }{{"access", ts.Access}, {"id", ts.ID}, {"refresh", ts.Refresh}} {
		switch alg, ok := jwsAlg(t.tok); {
		case t.tok == "":
			out = append(out, "no "+t.name)
		case !ok:
			out = append(out, t.name+" opaque")
		default:
			out = append(out, t.name+" "+alg)
		}
	}
	return strings.Join(out, ", ")
}

// runHydra is the hydra suite.
func runHydra(ctx context.Context, cfg config, cpu *cpuWatch, stderr io.Writer) (*HydraReport, error) {
	names := map[string]bool{}
	for _, n := range cpu.names() {
		names[n] = true
	}
	if !names["hydra"] || !names["gateway"] || !names["auth"] {
		return nil, errors.New("the hydra suite needs -watch with hydra=PID, gateway=PID and auth=PID")
	}
	n := cfg.tokenConnections
	rep := &HydraReport{Public: cfg.hydraPublic, Admin: cfg.hydraAdmin, Connections: n, Rounds: cfg.tokenRounds, Carried: map[string]string{}}
	h := &hydraClient{public: cfg.hydraPublic, admin: cfg.hydraAdmin, hc: newAuthClient(cfg.gateway).hc}
	defer h.hc.CloseIdleConnections()
	ac := newAuthClient(cfg.gateway)
	defer ac.close()

	var err error
	if rep.ClientID, err = h.createClient(ctx); err != nil {
		return nil, fmt.Errorf("hydra set-up: %w", err)
	}
	sessions := 2 * n
	fmt.Fprintf(stderr, "fris-bench: hydra: %d sign-ins at Hydra (client %s) and 2×%d at FRIS\n", sessions, rep.ClientID, sessions)
	var hydra, fris, frisOAuth, frisES []session
	for i := range sessions {
		ts, err := h.signIn(ctx, rep.ClientID, fmt.Sprintf("bench-%d", i))
		if err != nil {
			return nil, fmt.Errorf("hydra set-up: %w", err)
		}
		hydra = append(hydra, &hydraChain{clientID: rep.ClientID, token: ts.Refresh})
		for _, oauth := range []bool{false, true} {
			ts, err := ac.signIn(ctx, cfg.creds)
			if err != nil {
				return nil, fmt.Errorf("hydra suite, FRIS set-up: %w", err)
			}
			c := &refreshChain{token: ts.Refresh, oauth: oauth}
			if oauth {
				frisOAuth = append(frisOAuth, c)
			} else {
				fris = append(fris, c)
			}
		}
	}
	// A client an operator set to ES256 (-es256-client-id), when named.
	if cfg.es256Client != "" {
		for range sessions {
			ts, err := ac.signIn(ctx, cfg.flowClient(flowRefreshES256))
			if err != nil {
				return nil, fmt.Errorf("hydra suite, FRIS set-up (ES256 client): %w", err)
			}
			frisES = append(frisES, &refreshChain{token: ts.Refresh, oauth: true})
		}
	}
	// The checked tokens come from sign-ins of their own: a refresh makes
	// Hydra's previous access token inactive.
	hts, err := h.signIn(ctx, rep.ClientID, "bench-checked")
	if err != nil {
		return nil, fmt.Errorf("hydra set-up: %w", err)
	}
	hydraAccess := hts.Access
	rep.HydraKeys = "access " + jwsKid(hts.Access) + ", id " + jwsKid(hts.ID)
	fts, err := ac.signIn(ctx, cfg.creds)
	if err != nil {
		return nil, fmt.Errorf("hydra suite, FRIS set-up: %w", err)
	}
	frisAccess := fts.Access

	// The token checks: static requests whose answers are captured once
	// and must come back the same every time.
	type probe struct {
		name   string
		method string
		url    string
		body   []byte
		header http.Header
		status int
	}
	hydraIntro := url.Values{"token": {hydraAccess}}.Encode()
	frisIntro := url.Values{"token": {frisAccess}, "client_id": {cfg.creds.clientID}, "client_secret": {cfg.creds.clientSecret}}.Encode()
	bearer := http.Header{"Authorization": {"Bearer " + frisAccess}}
	// The gateway's own check: a route that needs a bearer token with a
	// scope the user lacks (users:search) is answered by the gateway alone,
	// 403 once the token is verified (revocation list included), and 403
	// at once without a token: the whole request's CPU bounds the
	// verification's, the difference estimates it.
	search := cfg.gateway + authPrefix + "/users/search"
	checks := []probe{
		{peerHydraIntrospect, http.MethodPost, cfg.hydraAdmin + "/admin/oauth2/introspect", []byte(hydraIntro), formHeader, http.StatusOK},
		{peerFRISIntrospect, http.MethodPost, cfg.gateway + authPrefix + "/introspect", []byte(frisIntro), formHeader, http.StatusOK},
		{peerFRISAnonymous, http.MethodGet, search, nil, nil, http.StatusForbidden},
		{peerFRISBearer, http.MethodGet, search, nil, bearer, http.StatusForbidden},
	}
	wants := make([][]byte, len(checks))
	for i, c := range checks {
		req, err := http.NewRequestWithContext(ctx, c.method, c.url, bytes.NewReader(c.body))
		if err != nil {
			return nil, err
		}
		for k, v := range c.header {
			req.Header[k] = v
		}
		b, res, err := do(h.hc, req)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.name, err)
		}
		bad := res.StatusCode != c.status
		switch c.name {
		case peerHydraIntrospect, peerFRISIntrospect:
			bad = bad || !bytes.Contains(b, []byte(`"active":true`))
		case peerFRISBearer:
			bad = bad || !strings.Contains(res.Header.Get("WWW-Authenticate"), "insufficient_scope")
		}
		if bad {
			return nil, fmt.Errorf("%s: %s: %.200s", c.name, res.Status, b)
		}
		wants[i] = b
	}

	flowSc := ClosedLoop(n, cfg.warmup, cfg.tokenDuration)
	flowSc.Method = http.MethodPost
	type refreshRun struct {
		name     string
		base     string
		sessions []session
	}
	runs := []refreshRun{{peerFRISRefresh, cfg.gateway, fris}, {peerFRISRefreshOAuth, cfg.gateway, frisOAuth}}
	if len(frisES) > 0 {
		runs = append(runs, refreshRun{peerFRISRefreshES256, cfg.gateway, frisES})
	}
	runs = append(runs, refreshRun{peerHydraRefresh, cfg.hydraPublic, hydra})
	for round := 1; round <= cfg.tokenRounds; round++ {
		for _, f := range runs {
			fmt.Fprintf(stderr, "fris-bench: hydra: round %d of %d, %s: %s warm-up + %s at %d connections\n",
				round, cfg.tokenRounds, f.name, cfg.warmup, cfg.tokenDuration, n)
			pool := newSessionPool(f.base, f.sessions, flowSc.Timeout)
			m, err := runFlow(ctx, cfg, flowSc, pool, cpu)
			if err != nil {
				return rep, err
			}
			m.Target, m.Round, m.Unit = f.name, round, "token response"
			rep.Results = append(rep.Results, m)
			for _, s := range f.sessions {
				switch c := s.(type) {
				case *refreshChain:
					rep.Carried[f.name] = carried(c.last)
				case *hydraChain:
					rep.Carried[f.name] = carried(c.last)
				}
			}
		}
		for i, c := range checks {
			sc := ClosedLoop(cfg.connections, cfg.warmup, cfg.duration)
			sc.Method = c.method
			fmt.Fprintf(stderr, "fris-bench: hydra: round %d of %d, %s: %s warm-up + %s at %d connections\n",
				round, cfg.tokenRounds, c.name, cfg.warmup, cfg.duration, cfg.connections)
			tr := vegeta.NewStaticTargeter(vegeta.Target{Method: c.method, URL: c.url, Body: c.body, Header: c.header})
			m := sc.Run(ctx, tr, staticOutcome(Expect{Status: c.status, Body: wants[i]}), cpu)
			m.URL, m.Target, m.Round = c.url, c.name, round
			rep.Results = append(rep.Results, m)
		}
		if ctx.Err() != nil {
			return rep, ctx.Err()
		}
	}
	rep.Summary = summarizePeer(rep.Results)
	return rep, nil
}

// runFlow runs one stateful flow as the auth suite does: the load
// generator on -flow-procs Ps under SCHED_BATCH, so it takes little from
// the servers it measures.
func runFlow(ctx context.Context, cfg config, sc Scenario, pool *sessionPool, cpu *cpuWatch) (*Measurement, error) {
	procs := runtime.GOMAXPROCS(0)
	if cfg.flowProcs > 0 {
		runtime.GOMAXPROCS(cfg.flowProcs)
	}
	defer runtime.GOMAXPROCS(procs)
	if cfg.flowBatch {
		if err := setBatchScheduling(true); err != nil {
			return nil, fmt.Errorf("SCHED_BATCH for the flows (-flow-batch=false to go without): %w", err)
		}
		defer func() { _ = setBatchScheduling(false) }()
	}
	m := sc.Run(ctx, pool.targeter(), pool.handle, cpu)
	return m, ctx.Err()
}

// peerServers are the processes whose CPU is a variant's server CPU.
func peerServers(variant string) []string {
	if strings.HasPrefix(variant, "Hydra") {
		// Hydra's store is another process (Postgres); its CPU is shown
		// beside, not counted here: FRIS's store is inside auth.
		return []string{"hydra"}
	}
	if variant == peerFRISAnonymous || variant == peerFRISBearer {
		return []string{"gateway"}
	}
	return []string{"gateway", "auth"}
}

func summarizePeer(ms []*Measurement) []*PeerSummary {
	var out []*PeerSummary
	by := map[string]*PeerSummary{}
	for _, m := range ms {
		s := by[m.Target]
		if s == nil {
			s = &PeerSummary{Name: m.Target, Servers: peerServers(m.Target)}
			by[m.Target] = s
			out = append(out, s)
		}
		per := m.CPUMicrosPerUnit
		if per == nil {
			per = m.CPUMicrosPerReq
		}
		cpu := 0.0
		for _, p := range s.Servers {
			cpu += per[p]
		}
		s.RoundCPU = append(s.RoundCPU, cpu)
		if strings.HasPrefix(m.Target, "Hydra") {
			s.StoreCPU += per["postgres"]
		}
		s.UnitsPerSec += m.UnitsPerSec
		s.CPUMicros += cpu
	}
	for _, s := range out {
		k := float64(len(s.RoundCPU))
		s.UnitsPerSec /= k
		s.CPUMicros /= k
		s.StoreCPU /= k
	}
	return out
}

// peer finds a variant's summary.
func (r *HydraReport) peer(name string) *PeerSummary {
	for _, s := range r.Summary {
		if s.Name == name {
			return s
		}
	}
	return nil
}
