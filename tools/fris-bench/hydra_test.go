package main

import (
	"encoding/base64"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

func TestHydraSuiteFlags(t *testing.T) {
	base := []string{"-client-id", "c", "-client-secret", "s", "-user-email", "u@x", "-user-password", "p"}
	if _, err := parseFlags(append([]string{"-suites", "hydra"}, base...), io.Discard); err == nil {
		t.Error("hydra suite without -hydra-public and -hydra-admin accepted")
	}
	if _, err := parseFlags(append([]string{"-suites", "hydra", "-hydra-public", "http://example.com:4444", "-hydra-admin", "http://127.0.0.1:4445"}, base...), io.Discard); err == nil {
		t.Error("hydra suite with a remote Hydra accepted")
	}
	c, err := parseFlags(append([]string{"-suites", "hydra", "-hydra-public", "http://127.0.0.1:4444", "-hydra-admin", "http://127.0.0.1:4445"}, base...), io.Discard)
	if err != nil || !c.has(suiteHydra) {
		t.Fatalf("hydra suite: %v, suites %v", err, c.suites)
	}
	// Later checks fail (the upload suite wants a password); the suites are
	// chosen before them.
	c, _ = parseFlags(append([]string{"-suites", "all", "/p"}, base...), io.Discard)
	if c.has(suiteHydra) || !c.has(suiteStreams) {
		t.Errorf("-suites all: suites %v, want every suite but hydra", c.suites)
	}
}

func TestSummarizePeerCountsEachSidesServers(t *testing.T) {
	ms := []*Measurement{
		{Target: peerFRISRefresh, Round: 1, UnitsPerSec: 100, CPUMicrosPerUnit: map[string]float64{"gateway": 300, "auth": 1000, "hydra": 5, "fris-bench": 50}},
		{Target: peerHydraRefresh, Round: 1, UnitsPerSec: 50, CPUMicrosPerUnit: map[string]float64{"gateway": 1, "auth": 1, "hydra": 4000}},
		{Target: peerFRISRefresh, Round: 2, UnitsPerSec: 200, CPUMicrosPerUnit: map[string]float64{"gateway": 100, "auth": 1200}},
		{Target: peerHydraRefresh, Round: 2, UnitsPerSec: 70, CPUMicrosPerUnit: map[string]float64{"hydra": 3000}},
		{Target: peerFRISBearer, Round: 1, CPUMicrosPerUnit: map[string]float64{"gateway": 80, "auth": 9}},
	}
	r := &HydraReport{Summary: summarizePeer(ms)}
	f, h, b := r.peer(peerFRISRefresh), r.peer(peerHydraRefresh), r.peer(peerFRISBearer)
	if f == nil || h == nil || b == nil {
		t.Fatalf("summary %+v", r.Summary)
	}
	if f.CPUMicros != 1300 || f.UnitsPerSec != 150 || len(f.RoundCPU) != 2 {
		t.Errorf("FRIS refresh: %+v, want gateway+auth 1300 µs at 150/s over 2 rounds", f)
	}
	if h.CPUMicros != 3500 {
		t.Errorf("Hydra refresh: %v µs, want hydra's alone, 3500", h.CPUMicros)
	}
	if b.CPUMicros != 80 {
		t.Errorf("bearer read: %v µs, want the gateway's alone, 80", b.CPUMicros)
	}
}

func TestCarriedNamesOpaqueTokens(t *testing.T) {
	jws := func(alg string) string {
		return base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"`+alg+`"}`)) + ".e30.sig"
	}
	got := carried(tokenSet{Access: jws("RS256"), ID: jws("RS256"), Refresh: "ory_rt_abc.def"})
	if got != "access RS256, id RS256, refresh opaque" {
		t.Errorf("carried = %q", got)
	}
	if got := carried(tokenSet{Access: jws("RS256"), Refresh: jws("EdDSA")}); !strings.Contains(got, "no id") {
		t.Errorf("carried = %q, want no id", got)
	}
}

func TestWatchTreeCountsChildren(t *testing.T) {
	w, err := parseWatch("me=+" + strconv.Itoa(os.Getpid()))
	if err != nil || len(w.procs) != 1 || !w.procs[0].tree {
		t.Fatalf("parseWatch: %+v, %v", w, err)
	}
	// Burn some CPU in a child, reap it: the tree's time includes it.
	before, err := treeCPU(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	own, _ := procCPU(os.Getpid())
	if err := exec.Command("sh", "-c", "i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done").Run(); err != nil {
		t.Fatal(err)
	}
	after, err := treeCPU(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	ownAfter, _ := procCPU(os.Getpid())
	if after-before <= ownAfter-own {
		t.Errorf("tree CPU grew by %v, own by %v: the reaped child is not counted", after-before, ownAfter-own)
	}
}
