package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// writeMarkdown prints each suite's tables, the verdicts on the targets
// and, when measured, the CPU each process spent per request or response.
func writeMarkdown(w io.Writer, rep *Report, cpu *cpuWatch) {
	for i, suite := range rep.Suites {
		if i > 0 {
			fmt.Fprintln(w)
		}
		switch suite {
		case suiteMDR:
			if len(rep.Results) == 0 {
				continue
			}
			if len(rep.Suites) > 1 {
				fmt.Fprintf(w, "#### Registry reads next to the baseline (suite %s)\n\n", suiteMDR)
			}
			writeMDR(w, rep, cpu)
		case suiteBearer:
			if rep.Bearer != nil {
				writeBearer(w, rep.Bearer, cpu)
			}
		case suiteAuth:
			if rep.Token != nil {
				writeTokens(w, rep.Token, cpu, rep.GOMAXPROCS)
			}
		case suiteBroker:
			if rep.Broker != nil {
				writeBroker(w, rep.Broker, cpu)
			}
		case suiteUpload:
			if rep.Upload != nil {
				writeUpload(w, rep.Upload, cpu)
			}
		case suiteGuess:
			if rep.Guess != nil {
				writeGuess(w, rep.Guess)
			}
		case suiteAttack:
			if rep.Attack != nil {
				writeAttack(w, rep.Attack)
			}
		case suiteStreams:
			if rep.Streams != nil {
				writeStreams(w, rep.Streams, cpu)
			}
		case suiteHydra:
			if rep.Hydra != nil {
				writeHydra(w, rep.Hydra, cpu)
			}
		}
	}
}

// writeMDR prints the mdr suite: the results table, the verdict on the
// targets and, when measured, the CPU each process spent per request.
func writeMDR(w io.Writer, rep *Report, cpu *cpuWatch) {
	sc := rep.Scenario
	fmt.Fprintf(w, "Scenario %s: %s, %d connections, closed loop (max effort), %s measured after %s warm-up, per path and target; %s, %d CPUs, GOMAXPROCS %d.\n\n",
		sc.Name, sc.Method, sc.Connections, sc.Duration, sc.Warmup, rep.GoVersion, rep.NumCPU, rep.GOMAXPROCS)

	ratios := map[string]Pair{}
	for _, p := range rep.Pairs {
		ratios[p.Path] = p
	}
	fmt.Fprintln(w, "| path | target | req/s | p50 | p99 | max | errors | gateway/baseline |")
	fmt.Fprintln(w, "|---|---|---:|---:|---:|---:|---:|---:|")
	for _, m := range rep.Results {
		ratio := ""
		if p, ok := ratios[m.Path]; ok && m.Target == "gateway" {
			ratio = fmt.Sprintf("%.2f", p.Ratio)
		}
		fmt.Fprintf(w, "| `%s` | %s | %s | %s | %s | %s | %d | %s |\n",
			m.Path, m.Target, thousands(m.ReqPerSec), msCell(m.P50Ms), msCell(m.P99Ms), msCell(m.MaxMs), m.Errors+m.WarmupErrors, ratio)
	}

	fmt.Fprintf(w, "\nTargets: gateway req/s >= %.0f%% of the baseline's; gateway p99 < %s.\n\n",
		rep.Targets.MinRatio*100, msCell(rep.Targets.MaxP99Ms))
	for _, p := range rep.Pairs {
		var p99 float64
		for _, m := range rep.Results {
			if m.Path == p.Path && m.Target == "gateway" {
				p99 = m.P99Ms
			}
		}
		fmt.Fprintf(w, "- `%s`: throughput %.0f%% of baseline: %s; p99 %s: %s\n",
			p.Path, p.Ratio*100, verdict(p.RatioMet), msCell(p99), verdict(p.P99Met))
	}

	names := cpu.names()
	measured := false
	for _, m := range rep.Results {
		measured = measured || len(m.CPUMicrosPerReq) > 0
	}
	if !measured {
		return
	}
	fmt.Fprintf(w, "\nCPU time (user+system) per request, µs; %s is the load generator, and the baseline server too in baseline rows; %s is the rest of the machine (not part of the total).\n\n", selfName, otherName)
	fmt.Fprintf(w, "| path | target | %s | total | %s |\n", strings.Join(names, " | "), otherName)
	fmt.Fprintf(w, "|---|---|%s---:|---:|\n", strings.Repeat("---:|", len(names)))
	for _, m := range rep.Results {
		cells, total, other := cpuCells(names, m.CPUMicrosPerReq)
		fmt.Fprintf(w, "| `%s` | %s | %s | %s | %s |\n", m.Path, m.Target, strings.Join(cells, " | "), thousands(total), other)
	}
}

// cpuCells are the per-process cells of one CPU row, their total and the
// rest of the machine.
func cpuCells(names []string, per map[string]float64) (cells []string, total float64, other string) {
	cell := func(v float64, ok bool) string {
		if !ok {
			return "–"
		}
		return thousands(v)
	}
	cells = make([]string, len(names))
	for i, n := range names {
		v, ok := per[n]
		cells[i] = cell(v, ok)
		total += v
	}
	o, ok := per[otherName]
	return cells, total, cell(o, ok)
}

func anyCPU(ms []*Measurement, unit bool) bool {
	for _, m := range ms {
		if (unit && len(m.CPUMicrosPerUnit) > 0) || (!unit && len(m.CPUMicrosPerReq) > 0) {
			return true
		}
	}
	return false
}

func writeBearer(w io.Writer, b *BearerReport, cpu *cpuWatch) {
	fmt.Fprintf(w, "#### Bearer token check (suite %s)\n\n", suiteBearer)
	fmt.Fprintf(w, "`GET %s` without and with `Authorization: Bearer <access token of the seeded user>` (the gateway verifies it: RS256 signature against the JWKS, claims), %d connections, closed loop, %s warm-up + %s measured per run, %d alternating rounds.\n\n",
		b.Path, b.Connections, b.Scenario.Warmup, b.Scenario.Duration, b.Rounds)
	if b.AnonymousCached {
		fmt.Fprintln(w, "**Not like for like:** the gateway answered a repeated anonymous read from its response cache (`X-Cache: hit`), which token holders bypass; run this suite against a gateway with `-mdr-cache-ttl 0`.")
		fmt.Fprintln(w)
	} else {
		fmt.Fprintln(w, "Anonymous reads were not served from the gateway's response cache (no `X-Cache: hit`): both variants cross to mdr on every request.")
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w, "| variant | round | req/s | p50 | p99 | max | errors |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|")
	for _, m := range b.Results {
		fmt.Fprintf(w, "| %s | %d | %s | %s | %s | %s | %d |\n", m.Target, m.Round, thousands(m.ReqPerSec),
			msCell(m.P50Ms), msCell(m.P99Ms), msCell(m.MaxMs), m.Errors+m.WarmupErrors)
	}
	fmt.Fprintf(w, "| %s | all | **%s** | | | | |\n", noToken, thousands(b.Without))
	fmt.Fprintf(w, "| %s | all | **%s** | | | | |\n", withToken, thousands(b.With))
	fmt.Fprintf(w, "\nTarget: a read with a token at most %.0f%% slower than without: %.1f%% slower (%s vs %s req/s): %s\n",
		b.MaxSlowdown*100, b.Slowdown*100, thousands(b.With), thousands(b.Without), verdict(b.Met))

	if !anyCPU(b.Results, false) {
		return
	}
	names := cpu.names()
	fmt.Fprintf(w, "\nCPU time (user+system) per request, µs; %s is the load generator, %s the rest of the machine (not part of the total).\n\n", selfName, otherName)
	fmt.Fprintf(w, "| variant | round | %s | total | %s |\n", strings.Join(names, " | "), otherName)
	fmt.Fprintf(w, "|---|---:|%s---:|---:|\n", strings.Repeat("---:|", len(names)))
	for _, m := range b.Results {
		cells, total, other := cpuCells(names, m.CPUMicrosPerReq)
		fmt.Fprintf(w, "| %s | %d | %s | %s | %s |\n", m.Target, m.Round, strings.Join(cells, " | "), thousands(total), other)
	}
}

func writeTokens(w io.Writer, t *TokenReport, cpu *cpuWatch, procs int) {
	fmt.Fprintf(w, "#### Token endpoint (suite %s)\n\n", suiteAuth)
	rates := make([]string, len(t.RSA))
	busy := make([]string, len(t.RSA))
	for i, r := range t.RSA {
		rates[i], busy[i] = thousands(r.PerSec), busyCell(r.OtherBusy)
	}
	goroutines, secs := 0, 0.0
	if len(t.RSA) > 0 {
		goroutines, secs = t.RSA[0].Goroutines, t.RSA[0].Seconds
	}
	fmt.Fprintf(w, "Raw RSA signing rate, measured in this run while the bench sent no requests: RSA-%d, RSASSA-PKCS1-v1_5 with SHA-256 over a 32-byte digest, %d goroutines (every CPU), %s before the first flow and after each: %s signs/s (mean **%s signs/s**, i.e. %s µs of CPU per signature; rest of the machine busy meanwhile: %s). Each flow is judged against the mean of the two measurements around it.\n\n",
		rsaBits, goroutines, durationCell(secs), strings.Join(rates, ", "), thousands(t.SignsPerSec), thousands(t.SignCPUMicros), strings.Join(busy, ", "))
	procsNote := "unchanged"
	if t.FlowProcs > 0 {
		procsNote = strconv.Itoa(t.FlowProcs)
	}
	if t.FlowBatch {
		procsNote += ", under SCHED_BATCH"
	}
	which := "all flows"
	if len(t.Summary) == 1 {
		which = "the " + t.Summary[0].Name + " flow"
	}
	fmt.Fprintf(w, "Flows: %d rounds of %s, closed loop, %d connections (= workers, sharing %d client sessions), %s warm-up + %s measured each; the load generator's GOMAXPROCS while a flow runs: %s. A token response of the spec's shape carries %d RS256 signatures made by the auth service (refresh-oauth: what its responses carried, in the next table); in the signature flow the client (this load generator, on the same cores) signs the code too. Crypto limit = signs/s ÷ signatures per token response. A flow's verdict is on its share over all rounds: mean token responses/s over the mean crypto limit.\n\n",
		t.Rounds, which, t.Connections, t.Sessions, t.Scenario.Warmup, t.Scenario.Duration, procsNote, serverSignatures)
	fmt.Fprintf(w, "| flow | rounds | token responses/s (mean) | share of the limit (all rounds) | lowest, highest round | server's signatures only | target >= %.0f%% |\n", t.MinShare*100)
	fmt.Fprintln(w, "|---|---:|---:|---:|---|---:|---|")
	for _, f := range t.Summary {
		server := ""
		if f.ServerShare != f.Share {
			server = fmt.Sprintf("%.1f%%", f.ServerShare*100)
		}
		v := verdict(f.Met)
		if !f.Judged {
			v = "not judged: see its ratio against " + flowRefresh + " below"
			if f.Name == flowSignatureES256 {
				v = "not judged: see its ratio against " + flowSignature + " below"
			}
		}
		if f.Share == 0 && f.MaxShare == 0 {
			// No RSA signature in its responses: no crypto limit.
			fmt.Fprintf(w, "| %s | %d | **%s** | – | – | | %s |\n", f.Name, f.Rounds, thousands(f.UnitsPerSec), v)
			continue
		}
		fmt.Fprintf(w, "| %s | %d | **%s** | **%.1f%%** | %.1f%%, %.1f%% | %s | %s |\n",
			f.Name, f.Rounds, thousands(f.UnitsPerSec), f.Share*100, f.MinShare*100, f.MaxShare*100, server, v)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| flow | round | requests per response | token responses/s | p50 | p99 | max | errors | raw signs/s around it | signatures per response | crypto limit | share of the limit | server's signatures only |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|")
	for _, f := range t.Flows {
		m := f.M
		sigs := fmt.Sprintf("%d (server)", f.ServerSignatures)
		server := ""
		if f.ClientSignatures > 0 {
			sigs = fmt.Sprintf("%d (%d server + %d client)", f.ServerSignatures+f.ClientSignatures, f.ServerSignatures, f.ClientSignatures)
			server = fmt.Sprintf("%.1f%% of %s", f.ServerShare*100, thousands(f.ServerLimit))
		}
		fmt.Fprintf(w, "| %s | %d | %d | %s | %s | %s | %s | %d | %s | %s | %s | %.1f%% | %s |\n",
			f.Name, f.Round, f.RequestsPerResponse, thousands(m.UnitsPerSec), msCell(m.UnitP50Ms), msCell(m.UnitP99Ms), msCell(m.UnitMaxMs),
			m.Errors+m.WarmupErrors, thousands(f.SignsPerSec), sigs, thousands(f.Limit), f.Share*100, server)
	}
	fmt.Fprintln(w, "\nLatency of a token response: refresh, its one request; signature, the sign request plus the token request of the same client (the client's signing in between not included).")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| flow | round | request | req/s | p50 | p99 | max | errors |")
	fmt.Fprintln(w, "|---|---:|---|---:|---:|---:|---:|---:|")
	for _, f := range t.Flows {
		for _, st := range f.M.Steps {
			fmt.Fprintf(w, "| %s | %d | `%s` | %s | %s | %s | %s | %d |\n", f.Name, f.Round, st.Name, thousands(st.ReqPerSec),
				msCell(st.P50Ms), msCell(st.P99Ms), msCell(st.MaxMs), st.Errors)
		}
	}

	writeAlgs(w, t.Algs, procs)
	writeRefresh(w, t.Refresh)
	writeSignature(w, t.Signature)
	writeProtocolCost(w, t.Refresh)

	ms := make([]*Measurement, 0, len(t.Flows))
	for _, f := range t.Flows {
		ms = append(ms, f.M)
	}
	if !anyCPU(ms, true) {
		return
	}
	names := cpu.names()
	fmt.Fprintf(w, "\nCPU time (user+system) per token response, µs; %s is the load generator (the client's signature included), %s the rest of the machine (not part of the total). The last column is what the signatures alone cost at the raw rate.\n\n", selfName, otherName)
	fmt.Fprintf(w, "| flow | round | %s | total | %s | signatures at the raw rate |\n", strings.Join(names, " | "), otherName)
	fmt.Fprintf(w, "|---|---:|%s---:|---:|---:|\n", strings.Repeat("---:|", len(names)))
	for _, f := range t.Flows {
		cells, total, other := cpuCells(names, f.M.CPUMicrosPerUnit)
		n := f.ServerSignatures + f.ClientSignatures
		sign := 0.0
		if f.SignsPerSec > 0 {
			sign = float64(procs) * 1e6 / f.SignsPerSec
		}
		fmt.Fprintf(w, "| %s | %d | %s | %s | %s | %d × %s = %s |\n", f.Name, f.Round, strings.Join(cells, " | "), thousands(total), other,
			n, thousands(sign), thousands(float64(n)*sign))
	}
}

func busyCell(v float64) string {
	if v < 0 {
		return "unknown"
	}
	return fmt.Sprintf("%.0f%%", v*100)
}

func durationCell(seconds float64) string {
	return time.Duration(seconds * float64(time.Second)).Round(100 * time.Millisecond).String()
}

func verdict(ok bool) string {
	if ok {
		return "met"
	}
	return "**not met**"
}

func msCell(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f ms", v)
	case v >= 10:
		return fmt.Sprintf("%.1f ms", v)
	}
	return fmt.Sprintf("%.2f ms", v)
}

// thousands formats a rate as 12,345.
func thousands(v float64) string {
	s := strconv.FormatInt(int64(v+0.5), 10)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// cpuTable writes one measurement's CPU time per unit of work (a request,
// an upload), when the run measured any.
func cpuTable(w io.Writer, cpu *cpuWatch, unit string, m *Measurement) {
	if !anyCPU([]*Measurement{m}, false) {
		return
	}
	names := cpu.names()
	fmt.Fprintf(w, "\nCPU time (user+system) per %s, µs; %s is the load generator, %s the rest of the machine (not part of the total).\n\n", unit, selfName, otherName)
	fmt.Fprintf(w, "| %s | total | %s |\n", strings.Join(names, " | "), otherName)
	fmt.Fprintf(w, "|%s---:|---:|\n", strings.Repeat("---:|", len(names)))
	cells, total, other := cpuCells(names, m.CPUMicrosPerReq)
	fmt.Fprintf(w, "| %s | %s | %s |\n", strings.Join(cells, " | "), thousands(total), other)
}
