package main

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"
)

// AlgRate is one raw signing rate of a JWS algorithm: RS256 (RSA-2048,
// PKCS #1 v1.5), ES256 (P-256) or EdDSA (Ed25519), each over a 400-byte
// signing input (a token's header and claims), hashed in the loop as a
// token signature is.
type AlgRate struct {
	Alg string `json:"alg"`
	RSARate
}

// signingInput is the size of a token's header and claims.
var signingInput = []byte(strings.Repeat("fris-bench signing input ", 16))

// algRates measures RS256, ES256 and EdDSA one after the other, each for d
// on goroutines goroutines: what one token signature costs in each, on
// this machine, in this run.
func algRates(ctx context.Context, goroutines int, d time.Duration, cpu *cpuWatch, stderr io.Writer) []AlgRate {
	rk, err := rsa.GenerateKey(rand.Reader, rsaBits)
	if err != nil {
		panic(err) // the OS has no entropy
	}
	ek, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		panic(err)
	}
	_, edk, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		panic(err)
	}
	signers := []struct {
		alg  string
		sign func()
	}{
		{"RS256", func() {
			sum := sha256.Sum256(signingInput)
			if _, err := rsa.SignPKCS1v15(rand.Reader, rk, crypto.SHA256, sum[:]); err != nil {
				panic(err)
			}
		}},
		{"ES256", func() {
			sum := sha256.Sum256(signingInput)
			if _, err := ecdsa.SignASN1(rand.Reader, ek, sum[:]); err != nil {
				panic(err)
			}
		}},
		{"EdDSA", func() { _ = ed25519.Sign(edk, signingInput) }},
	}
	var out []AlgRate
	for _, s := range signers {
		if ctx.Err() != nil {
			break
		}
		fmt.Fprintf(stderr, "fris-bench: auth: raw %s signing rate, %d goroutines, %s\n", s.alg, goroutines, d)
		out = append(out, AlgRate{Alg: s.alg, RSARate: signRate(ctx, s.sign, goroutines, d, cpu)})
	}
	return out
}

// flowSignatures reads a response the flow's sessions last got: the
// number of its RSA signatures and what it carried ("access RS256, id
// RS256, refresh HS256"). Responses it cannot read (not JWTs) count as
// serverSignatures.
func flowSignatures(sessions []session) (int, string) {
	for _, s := range sessions {
		var last tokenSet
		switch c := s.(type) {
		case *refreshChain:
			last = c.last
		case *signSession:
			last = c.last
		}
		if last.Access == "" {
			continue
		}
		n := 0
		var carried []string
		for _, t := range []struct{ name, tok string }{{"access", last.Access}, {"id", last.ID}, {"refresh", last.Refresh}} {
			if t.tok == "" {
				carried = append(carried, "no "+t.name)
				continue
			}
			alg, ok := jwsAlg(t.tok)
			if !ok {
				return serverSignatures, ""
			}
			if strings.HasPrefix(alg, "RS") || strings.HasPrefix(alg, "PS") {
				n++
			}
			carried = append(carried, t.name+" "+alg)
		}
		return n, strings.Join(carried, ", ")
	}
	return serverSignatures, ""
}

func jwsAlg(tok string) (string, bool) {
	h, _, ok := strings.Cut(tok, ".")
	if !ok {
		return "", false
	}
	b, err := base64.RawURLEncoding.DecodeString(h)
	if err != nil {
		return "", false
	}
	var hdr struct {
		Alg string `json:"alg"`
	}
	if json.Unmarshal(b, &hdr) != nil || hdr.Alg == "" {
		return "", false
	}
	return hdr.Alg, true
}

// RefreshComparison is a refresh flow against the spec-shaped refresh of
// the same run (three RS256 signatures per response: every refresh's
// response before the refresh key), over all rounds: the means of the
// rounds' token responses/s and CPU per response.
type RefreshComparison struct {
	Name        string  `json:"name"`
	Carried     string  `json:"carried"`
	UnitsPerSec float64 `json:"units_per_sec"`
	// AuthCPU is the auth service's CPU per response, ServerCPU the
	// watched processes' but the load generator's (auth and gateway), µs.
	AuthCPU   float64 `json:"auth_cpu_us"`
	ServerCPU float64 `json:"server_cpu_us"`
	// Ratios against the baseline: responses/s over the baseline's, and
	// the baseline's CPU per response over this one's (above 1: cheaper).
	RateRatio      float64 `json:"rate_ratio"`
	AuthCPURatio   float64 `json:"auth_cpu_ratio"`
	ServerCPURatio float64 `json:"server_cpu_ratio"`
}

// compareRefresh folds the refresh flows' rounds and compares each with
// the refresh flow; nothing when either is missing.
func compareRefresh(flows []*FlowResult) []RefreshComparison {
	return compareFlows(flows, flowRefresh, func(name string) bool { return name == flowRefresh || oauthFlow(name) })
}

// compareSignature compares the ES256 client's signature flow with the
// RS256 client's.
func compareSignature(flows []*FlowResult) []RefreshComparison {
	return compareFlows(flows, flowSignature, func(name string) bool { return name == flowSignature || name == flowSignatureES256 })
}

// compareFlows folds the rounds of the flows in and compares each with
// base; nothing when base or every other is missing.
func compareFlows(flows []*FlowResult, base string, in func(name string) bool) []RefreshComparison {
	var out []RefreshComparison
	idx := map[string]int{}
	rounds := map[string]float64{}
	for _, f := range flows {
		if !in(f.Name) {
			continue
		}
		i, ok := idx[f.Name]
		if !ok {
			i = len(out)
			idx[f.Name] = i
			out = append(out, RefreshComparison{Name: f.Name})
		}
		c := &out[i]
		c.Carried = f.Carried
		c.UnitsPerSec += f.M.UnitsPerSec
		for name, us := range f.M.CPUMicrosPerUnit {
			switch name {
			case selfName, otherName:
			case "auth":
				c.AuthCPU += us
				c.ServerCPU += us
			default:
				c.ServerCPU += us
			}
		}
		rounds[f.Name]++
	}
	bi, ok := idx[base]
	if !ok || len(out) < 2 {
		return nil
	}
	for i := range out {
		n := rounds[out[i].Name]
		out[i].UnitsPerSec, out[i].AuthCPU, out[i].ServerCPU = out[i].UnitsPerSec/n, out[i].AuthCPU/n, out[i].ServerCPU/n
	}
	b := out[bi]
	for i := range out {
		c := &out[i]
		c.RateRatio = ratio(c.UnitsPerSec, b.UnitsPerSec)
		c.AuthCPURatio = ratio(b.AuthCPU, c.AuthCPU)
		c.ServerCPURatio = ratio(b.ServerCPU, c.ServerCPU)
	}
	return out
}

// writeAlgs and writeRefresh are the auth suite's tables of signing rates
// and of the refresh flows against the spec-shaped refresh.
func writeAlgs(w io.Writer, algs []AlgRate, procs int) {
	if len(algs) == 0 {
		return
	}
	type agg struct{ perSec, n float64 }
	by := map[string]*agg{}
	var order []string
	for _, a := range algs {
		if by[a.Alg] == nil {
			by[a.Alg] = &agg{}
			order = append(order, a.Alg)
		}
		by[a.Alg].perSec += a.PerSec
		by[a.Alg].n++
	}
	fmt.Fprintf(w, "\nRaw signing rate per JWS algorithm, measured in this run before the first flow and after the last (%d goroutines, a 400-byte signing input hashed in the loop); the ratio is against RS256's.\n\n", procs)
	fmt.Fprintln(w, "| alg | signs/s (mean) | µs of CPU per signature | × RS256's rate |")
	fmt.Fprintln(w, "|---|---:|---:|---:|")
	rs := by["RS256"]
	for _, alg := range order {
		a := by[alg]
		rate := a.perSec / a.n
		cpu := 0.0
		if rate > 0 {
			cpu = float64(procs) * 1e6 / rate
		}
		x := "–"
		if rs != nil && rs.perSec > 0 {
			x = fmt.Sprintf("%.1f×", rate/(rs.perSec/rs.n))
		}
		fmt.Fprintf(w, "| %s | %s | %.1f | %s |\n", alg, thousands(rate), cpu, x)
	}
}

func writeRefresh(w io.Writer, cs []RefreshComparison) {
	if len(cs) == 0 {
		return
	}
	fmt.Fprintf(w, "\nRefresh against the baseline of the same run: %s, the spec-shaped refresh, whose response is what every refresh got before the refresh key (three RS256 signatures). Means over the rounds; CPU per token response in µs, server = every watched process but the load generator; ratios above 1 are better.\n\n", flowRefresh)
	writeComparison(w, cs)
}

// writeSignature is the table of the signature flows: the ES256 client's
// against the RS256 client's.
func writeSignature(w io.Writer, cs []RefreshComparison) {
	if len(cs) == 0 {
		return
	}
	fmt.Fprintf(w, "\nSignature flow per client algorithm, against the baseline of the same run: %s, the RS256 client's. A response is a sign request and a token request; the client's own RSA signature is the load generator's. Means over the rounds; CPU per token response in µs, server = every watched process but the load generator; ratios above 1 are better.\n\n", flowSignature)
	writeComparison(w, cs)
}

func writeComparison(w io.Writer, cs []RefreshComparison) {
	fmt.Fprintln(w, "| flow | a response carries | token responses/s | × baseline | auth CPU/response | × less | server CPU/response | × less |")
	fmt.Fprintln(w, "|---|---|---:|---:|---:|---:|---:|---:|")
	for _, c := range cs {
		fmt.Fprintf(w, "| %s | %s | %s | %.2f× | %s | %.2f× | %s | %.2f× |\n", c.Name, c.Carried, thousands(c.UnitsPerSec), c.RateRatio,
			thousands(c.AuthCPU), c.AuthCPURatio, thousands(c.ServerCPU), c.ServerCPURatio)
	}
}
