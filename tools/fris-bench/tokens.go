package main

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// Signatures per token response: a response of the spec's shape carries an
// access, an id and a refresh token, each an RS256 JWS made by the auth
// service. An OAuth 2.0 refresh (refresh-oauth) carries one RS256 access
// token and an HS256 refresh token (an HMAC: no signature to speak of);
// flowSignatures counts what the responses actually carried.
const serverSignatures = 3

// rsaBits is the size of the auth service's signing key (its -key-bits
// default) and of the keys the signature flow registers.
const rsaBits = 2048

// TokenReport is the auth suite: the token endpoint's two machine flows next
// to the machine's raw RSA signing rate.
type TokenReport struct {
	Connections int `json:"connections"`
	// Sessions are the clients the connections share (refresh chains,
	// registered keys); more than connections, so a worker never waits.
	Sessions int      `json:"sessions"`
	Scenario Scenario `json:"scenario"`
	// RSA are the raw rates in the order measured: before the first flow,
	// between the flows, after the last. The machine's speed drifts (a
	// virtual machine shares its host), so each flow is judged against the
	// two measurements around it, not against a rate taken minutes away.
	RSA []RSARate `json:"rsa"`
	// SignsPerSec is the mean of all raw rates; SignCPUMicros the CPU one
	// signature takes at that rate.
	SignsPerSec   float64 `json:"signs_per_sec"`
	SignCPUMicros float64 `json:"sign_cpu_us"`
	MinShare      float64 `json:"min_share"`
	// Rounds: both flows run this many times, alternating with raw-rate
	// measurements, so a drift of the machine's speed hits every flow
	// alike; Flows holds every run, Summary each flow over all rounds.
	Rounds int `json:"rounds"`
	// FlowProcs is the load generator's GOMAXPROCS while a flow runs (0:
	// unchanged). The client is not what is measured; one P keeps its
	// runtime from spinning threads on the cores the services sign on.
	FlowProcs int `json:"flow_procs"`
	// FlowBatch: the load generator ran its flows under SCHED_BATCH.
	FlowBatch bool           `json:"flow_batch"`
	Flows     []*FlowResult  `json:"flows"`
	Summary   []*FlowSummary `json:"summary"`
	// Algs are the raw signing rates of RS256, ES256 and EdDSA, measured
	// before the first flow and after the last (tokens_algs.go).
	Algs []AlgRate `json:"algs,omitempty"`
	// Refresh compares the refresh flows with the refresh of the spec's
	// shape, the response every refresh got before the refresh key.
	Refresh []RefreshComparison `json:"refresh,omitempty"`
	// Signature compares the ES256 client's signature flow with the RS256
	// client's.
	Signature []RefreshComparison `json:"signature,omitempty"`
}

// FlowSummary is one flow over all rounds: the mean of the rounds' rates
// and shares, the spread of the shares, and the verdict on the mean.
type FlowSummary struct {
	Name        string  `json:"name"`
	Rounds      int     `json:"rounds"`
	UnitsPerSec float64 `json:"units_per_sec"`
	SignsPerSec float64 `json:"signs_per_sec"`
	Share       float64 `json:"share"`
	MinShare    float64 `json:"min_share"`
	MaxShare    float64 `json:"max_share"`
	ServerShare float64 `json:"server_share"`
	Met         bool    `json:"met"`
	// Judged: the crypto-limit target applies. The OAuth-shaped refreshes
	// make one RSA signature or none: they are judged by their ratio
	// against the spec-shaped refresh (RefreshComparison) instead.
	Judged bool `json:"judged"`
}

// RSARate is one measurement of the raw signing rate.
type RSARate struct {
	Goroutines int     `json:"goroutines"`
	Seconds    float64 `json:"seconds"`
	Signs      uint64  `json:"signs"`
	PerSec     float64 `json:"per_sec"`
	// OtherBusy is the share of the machine's CPU the rest of it (not this
	// process, not the watched ones) used meanwhile; -1 when not known.
	OtherBusy float64 `json:"other_busy"`
}

// FlowResult is one flow judged against the crypto limit.
type FlowResult struct {
	Name                string `json:"name"`
	Round               int    `json:"round"`
	RequestsPerResponse int    `json:"requests_per_response"`
	// ServerSignatures counts the RSA signatures of a response; Carried
	// is what a response of the flow carried (token: alg), when readable.
	ServerSignatures int    `json:"server_signatures"`
	Carried          string `json:"carried,omitempty"`
	ClientSignatures int    `json:"client_signatures"`
	// SignsPerSec is the raw rate the flow is judged against: the mean of
	// the measurements just before and just after it.
	SignsPerSec float64 `json:"signs_per_sec"`
	// Limit is SignsPerSec / (server + client signatures per response),
	// Share the measured token responses/s over it; ServerLimit and
	// ServerShare count the server's signatures only.
	Limit       float64      `json:"limit"`
	Share       float64      `json:"share"`
	ServerLimit float64      `json:"server_limit"`
	ServerShare float64      `json:"server_share"`
	Met         bool         `json:"met"`
	M           *Measurement `json:"measurement"`
}

var (
	jsonHeader = http.Header{"Content-Type": {"application/json"}}
	formHeader = http.Header{"Content-Type": {"application/x-www-form-urlencoded"}}
)

// refreshChain is flow 3's client: it holds the one live refresh token of
// its chain and spends it on each request. oauth sends the request as an
// OAuth 2.0 library does (grant_type=refresh_token), whose response need
// carry no id token; without it, in the spec's shape (the refresh token
// alone), whose response carries all three.
type refreshChain struct {
	token string
	oauth bool
	last  tokenSet
}

func (c *refreshChain) next() (vegeta.Target, error) {
	if c.oauth {
		// A form, as OAuth 2.0 libraries send it (RFC 6749, 6), and as
		// the Hydra side of hydra-compare is sent.
		body := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {c.token}}.Encode()
		return vegeta.Target{Method: http.MethodPost, URL: authPrefix + "/token", Body: []byte(body), Header: formHeader}, nil
	}
	body, err := json.Marshal(map[string]string{"refresh_token": c.token})
	return vegeta.Target{Method: http.MethodPost, URL: authPrefix + "/token", Body: body, Header: jsonHeader}, err
}

func (c *refreshChain) done(r *vegeta.Result) (outcome, bool) {
	const kind = "token (refresh_token)"
	if bad := check(r, Expect{Status: http.StatusOK}); bad != "" {
		return outcome{bad: bad, kind: kind}, false
	}
	ts, err := parseTokens(r.Body, !c.oauth)
	if err != nil {
		return outcome{bad: err.Error(), kind: kind}, false
	}
	c.token, c.last = ts.Refresh, ts
	return outcome{kind: kind, unit: true, unitLatency: r.Latency}, true
}

// signSession is flow 2's client: a registered key. It asks for a sign
// request, signs the code (SHA512withRSA) and exchanges code and signature
// for tokens, then starts over.
type signSession struct {
	key      *rsa.PrivateKey
	keyID    int32
	clientID string
	code     string        // set between the two requests
	first    time.Duration // latency of the sign request of the current round
	last     tokenSet      // the last answer's tokens (flowSignatures)
}

func (s *signSession) next() (vegeta.Target, error) {
	if s.code == "" {
		body, err := json.Marshal(map[string]int32{"keyId": s.keyID})
		return vegeta.Target{Method: http.MethodPost, URL: authPrefix + "/sign_request", Body: body, Header: jsonHeader}, err
	}
	sum := sha512.Sum512([]byte(s.code))
	sig, err := rsa.SignPKCS1v15(rand.Reader, s.key, crypto.SHA512, sum[:])
	if err != nil {
		return vegeta.Target{}, err
	}
	body, err := json.Marshal(map[string]string{
		"code": s.code, "client_id": s.clientID, "signature": base64.StdEncoding.EncodeToString(sig),
	})
	return vegeta.Target{Method: http.MethodPost, URL: authPrefix + "/token", Body: body, Header: jsonHeader}, err
}

func (s *signSession) done(r *vegeta.Result) (outcome, bool) {
	// A session holds nothing that an error spends: a failed round starts
	// over with a new sign request.
	if s.code == "" {
		const kind = "sign_request"
		if bad := check(r, Expect{Status: http.StatusOK}); bad != "" {
			return outcome{bad: bad, kind: kind}, true
		}
		var sr struct {
			Code string `json:"code"`
		}
		if err := json.Unmarshal(r.Body, &sr); err != nil || sr.Code == "" {
			return outcome{bad: fmt.Sprintf("sign request answer without a code: %.80s", r.Body), kind: kind}, true
		}
		s.code, s.first = sr.Code, r.Latency
		return outcome{kind: kind}, true
	}
	const kind = "token (code + signature)"
	s.code = ""
	if bad := check(r, Expect{Status: http.StatusOK}); bad != "" {
		return outcome{bad: bad, kind: kind}, true
	}
	ts, err := parseTokenSet(r.Body)
	if err != nil {
		return outcome{bad: err.Error(), kind: kind}, true
	}
	s.last = ts
	return outcome{kind: kind, unit: true, unitLatency: s.first + r.Latency}, true
}

// rsaSignRate signs with goroutines goroutines for d: RSASSA-PKCS1-v1_5,
// SHA-256, a 32-byte digest, key's size; what the auth service does three
// times per token response, on the same cores.
func rsaSignRate(ctx context.Context, key *rsa.PrivateKey, goroutines int, d time.Duration, cpu *cpuWatch) RSARate {
	digest := sha256.Sum256([]byte("fris-bench raw RSA signing rate"))
	return signRate(ctx, func() {
		if _, err := rsa.SignPKCS1v15(rand.Reader, key, crypto.SHA256, digest[:]); err != nil {
			panic(err) // a valid key cannot fail to sign
		}
	}, goroutines, d, cpu)
}

// signRate calls sign on goroutines goroutines for d and counts.
func signRate(ctx context.Context, sign func(), goroutines int, d time.Duration, cpu *cpuWatch) RSARate {
	var (
		n    atomic.Uint64
		stop atomic.Bool
		wg   sync.WaitGroup
	)
	c0 := cpu.sample()
	start := time.Now()
	for range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				sign()
				n.Add(1)
			}
		}()
	}
	t := time.NewTimer(d)
	select {
	case <-t.C:
	case <-ctx.Done():
		t.Stop()
	}
	stop.Store(true)
	wg.Wait()
	elapsed := time.Since(start)
	c1 := cpu.sample()
	r := RSARate{Goroutines: goroutines, Seconds: elapsed.Seconds(), Signs: n.Load(), OtherBusy: -1}
	r.PerSec = float64(r.Signs) / elapsed.Seconds()
	if a, ok := c1[otherName]; ok {
		if b, ok := c0[otherName]; ok {
			r.OtherBusy = max(0, float64(a-b)/float64(elapsed)/float64(runtime.NumCPU()))
		}
	}
	return r
}

// generateKeys makes n RSA keys on all cores.
func generateKeys(n int) ([]*rsa.PrivateKey, error) {
	keys := make([]*rsa.PrivateKey, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for i := range keys {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			keys[i], errs[i] = rsa.GenerateKey(rand.Reader, rsaBits)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return keys, nil
}

// The auth suite's flows (-token-flows).
const (
	flowRefresh      = "refresh"
	flowRefreshOAuth = "refresh-oauth"
	flowSignature    = "signature"
)

var allFlows = []string{flowRefresh, flowRefreshOAuth, flowSignature}

// runTokens is the auth suite. Set-up first (refresh chains of the seeded
// user, registered keys), then the raw signing rate with nothing else
// running, the two flows, and the raw rate again.
func runTokens(ctx context.Context, cfg config, cpu *cpuWatch, stderr io.Writer) (*TokenReport, error) {
	n := cfg.tokenConnections
	rep := &TokenReport{Connections: n, Sessions: 2 * n, MinShare: cfg.minCryptoShare}
	ac := newAuthClient(cfg.gateway)
	defer ac.close()

	// Keys are registered only for the signature flow; one more key is for
	// the raw rate either way.
	withSigs := slices.Contains(cfg.tokenFlows, flowSignature) || slices.Contains(cfg.tokenFlows, flowSignatureES256)
	nKeys := 0
	if withSigs {
		nKeys = n
	}
	chainSets := map[string][]session{}
	for _, f := range append([]string{flowRefresh, flowRefreshOAuth}, curveFlows...) {
		if !slices.Contains(cfg.tokenFlows, f) {
			continue
		}
		creds := cfg.flowClient(f)
		fmt.Fprintf(stderr, "fris-bench: auth: %s: signing in %s at %s %d times (one refresh chain each)\n", f, creds.email, creds.clientID, rep.Sessions)
		chains := make([]session, rep.Sessions)
		for i := range chains {
			ts, err := ac.signIn(ctx, creds)
			if err != nil {
				return nil, fmt.Errorf("auth set-up: %w", err)
			}
			chains[i] = &refreshChain{token: ts.Refresh, oauth: oauthFlow(f)}
		}
		chainSets[f] = chains
	}
	fmt.Fprintf(stderr, "fris-bench: auth: registering %d keys\n", nKeys)
	keys, err := generateKeys(nKeys + 1)
	if err != nil {
		return nil, err
	}
	run := time.Now().UnixNano()
	var signers, signersES256 []session
	if withSigs {
		signers, signersES256 = make([]session, rep.Sessions), make([]session, rep.Sessions)
		keyIDs := make([]int32, n)
		for i := range n {
			if keyIDs[i], err = ac.register(ctx, fmt.Sprintf("bench-%d-%d@fris-bench.example", run, i), &keys[i].PublicKey); err != nil {
				return nil, fmt.Errorf("auth set-up: %w", err)
			}
		}
		for i := range signers {
			signers[i] = &signSession{key: keys[i%n], keyID: keyIDs[i%n], clientID: cfg.creds.clientID}
			signersES256[i] = &signSession{key: keys[i%n], keyID: keyIDs[i%n], clientID: cfg.flowClient(flowSignatureES256).clientID}
		}
	}
	rawKey := keys[nKeys]

	procs := runtime.GOMAXPROCS(0)
	raw := func() RSARate {
		fmt.Fprintf(stderr, "fris-bench: auth: raw RSA-%d signing rate, %d goroutines, %s\n", rsaBits, procs, cfg.rsaDuration)
		r := rsaSignRate(ctx, rawKey, procs, cfg.rsaDuration, cpu)
		rep.RSA = append(rep.RSA, r)
		return r
	}
	rep.Algs = append(rep.Algs, algRates(ctx, procs, cfg.rsaDuration, cpu, stderr)...)
	before := raw()

	sc := ClosedLoop(n, cfg.warmup, cfg.tokenDuration)
	sc.Method = http.MethodPost
	rep.Scenario = sc
	rep.Rounds, rep.FlowProcs, rep.FlowBatch = cfg.tokenRounds, cfg.flowProcs, cfg.flowBatch
	type flow struct {
		name          string
		sessions      []session
		reqs, clients int
	}
	var flows []flow
	for _, f := range []flow{{flowRefresh, chainSets[flowRefresh], 1, 0}, {flowRefreshOAuth, chainSets[flowRefreshOAuth], 1, 0},
		{flowRefreshES256, chainSets[flowRefreshES256], 1, 0}, {flowRefreshNull, chainSets[flowRefreshNull], 1, 0}, {flowSignature, signers, 2, 1},
		{flowSignatureES256, signersES256, 2, 1}} {
		if slices.Contains(cfg.tokenFlows, f.name) {
			flows = append(flows, f)
		}
	}
	for round := 1; round <= cfg.tokenRounds; round++ {
		for _, f := range flows {
			fmt.Fprintf(stderr, "fris-bench: auth: round %d of %d, %s flow: %s warm-up + %s at %d connections\n",
				round, cfg.tokenRounds, f.name, cfg.warmup, cfg.tokenDuration, n)
			pool := newSessionPool(cfg.gateway, f.sessions, sc.Timeout)
			if cfg.flowProcs > 0 {
				runtime.GOMAXPROCS(cfg.flowProcs)
			}
			if cfg.flowBatch {
				if err := setBatchScheduling(true); err != nil {
					return rep, fmt.Errorf("SCHED_BATCH for the flows (-flow-batch=false to go without): %w", err)
				}
			}
			m := sc.Run(ctx, pool.targeter(), pool.handle, cpu)
			runtime.GOMAXPROCS(procs)
			if cfg.flowBatch {
				if err := setBatchScheduling(false); err != nil {
					return rep, fmt.Errorf("back from SCHED_BATCH: %w", err)
				}
			}
			m.Path, m.Target, m.URL, m.Unit = authPrefix+"/token", f.name, cfg.gateway+authPrefix+"/token", "token response"
			if ctx.Err() != nil {
				return rep, ctx.Err()
			}
			after := raw()
			fr := &FlowResult{
				Name: f.name, Round: round, RequestsPerResponse: f.reqs, ServerSignatures: serverSignatures, ClientSignatures: f.clients, M: m,
				SignsPerSec: (before.PerSec + after.PerSec) / 2,
			}
			fr.ServerSignatures, fr.Carried = flowSignatures(f.sessions)
			judgeFlow(fr, cfg.minCryptoShare)
			rep.Flows = append(rep.Flows, fr)
			before = after
		}
	}
	for _, r := range rep.RSA {
		rep.SignsPerSec += r.PerSec / float64(len(rep.RSA))
	}
	if rep.SignsPerSec > 0 {
		rep.SignCPUMicros = float64(procs) * 1e6 / rep.SignsPerSec
	}
	rep.Algs = append(rep.Algs, algRates(ctx, procs, cfg.rsaDuration, cpu, stderr)...)
	rep.Summary = summarize(rep.Flows, cfg.minCryptoShare)
	rep.Refresh = compareRefresh(rep.Flows)
	rep.Signature = compareSignature(rep.Flows)
	return rep, ctx.Err()
}

// summarize folds each flow's rounds, in the order the flows first ran. The
// share over all rounds is a ratio of means (mean responses/s over the mean
// limit), not a mean of the rounds' ratios, which a round judged against a
// momentary dip of the raw rate would pull up.
func summarize(flows []*FlowResult, minShare float64) []*FlowSummary {
	var out []*FlowSummary
	by := map[string]*FlowSummary{}
	limits := map[string][2]float64{}
	for _, f := range flows {
		s := by[f.Name]
		if s == nil {
			s = &FlowSummary{Name: f.Name, MinShare: f.Share, MaxShare: f.Share}
			by[f.Name] = s
			out = append(out, s)
		}
		s.Rounds++
		s.UnitsPerSec += f.M.UnitsPerSec
		s.SignsPerSec += f.SignsPerSec
		l := limits[f.Name]
		limits[f.Name] = [2]float64{l[0] + f.Limit, l[1] + f.ServerLimit}
		s.MinShare, s.MaxShare = min(s.MinShare, f.Share), max(s.MaxShare, f.Share)
	}
	for _, s := range out {
		n := float64(s.Rounds)
		s.UnitsPerSec, s.SignsPerSec = s.UnitsPerSec/n, s.SignsPerSec/n
		if l := limits[s.Name]; l[0] > 0 && l[1] > 0 {
			s.Share, s.ServerShare = s.UnitsPerSec/(l[0]/n), s.UnitsPerSec/(l[1]/n)
		}
		s.Judged = judged(s.Name)
		s.Met = s.Share >= minShare || !s.Judged
	}
	return out
}

func judgeFlow(f *FlowResult, minShare float64) {
	if f.ServerSignatures+f.ClientSignatures == 0 {
		// No RSA signature at all (ES256, the stub): no crypto limit.
		f.Met = true
		return
	}
	if f.ServerSignatures == 0 {
		f.ServerSignatures = 1 // a limit only as the client's signature sets it
	}
	f.ServerLimit = f.SignsPerSec / float64(f.ServerSignatures)
	f.Limit = f.SignsPerSec / float64(f.ServerSignatures+f.ClientSignatures)
	if f.ServerLimit > 0 {
		f.ServerShare = f.M.UnitsPerSec / f.ServerLimit
	}
	if f.Limit > 0 {
		f.Share = f.M.UnitsPerSec / f.Limit
	}
	f.Met = f.Share >= minShare
}
