package main

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"
)

// event is one line of `go test -json` (cmd/test2json, plus the build
// events of Go 1.24 on).
type event struct {
	Time       time.Time
	Action     string
	Package    string
	ImportPath string // build-output, build-fail
	Test       string
	Elapsed    float64
	Output     string
}

// reporter turns the events of several packages' runs, interleaved, into
// what a reader needs while it runs: each package's ok or FAIL line as the
// package ends, a failed test's output at once, each top-level test's end
// in a package that has run long, and a summary at the end.
type reporter struct {
	w io.Writer
	// progressAfter: a package that has run this long reports each
	// top-level test as it ends, so a long package (e2e) shows progress.
	progressAfter time.Duration
	now           func() time.Time

	pkgs      map[string]*pkgState
	lastPrint time.Time

	passed, failed, skipped int // tests, subtests included
	okPkgs, noTestPkgs      int
	failPkgs                []string
	failTests               []string // "pkg TestX"
}

type pkgState struct {
	start time.Time
	out   []string            // output outside any test
	tests map[string][]string // output of each running top-level test
	// paused are the top-level tests waiting in t.Parallel for their
	// turn: started, not running.
	paused map[string]bool
	done   int // top-level tests ended
	ended  bool
}

func newReporter(w io.Writer, progressAfter time.Duration, now func() time.Time) *reporter {
	return &reporter{w: w, progressAfter: progressAfter, now: now, pkgs: map[string]*pkgState{}, lastPrint: now()}
}

func (r *reporter) printf(format string, a ...any) {
	fmt.Fprintf(r.w, format, a...)
	r.lastPrint = r.now()
}

func (r *reporter) pkg(name string) *pkgState {
	p := r.pkgs[name]
	if p == nil {
		p = &pkgState{start: r.now(), tests: map[string][]string{}, paused: map[string]bool{}}
		r.pkgs[name] = p
	}
	return p
}

// handle takes one event of one package's run.
func (r *reporter) handle(e event) {
	switch e.Action {
	case "build-output":
		// Compiler errors: the package's fail event follows.
		r.printf("%s", e.Output)
		return
	case "build-fail":
		return
	}
	if e.Package == "" {
		return
	}
	p := r.pkg(e.Package)
	top, _, sub := strings.Cut(e.Test, "/")
	switch e.Action {
	case "start":
		p.start = r.now()
	case "run":
		if e.Test != "" && !sub {
			p.tests[top] = nil
		}
	case "pause", "cont":
		if e.Test != "" && !sub {
			p.paused[top] = e.Action == "pause"
		}
	case "output":
		if e.Test == "" {
			p.out = append(p.out, e.Output)
		} else {
			p.tests[top] = append(p.tests[top], e.Output)
		}
	case "pass", "fail", "skip":
		if e.Test == "" {
			r.endPackage(e, p)
		} else {
			r.endTest(e, p, top, sub)
		}
	}
}

func (r *reporter) endTest(e event, p *pkgState, top string, sub bool) {
	switch e.Action {
	case "pass":
		r.passed++
	case "fail":
		r.failed++
	case "skip":
		r.skipped++
	}
	if sub {
		return
	}
	out := p.tests[top]
	delete(p.tests, top)
	delete(p.paused, top)
	p.done++
	switch {
	case e.Action == "fail":
		r.failTests = append(r.failTests, e.Package+" "+top)
		r.printf("--- FAIL: %s %s (%.2fs)\n%s", e.Package, top, e.Elapsed, strings.Join(out, ""))
	case r.now().Sub(p.start) >= r.progressAfter:
		r.printf("    %s: %s %s (%.2fs)\n", e.Package, strings.ToUpper(e.Action), top, e.Elapsed)
	}
}

func (r *reporter) endPackage(e event, p *pkgState) {
	if p.ended {
		return
	}
	p.ended = true
	switch e.Action {
	case "pass":
		r.okPkgs++
		r.printf("%s", lineOr(p.out, "ok  \t"+e.Package+"\t", fmt.Sprintf("ok  \t%s\t%.3fs\n", e.Package, e.Elapsed)))
	case "skip":
		r.noTestPkgs++
		r.printf("?   \t%s\t[no test files]\n", e.Package)
	case "fail":
		r.failPkgs = append(r.failPkgs, e.Package)
		// Tests still running when the package failed (a panic, the
		// timeout): their output says where it was.
		for _, name := range slices.Sorted(maps.Keys(p.tests)) {
			r.printf("--- unfinished: %s %s\n%s", e.Package, name, strings.Join(p.tests[name], ""))
		}
		var b strings.Builder
		for _, l := range p.out {
			// The binary's own PASS/FAIL lines add nothing here.
			if l != "PASS\n" && l != "FAIL\n" && !strings.HasPrefix(l, "FAIL\t"+e.Package+"\t") {
				b.WriteString(l)
			}
		}
		r.printf("%s", b.String())
		r.printf("FAIL\t%s\t%.3fs\n", e.Package, e.Elapsed)
	}
}

// processEnded notes that the `go test` of pkg exited; when it said nothing
// about the package (it failed before running it), its stderr is the
// reason.
func (r *reporter) processEnded(pkg string, err error, stderr string) {
	p := r.pkg(pkg)
	if p.ended {
		if err != nil && stderr != "" {
			r.printf("%s", stderr)
		}
		return
	}
	if stderr != "" {
		p.out = append(p.out, stderr)
	}
	if err != nil {
		p.out = append(p.out, fmt.Sprintf("go test: %v\n", err))
	}
	r.endPackage(event{Action: "fail", Package: pkg}, p)
}

// heartbeat says what is still running when nothing was printed for
// quiet, so a long run never looks hung.
func (r *reporter) heartbeat(quiet, elapsed time.Duration, waiting int) {
	if r.now().Sub(r.lastPrint) < quiet {
		return
	}
	var running []string
	for _, name := range slices.Sorted(maps.Keys(r.pkgs)) {
		p := r.pkgs[name]
		if p.ended {
			continue
		}
		var tests []string
		for _, name := range slices.Sorted(maps.Keys(p.tests)) {
			if !p.paused[name] {
				tests = append(tests, name)
			}
		}
		if len(tests) > 3 {
			tests = append(tests[:3], "...")
		}
		s := fmt.Sprintf("%s (%d tests done", name, p.done)
		if len(tests) > 0 {
			s += "; running " + strings.Join(tests, ", ")
		}
		running = append(running, s+")")
	}
	r.printf("test: still running after %s: %s; %d packages done, %d waiting\n",
		elapsed.Round(time.Second), strings.Join(running, ", "), r.okPkgs+r.noTestPkgs+len(r.failPkgs), waiting)
}

// summary ends the run: the failures again, where a reader looks first,
// and go test's closing word (ok or FAIL).
func (r *reporter) summary(elapsed time.Duration) bool {
	for _, t := range r.failTests {
		r.printf("--- FAIL: %s\n", t)
	}
	for _, p := range r.failPkgs {
		r.printf("FAIL\t%s\n", p)
	}
	r.printf("test: %d packages ok, %d failed; %d tests passed, %d failed, %d skipped; %s\n",
		r.okPkgs, len(r.failPkgs), r.passed, r.failed, r.skipped, elapsed.Round(time.Second))
	if len(r.failPkgs) > 0 {
		r.printf("FAIL\n")
		return false
	}
	r.printf("ok\n")
	return true
}

// lineOr is the first line of out with the prefix, else def.
func lineOr(out []string, prefix, def string) string {
	for _, l := range out {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return def
}
