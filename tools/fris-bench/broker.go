package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
	"golang.org/x/sync/errgroup"

	"fris.dev/pkg/rpcclient"
	brokerv1 "fris.dev/proto/broker/v1"
)

// BrokerReport is the broker suite: many registered banks polling
// GET /inquiries at a fixed total rate, as the sites' connectors do (each
// once a second).
type BrokerReport struct {
	Banks     int          `json:"banks"`
	Sites     int          `json:"sites"`
	Inquiries int          `json:"inquiries"`
	Rate      int          `json:"rate_per_sec"`
	Scenario  Scenario     `json:"scenario"`
	Result    *Measurement `json:"result"`
	MaxP99Ms  float64      `json:"max_p99_ms"`
	Met       bool         `json:"met"`
}

const brokerQuery = `<Query xmlns="http://schema.samply.de/common/Query"><Where><IsNotNull><MdrKey xmlns="http://schema.samply.de/common/MdrKey">urn:mdr16:dataelement:23:1</MdrKey></IsNotNull></Where></Query>`

// runBroker registers the banks through the public API, approves them
// through the admin gRPC API, releases inquiries for their sites, then
// attacks: open loop at the rate, the banks' tokens in turn.
func runBroker(ctx context.Context, cfg config, cpu *cpuWatch, stderr io.Writer) (*BrokerReport, error) {
	rep := &BrokerReport{Banks: cfg.brokerBanks, Sites: cfg.brokerSites, Inquiries: cfg.brokerInquiries, Rate: cfg.brokerRate, MaxP99Ms: ms(cfg.brokerMaxP99)}
	transport, err := cfg.brokerTLS.DialOption()
	if err != nil {
		return nil, fmt.Errorf("-broker-admin: %w", err)
	}
	cc, err := rpcclient.Dial(cfg.brokerAdmin, transport)
	if err != nil {
		return nil, err
	}
	defer cc.Close()
	admin := brokerv1.NewBrokerAdminClient(cc)
	run := fmt.Sprintf("%d", time.Now().UnixNano())
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 32, Proxy: nil}}
	defer client.CloseIdleConnections()

	fmt.Fprintf(stderr, "fris-bench: broker: registering and approving %d banks over %d sites\n", cfg.brokerBanks, cfg.brokerSites)
	tokens := make([]string, cfg.brokerBanks)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(16)
	for i := range tokens {
		g.Go(func() error {
			email := fmt.Sprintf("bank-%d-%s@bench.example", i, run)
			req, _ := http.NewRequestWithContext(gctx, http.MethodPut, cfg.gateway+"/broker/rest/searchbroker/banks/"+email, nil)
			res, err := client.Do(req)
			if err != nil {
				return err
			}
			body, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if res.StatusCode != http.StatusCreated {
				return fmt.Errorf("register %s: %d %s", email, res.StatusCode, body)
			}
			tokens[i] = string(body)
			_, err = admin.ApproveBank(gctx, &brokerv1.ApproveBankRequest{Email: email, SiteId: benchSite(i % cfg.brokerSites)})
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, fmt.Errorf("broker set-up: %w", err)
	}
	sites := make([]string, cfg.brokerSites)
	for i := range sites {
		sites[i] = benchSite(i)
	}
	for i := 0; i < cfg.brokerInquiries; i++ {
		in, err := admin.CreateInquiry(ctx, &brokerv1.CreateInquiryRequest{Author: "fris-bench", Content: &brokerv1.InquiryContent{
			Label: fmt.Sprintf("bench inquiry %d", i), Query: brokerQuery, Contact: &brokerv1.Contact{Lastname: "Bench"}, TargetSites: sites,
		}})
		if err != nil {
			return nil, fmt.Errorf("broker set-up: %w", err)
		}
		if _, err := admin.ReleaseInquiry(ctx, &brokerv1.ReleaseInquiryRequest{Id: in.GetId()}); err != nil {
			return nil, fmt.Errorf("broker set-up: %w", err)
		}
	}
	// The broker's list cache lives a second: wait until a bank sees them all.
	listURL := cfg.gateway + "/broker/rest/searchbroker/inquiries"
	deadline := time.Now().Add(10 * time.Second)
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, listURL, nil)
		req.Header.Set("Authorization", "Samply "+tokens[0])
		res, err := client.Do(req)
		if err != nil {
			return nil, err
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode == http.StatusOK && bytes.Count(body, []byte("<Inquiry>")) >= cfg.brokerInquiries {
			break
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("broker set-up: the banks do not see the inquiries: %d %s", res.StatusCode, body)
		}
		time.Sleep(200 * time.Millisecond)
	}

	sc := Scenario{
		Name: fmt.Sprintf("open-%d/s", cfg.brokerRate), Method: http.MethodGet, Connections: cfg.brokerConnections,
		Rate: vegeta.Rate{Freq: cfg.brokerRate, Per: time.Second}, Warmup: cfg.warmup, Duration: cfg.brokerDuration, Timeout: 10 * time.Second,
	}
	rep.Scenario = sc
	var next atomic.Uint64
	tr := func(t *vegeta.Target) error {
		i := next.Add(1) - 1
		t.Method, t.URL = http.MethodGet, listURL
		t.Header = http.Header{"Authorization": {"Samply " + tokens[i%uint64(len(tokens))]}}
		return nil
	}
	var once sync.Once
	handle := func(r *vegeta.Result) outcome {
		bad := ""
		switch {
		case r.Error != "" && r.Code == 0:
			bad = r.Error
		case r.Code != http.StatusOK:
			bad = fmt.Sprintf("status %d", r.Code)
		case bytes.Count(r.Body, []byte("<Inquiry>")) != cfg.brokerInquiries:
			bad = "the list lacks inquiries"
			once.Do(func() { fmt.Fprintf(stderr, "fris-bench: broker: unexpected list: %s\n", r.Body) })
		}
		return outcome{bad: bad, unit: bad == ""}
	}
	fmt.Fprintf(stderr, "fris-bench: broker: %d banks polling GET /inquiries, %d/s in all, %s warm-up + %s\n", cfg.brokerBanks, cfg.brokerRate, sc.Warmup, sc.Duration)
	m := sc.Run(ctx, tr, handle, cpu)
	m.Path, m.Target, m.URL = "/broker/rest/searchbroker/inquiries", "broker", listURL
	rep.Result = m
	rep.Met = m.Errors == 0 && m.WarmupErrors == 0 && m.P99Ms < ms(cfg.brokerMaxP99) && m.ReqPerSec >= 0.99*float64(cfg.brokerRate)
	return rep, nil
}

func benchSite(i int) string { return fmt.Sprintf("bench-site-%03d", i) }

func writeBroker(w io.Writer, b *BrokerReport, cpu *cpuWatch) {
	m := b.Result
	fmt.Fprintf(w, "#### Banks polling the broker (suite %s)\n\n", suiteBroker)
	fmt.Fprintf(w, "%d registered, approved banks over %d sites, %d released inquiries addressed to every site; `GET /broker/rest/searchbroker/inquiries` with `Authorization: Samply <token>`, each bank in turn: open loop at %d requests/s (every bank once a second), up to %d connections, %s warm-up + %s measured.\n\n",
		b.Banks, b.Sites, b.Inquiries, b.Rate, b.Scenario.Connections, b.Scenario.Warmup, b.Scenario.Duration)
	fmt.Fprintln(w, "| sent/s | served/s | p50 | p90 | p99 | max | errors |")
	fmt.Fprintln(w, "|---:|---:|---:|---:|---:|---:|---:|")
	fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %d |\n", thousands(m.SentPerSec), thousands(m.ReqPerSec),
		msCell(m.P50Ms), msCell(m.P90Ms), msCell(m.P99Ms), msCell(m.MaxMs), m.Errors+m.WarmupErrors)
	fmt.Fprintf(w, "\nTarget: all %d polls a second served, p99 under %s, no errors: %s\n", b.Rate, msCell(b.MaxP99Ms), verdict(b.Met))
	cpuTable(w, cpu, "request", m)
}
