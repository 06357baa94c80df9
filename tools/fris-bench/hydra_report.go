package main

import (
	"fmt"
	"io"
	"strings"
)

// Targets of the hydra suite (issue 33): server CPU per refresh response at
// least this many times below Hydra's with the same RSA key size, and the
// gateway's verification this many times cheaper than Hydra's
// introspection.
const (
	peerRefreshTarget = 2.5
	peerVerifyTarget  = 8
	// peerES256Target: an ES256 client's refresh against Hydra with RSA keys.
	peerES256Target = 10
)

// writeHydra prints the hydra suite: every round, then each variant's mean
// server CPU and its ratio against Hydra's.
func writeHydra(w io.Writer, r *HydraReport, cpu *cpuWatch) {
	fmt.Fprintf(w, "FRIS next to Hydra (%s, client %s, signing keys %s): %d rounds, refresh flows at %d connections; per round each refresh variant, then each token check.\n\n",
		r.Public, r.ClientID, r.HydraKeys, r.Rounds, r.Connections)
	names := cpu.names()
	fmt.Fprintf(w, "| round | variant | responses/s | p50 | p99 | errors | CPU µs per response: %s |\n", strings.Join(names, ", ")+", "+otherName)
	fmt.Fprintln(w, "|---:|---|---:|---:|---:|---:|---|")
	for _, m := range r.Results {
		per := m.CPUMicrosPerUnit
		if per == nil {
			per = m.CPUMicrosPerReq
		}
		var cells []string
		for _, n := range append(names, otherName) {
			cells = append(cells, fmt.Sprintf("%.0f", per[n]))
		}
		p50, p99 := m.UnitP50Ms, m.UnitP99Ms
		if p50 == 0 {
			p50, p99 = m.P50Ms, m.P99Ms
		}
		fmt.Fprintf(w, "| %d | %s | %s | %s | %s | %d | %s |\n", m.Round, m.Target, thousands(m.UnitsPerSec),
			msCell(p50), msCell(p99), m.Errors, strings.Join(cells, ", "))
	}
	fmt.Fprintln(w)

	hr := r.peer(peerHydraRefresh)
	hi := r.peer(peerHydraIntrospect)
	anon, bearer := r.peer(peerFRISAnonymous), r.peer(peerFRISBearer)
	fmt.Fprintln(w, "| variant | a response carries | server | responses/s | server CPU per response (rounds) | Hydra ÷ this | (Hydra + Postgres) ÷ this | target (on Hydra alone) |")
	fmt.Fprintln(w, "|---|---|---|---:|---:|---:|---:|---|")
	row := func(s *PeerSummary, carries string, ref *PeerSummary, target float64) {
		if s == nil {
			return
		}
		var rounds []string
		for _, c := range s.RoundCPU {
			rounds = append(rounds, fmt.Sprintf("%.0f", c))
		}
		ratio, withStore, verdict := "", "", ""
		cpuCell := thousands(s.CPUMicros) + " µs"
		if s.StoreCPU > 0 {
			cpuCell += fmt.Sprintf(" + Postgres %s µs", thousands(s.StoreCPU))
		}
		if ref != nil && s.CPUMicros > 0 && ref != s {
			x := ref.CPUMicros / s.CPUMicros
			ratio = fmt.Sprintf("**%.2f×**", x)
			if ref.StoreCPU > 0 {
				withStore = fmt.Sprintf("%.2f×", (ref.CPUMicros+ref.StoreCPU)/s.CPUMicros)
			}
			if target > 0 {
				verdict = fmt.Sprintf("≥ %g×: %s", target, metWord(x >= target))
			}
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s (%s) | %s | %s | %s |\n", s.Name, carries, strings.Join(s.Servers, "+"),
			thousands(s.UnitsPerSec), cpuCell, strings.Join(rounds, ", "), ratio, withStore, verdict)
	}
	row(r.peer(peerFRISRefresh), r.Carried[peerFRISRefresh], hr, peerRefreshTarget)
	row(r.peer(peerFRISRefreshOAuth), r.Carried[peerFRISRefreshOAuth], hr, peerRefreshTarget)
	row(r.peer(peerFRISRefreshES256), r.Carried[peerFRISRefreshES256], hr, peerES256Target)
	row(hr, r.Carried[peerHydraRefresh], hr, 0)
	row(r.peer(peerFRISIntrospect), "introspection answer", hi, 0)
	row(hi, "introspection answer", hi, 0)
	if bearer != nil && hi != nil && bearer.CPUMicros > 0 {
		// The gateway's own check, judged on the whole request (HTTP
		// included, as Hydra's introspection is); the difference to the
		// same request without a token is the verification alone.
		x := hi.CPUMicros / bearer.CPUMicros
		withStore := ""
		if hi.StoreCPU > 0 {
			withStore = fmt.Sprintf("%.1f×", (hi.CPUMicros+hi.StoreCPU)/bearer.CPUMicros)
		}
		diff := ""
		if anon != nil {
			diff = fmt.Sprintf("; without a token %.0f µs, the verification ≈ %.0f µs", anon.CPUMicros, bearer.CPUMicros-anon.CPUMicros)
		}
		fmt.Fprintf(w, "| %s (403 insufficient_scope after verifying) | – | gateway | %s | %.0f µs%s | **%.1f×** | %s | ≥ %g×: %s |\n",
			bearer.Name, thousands(bearer.UnitsPerSec), bearer.CPUMicros, diff, x, withStore, float64(peerVerifyTarget), metWord(x >= peerVerifyTarget))
	}
}

func metWord(ok bool) string {
	if ok {
		return "met"
	}
	return "missed"
}
