package main

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"
)

func TestAnswerCellsMostFrequentFirst(t *testing.T) {
	got := answerCells(map[string]int64{"401": 3, "429": 40, "error": 3})
	if want := "429×40, 401×3, error×3"; got != want {
		t.Fatalf("answerCells = %q, want %q", got, want)
	}
	if got := answerCells(nil); got != "none answered" {
		t.Fatalf("answerCells(nil) = %q", got)
	}
}

// paced never sends faster than its rate: 50/s for 200 ms is about 10
// sends, never hundreds, however fast send is.
func TestPacedKeepsItsRate(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	var n atomic.Int64
	paced(ctx, 4, 50, func(context.Context, int) { n.Add(1) })
	if got := n.Load(); got < 1 || got > 11 {
		t.Fatalf("%d sends at 50/s in 200 ms, want 1..11", got)
	}
}

func TestTallyCountsAnswersAndErrors(t *testing.T) {
	tl := &tally{answers: map[string]int64{}}
	tl.answer(429, nil)
	tl.answer(429, nil)
	tl.answer(0, errors.New("reset"))
	if tl.sent.Load() != 3 || tl.answers["429"] != 2 || tl.answers["error"] != 1 {
		t.Fatalf("tally = %d %v", tl.sent.Load(), tl.answers)
	}
}

func TestAttackFlags(t *testing.T) {
	if _, err := parseFlags([]string{"-suites", "attack", "-client-id", "c", "-client-secret", "s", "-user-email", "e", "-user-password", "p"}, &discard{}); err == nil {
		t.Fatal("the attack suite without -upload-password was accepted")
	}
	c, err := parseFlags([]string{"-suites", "attack", "-client-id", "c", "-client-secret", "s", "-user-email", "e", "-user-password", "p",
		"-upload-password", "u", "-attacks", "bodies, slow"}, &discard{})
	if err != nil {
		t.Fatal(err)
	}
	if !c.attacks["bodies"] || !c.attacks["slow"] || len(c.attacks) != 2 {
		t.Fatalf("-attacks = %v", c.attacks)
	}
}

func TestAttacksAreNamed(t *testing.T) {
	all, err := attacks(config{gateway: "http://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != len(attackNames) {
		t.Fatalf("%d attacks, %d names", len(all), len(attackNames))
	}
	for i, a := range all {
		if a.name != attackNames[i] {
			t.Errorf("attack %d is %q, its name %q", i, a.name, attackNames[i])
		}
	}
	if _, err := parseFlags([]string{"-suites", "attack", "-client-id", "c", "-client-secret", "s", "-user-email", "e", "-user-password", "p",
		"-upload-password", "u", "-attacks", "nuke"}, &discard{}); err == nil {
		t.Fatal("an unknown attack was accepted")
	}
}

type discard struct{}

func (*discard) Write(b []byte) (int, error) { return len(b), nil }
