package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"
)

// writeMarkdown prints the results table, the verdict on the targets and,
// when measured, the CPU each process spent per request.
func writeMarkdown(w io.Writer, rep *Report, cpu *cpuWatch) {
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
	cell := func(v float64, ok bool) string {
		if !ok {
			return "–"
		}
		return fmt.Sprintf("%.0f", v)
	}
	for _, m := range rep.Results {
		cells := make([]string, len(names))
		total := 0.0
		for i, n := range names {
			v, ok := m.CPUMicrosPerReq[n]
			cells[i] = cell(v, ok)
			total += v
		}
		other, ok := m.CPUMicrosPerReq[otherName]
		fmt.Fprintf(w, "| `%s` | %s | %s | %.0f | %s |\n", m.Path, m.Target, strings.Join(cells, " | "), total, cell(other, ok))
	}
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
