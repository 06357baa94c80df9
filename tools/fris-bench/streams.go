package main

import (
	"bufio"
	"context"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// StreamsReport is the streams suite: many open Explorer results streams
// of one inquiry while its banks reply, the gateway's CPU per event they
// receive, and the processes' memory before, while and after they are
// open.
type StreamsReport struct {
	Streams int `json:"streams"`
	Sources int `json:"sources"`
	Replies int `json:"replies"`
	// Events are the results events the streams received during the
	// replies (Streams × Replies when none was skipped).
	Events int64 `json:"events"`
	// GatewayCPU is the gateway's CPU during the replies; IdleCPUPerS its
	// CPU per second with the streams open and no reply (their session
	// checks and keep-alives), measured before.
	GatewayCPUMs  float64 `json:"gateway_cpu_ms"`
	ReplyPhaseS   float64 `json:"reply_phase_s"`
	IdleCPUMsPerS float64 `json:"idle_cpu_ms_per_s"`
	UsPerEvent    float64 `json:"gateway_us_per_event"`
	UsPerEventNet float64 `json:"gateway_us_per_event_net_of_idle"`
	UsPerReply    float64 `json:"gateway_us_per_reply"`
	IdleAfterS    float64 `json:"idle_after_s"`
	// RSSMiB and TotalMiB: before, with the streams open, after the
	// replies, and IdleAfterS after the streams closed.
	RSSMiB         map[string][4]float64 `json:"rss_mib"`
	TotalMiB       [4]float64            `json:"total_mib"`
	TargetIdleMiB  float64               `json:"target_idle_mib"`
	TargetAfterMiB float64               `json:"target_after_mib"`
	IdleMet        bool                  `json:"idle_met"`
	AfterMet       bool                  `json:"after_met"`
}

// envBankTokens holds the banks that reply: email=token,email=token.
const envBankTokens = "FRIS_BENCH_BANK_TOKENS"

// runStreams signs in to the Explorer as the user, opens -streams results
// streams of -streams-inquiry from -streams-sources loopback addresses (a
// browser's tabs), waits for each one's first results, then has the banks
// reply -streams-replies times, each after every stream received the last.
func runStreams(ctx context.Context, cfg config, cpu *cpuWatch, stderr io.Writer) (*StreamsReport, error) {
	rep := &StreamsReport{Streams: cfg.streams, Sources: cfg.streamsSources, Replies: cfg.streamsReplies, RSSMiB: map[string][4]float64{},
		TargetIdleMiB: cfg.streamsIdleTarget, TargetAfterMiB: cfg.streamsAfterTarget}
	banks, err := parseBanks(os.Getenv(envBankTokens))
	if err != nil {
		return nil, err
	}
	jar, err := explorerSignIn(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("streams: Explorer sign-in: %w", err)
	}
	// The sign-in hashed a password; argon2's buffers go back 2 s later.
	sleep(ctx, 5*time.Second)
	rss := func(i int) {
		var total float64
		for _, p := range cpu.procs {
			v := rep.RSSMiB[p.name]
			v[i] = vmRSS(p.pid)
			rep.RSSMiB[p.name] = v
			total += v[i]
		}
		rep.TotalMiB[i] = total
	}
	rss(0)

	sctx, closeStreams := context.WithCancel(ctx)
	defer closeStreams()
	var events atomic.Int64
	first := make(chan error, cfg.streams)
	var wg sync.WaitGroup
	hcs := make([]*http.Client, cfg.streamsSources)
	for i := range hcs {
		c, err := guessClient(attackSource(40, i))
		if err != nil {
			return nil, err
		}
		c.Timeout, c.Jar = 0, jar // a stream is long
		hcs[i] = c
		defer c.CloseIdleConnections()
	}
	fmt.Fprintf(stderr, "fris-bench: streams: opening %d results streams of inquiry %s from %d addresses\n", cfg.streams, cfg.streamsInquiry, cfg.streamsSources)
	for i := range cfg.streams {
		wg.Go(func() {
			readStream(sctx, hcs[i%len(hcs)], cfg.gateway+"/explorer/inquiries/"+cfg.streamsInquiry+"/events", &events, func(err error) { first <- err })
		})
	}
	for range cfg.streams {
		if err := <-first; err != nil {
			closeStreams()
			wg.Wait()
			return nil, fmt.Errorf("streams: %w", err)
		}
	}
	sleep(ctx, 2*time.Second)
	rss(1)
	// What the open streams cost without replies: their session checks.
	c0 := cpu.sample()
	t0 := time.Now()
	sleep(ctx, 5*time.Second)
	c1 := cpu.sample()
	rep.IdleCPUMsPerS = float64(c1["gateway"]-c0["gateway"]) / float64(time.Millisecond) / time.Since(t0).Seconds()

	fmt.Fprintf(stderr, "fris-bench: streams: %d replies, each after every stream has the last\n", cfg.streamsReplies)
	client := &http.Client{Timeout: 10 * time.Second}
	defer client.CloseIdleConnections()
	e0 := events.Load()
	c0, t0 = cpu.sample(), time.Now()
	for r := 1; r <= cfg.streamsReplies; r++ {
		b := banks[r%len(banks)]
		req, _ := http.NewRequestWithContext(ctx, http.MethodPut, cfg.gateway+"/broker/rest/searchbroker/inquiries/"+cfg.streamsInquiry+"/replies/"+b.email,
			strings.NewReader(strconv.Itoa(1000+r)))
		req.Header.Set("Authorization", "Samply "+b.token)
		req.Header.Set("Content-Type", "text/plain")
		body, res, err := do(client, req)
		if err != nil {
			return nil, fmt.Errorf("streams: reply: %w", err)
		}
		if res.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("streams: reply: %s %s", res.Status, body)
		}
		want := e0 + int64(r*cfg.streams)
		for deadline := time.Now().Add(30 * time.Second); events.Load() < want; {
			if time.Now().After(deadline) {
				return nil, fmt.Errorf("streams: reply %d: %d of %d events arrived in 30 s", r, events.Load()-e0-int64((r-1)*cfg.streams), cfg.streams)
			}
			time.Sleep(time.Millisecond)
		}
	}
	c1 = cpu.sample()
	rep.ReplyPhaseS = time.Since(t0).Seconds()
	rep.Events = events.Load() - e0
	gw := c1["gateway"] - c0["gateway"]
	rep.GatewayCPUMs = float64(gw) / float64(time.Millisecond)
	rep.UsPerEvent = float64(gw) / float64(time.Microsecond) / float64(rep.Events)
	rep.UsPerEventNet = max(0, (rep.GatewayCPUMs-rep.IdleCPUMsPerS*rep.ReplyPhaseS)*1000/float64(rep.Events))
	rep.UsPerReply = float64(gw) / float64(time.Microsecond) / float64(rep.Replies)
	rss(2)

	closeStreams()
	wg.Wait()
	fmt.Fprintf(stderr, "fris-bench: streams: closed; idle for %s\n", cfg.streamsIdle)
	sleep(ctx, cfg.streamsIdle)
	rep.IdleAfterS = cfg.streamsIdle.Seconds()
	rss(3)
	rep.IdleMet = rep.TotalMiB[0] < rep.TargetIdleMiB
	rep.AfterMet = rep.TotalMiB[3] < rep.TargetAfterMiB
	return rep, nil
}

type benchBank struct{ email, token string }

func parseBanks(s string) ([]benchBank, error) {
	var out []benchBank
	for _, part := range strings.Split(s, ",") {
		e, t, ok := strings.Cut(strings.TrimSpace(part), "=")
		if ok && e != "" && t != "" {
			out = append(out, benchBank{e, t})
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("the streams suite needs $%s: email=token of the banks that reply, comma-separated", envBankTokens)
	}
	return out, nil
}

var hiddenField = regexp.MustCompile(`<input type="hidden" name="([^"]+)" value="([^"]*)">`)

// explorerSignIn signs the user in to the Explorer as a browser does (the
// sign-in's redirects, the login form) and returns the jar with the
// session cookie.
func explorerSignIn(ctx context.Context, cfg config) (http.CookieJar, error) {
	jar, err := cookiejar.New(nil)
	if err != nil {
		return nil, err
	}
	c := &http.Client{Jar: jar, Timeout: 30 * time.Second}
	defer c.CloseIdleConnections()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, cfg.gateway+"/explorer/login?return="+url.QueryEscape("/explorer/"), nil)
	body, res, err := do(c, req)
	if err != nil {
		return nil, err
	}
	if res.StatusCode != http.StatusOK || res.Request.URL.Path != authPrefix+"/authorize" {
		return nil, fmt.Errorf("sign-in start: %s at %s", res.Status, res.Request.URL.Path)
	}
	form := url.Values{"email": {cfg.creds.email}, "password": {cfg.creds.password}}
	for _, m := range hiddenField.FindAllSubmatch(body, -1) {
		form.Set(string(m[1]), html.UnescapeString(string(m[2])))
	}
	req, _ = http.NewRequestWithContext(ctx, http.MethodPost, cfg.gateway+authPrefix+"/authorize", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	_, res, err = do(c, req)
	if err != nil {
		return nil, err
	}
	if res.StatusCode != http.StatusOK || res.Request.URL.Path != "/explorer/" {
		return nil, fmt.Errorf("sign-in: %s at %s", res.Status, res.Request.URL.Path)
	}
	return jar, nil
}

// readStream opens one results stream, tells ready when its first
// results arrived (or why not), then counts its results events until ctx
// ends. A stream the gateway ends (its 5 minutes) is opened again, as
// EventSource does; the first results of each connection are its
// opening's, not a reply's, and are not counted.
func readStream(ctx context.Context, c *http.Client, u string, events *atomic.Int64, ready func(error)) {
	for opened := false; ; opened = true {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		req.Header.Set("Accept", "text/event-stream")
		res, err := c.Do(req)
		if err == nil && res.StatusCode != http.StatusOK {
			res.Body.Close()
			err = fmt.Errorf("events: %s", res.Status)
		}
		if err != nil {
			if !opened {
				ready(err)
			}
			return
		}
		r := bufio.NewReader(res.Body)
		first := true
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				break
			}
			if !strings.HasPrefix(line, "event: results") {
				continue
			}
			if first {
				first = false
				if !opened {
					ready(nil)
				}
				continue
			}
			events.Add(1)
		}
		res.Body.Close()
		if ctx.Err() != nil {
			return
		}
	}
}

// vmRSS is a process's resident memory in MiB (0 when it is gone).
func vmRSS(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
			return kb / 1024
		}
	}
	return 0
}

func writeStreams(w io.Writer, s *StreamsReport, cpu *cpuWatch) {
	fmt.Fprintf(w, "%d results streams of one inquiry, one Explorer session, from %d loopback addresses; %d bank replies, each after every stream received the last.\n\n", s.Streams, s.Sources, s.Replies)
	fmt.Fprintln(w, "| | events received | gateway CPU | per event | per event, net of idle | per reply (all streams) | idle CPU with streams open |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|")
	fmt.Fprintf(w, "| replies | %d | %.0f ms in %.1f s | %.1f µs | %.1f µs | %.0f µs | %.1f ms/s |\n\n", s.Events, s.GatewayCPUMs, s.ReplyPhaseS, s.UsPerEvent, s.UsPerEventNet, s.UsPerReply, s.IdleCPUMsPerS)
	fmt.Fprintln(w, "| process | VmRSS before | streams open | after the replies | "+fmt.Sprintf("%.0f s after closing |", s.IdleAfterS))
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|")
	for _, p := range cpu.procs {
		v := s.RSSMiB[p.name]
		fmt.Fprintf(w, "| %s | %.1f MiB | %.1f MiB | %.1f MiB | %.1f MiB |\n", p.name, v[0], v[1], v[2], v[3])
	}
	t := s.TotalMiB
	fmt.Fprintf(w, "| **total** | **%.1f MiB** | %.1f MiB | %.1f MiB | **%.1f MiB** |\n\n", t[0], t[1], t[2], t[3])
	fmt.Fprintf(w, "Targets: idle under %.0f MiB: %s; under %.0f MiB %.0f s after the streams closed: %s.\n",
		s.TargetIdleMiB, metText(s.IdleMet), s.TargetAfterMiB, s.IdleAfterS, metText(s.AfterMet))
}

func metText(ok bool) string {
	if ok {
		return "met"
	}
	return "NOT met"
}
