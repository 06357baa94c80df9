// Command testrun runs `go test -json` once per package, several at a
// time, and prints each package's result as it ends, whatever the order.
// One `go test` of many packages prints them in the order given, so a
// long package listed first (e2e) hides every other result until it ends;
// a package of its own per `go test` streams. A package that runs long
// reports each top-level test as it ends, a failed test's output comes at
// once, and a line every minute of silence says what is still running.
//
//	testrun [-parallel N] [-progress-after D] -- [go test flags] PATTERN...
//
// go test's flags come in their -flag=value form: the first argument that
// does not start with "-" is the first pattern.
//
// Packages run in the order `go list` gives them (start the longest
// first); packages without tests are not run (go vet compiles them). It
// ends with go test's closing word, ok or FAIL, and exits 1 on a failure.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// msg is what a package's runner hands the printer: an event of its
// `go test`, or the end of the process.
type msg struct {
	ev     *event
	pkg    string
	done   bool
	err    error
	stderr string
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("testrun", flag.ContinueOnError)
	fs.SetOutput(stderr)
	parallel := fs.Int("parallel", runtime.NumCPU(), "packages tested at once (go test's -p default)")
	progressAfter := fs.Duration("progress-after", 20*time.Second, "a package running this long reports each top-level test as it ends")
	quiet := fs.Duration("heartbeat", time.Minute, "after this long without output, say what is still running")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	// go test's flags, then the patterns: everything after the first
	// argument that is not a flag of go test's (after --, if any).
	var testFlags, patterns []string
	for _, a := range fs.Args() {
		if strings.HasPrefix(a, "-") && len(patterns) == 0 {
			testFlags = append(testFlags, a)
		} else {
			patterns = append(patterns, a)
		}
	}
	if len(patterns) == 0 {
		fmt.Fprintln(stderr, "testrun: no packages given")
		return 2
	}
	pkgs, err := testPackages(ctx, patterns)
	if err != nil {
		fmt.Fprintf(stderr, "testrun: %v\n", err)
		return 1
	}

	start := time.Now()
	rep := newReporter(stdout, *progressAfter, time.Now)
	msgs := make(chan msg)
	jobs := make(chan string)
	var wg sync.WaitGroup
	for range max(*parallel, 1) {
		wg.Go(func() {
			for p := range jobs {
				testPackage(ctx, p, testFlags, msgs)
			}
		})
	}
	waiting := len(pkgs)
	var mu sync.Mutex
	go func() {
		for _, p := range pkgs {
			jobs <- p
			mu.Lock()
			waiting--
			mu.Unlock()
		}
		close(jobs)
		wg.Wait()
		close(msgs)
	}()
	tick := time.NewTicker(5 * time.Second)
	defer tick.Stop()
	for {
		select {
		case m, ok := <-msgs:
			if !ok {
				if !rep.summary(time.Since(start)) || ctx.Err() != nil {
					return 1
				}
				return 0
			}
			if m.done {
				rep.processEnded(m.pkg, m.err, m.stderr)
			} else {
				rep.handle(*m.ev)
			}
		case <-tick.C:
			mu.Lock()
			w := waiting
			mu.Unlock()
			rep.heartbeat(*quiet, time.Since(start), w)
		}
	}
}

// testPackages lists the packages of the patterns that have tests.
func testPackages(ctx context.Context, patterns []string) ([]string, error) {
	args := append([]string{"list", "-f", "{{if or .TestGoFiles .XTestGoFiles}}{{.ImportPath}}{{end}}"}, patterns...)
	out, err := exec.CommandContext(ctx, "go", args...).Output()
	if err != nil {
		if ee, ok := errors.AsType[*exec.ExitError](err); ok {
			return nil, fmt.Errorf("go list: %v\n%s", err, ee.Stderr)
		}
		return nil, fmt.Errorf("go list: %v", err)
	}
	return strings.Fields(string(out)), nil
}

// testPackage runs `go test -json` of one package and hands its events on.
func testPackage(ctx context.Context, pkg string, flags []string, msgs chan<- msg) {
	args := append(append([]string{"test", "-json"}, flags...), pkg)
	cmd := exec.CommandContext(ctx, "go", args...)
	// Interrupted: go test stops its test binary and reports; kill only
	// if it does not end.
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 30 * time.Second
	var errBuf bytes.Buffer
	cmd.Stderr = &errBuf
	out, err := cmd.StdoutPipe()
	if err == nil {
		err = cmd.Start()
	}
	if err != nil {
		msgs <- msg{pkg: pkg, done: true, err: err}
		return
	}
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 0, 64*1024), 64*1024*1024)
	for sc.Scan() {
		var e event
		if json.Unmarshal(sc.Bytes(), &e) != nil || e.Action == "" {
			// Not an event (go's own messages): keep it with the package.
			e = event{Action: "output", Package: pkg, Output: sc.Text() + "\n"}
		}
		msgs <- msg{ev: &e}
	}
	err = cmd.Wait()
	msgs <- msg{pkg: pkg, done: true, err: err, stderr: errBuf.String()}
}
