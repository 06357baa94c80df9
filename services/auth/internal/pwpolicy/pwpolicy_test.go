package pwpolicy

import (
	"errors"
	"runtime"
	"strings"
	"testing"
)

func mustNew(t *testing.T, min int, common bool) *Policy {
	t.Helper()
	p, err := New(min, common)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func ruleOf(err error) Rule {
	var r *Refusal
	if errors.As(err, &r) {
		return r.Rule
	}
	return ""
}

func TestCheck(t *testing.T) {
	p := mustNew(t, DefaultMinLength, true)
	const email = "Ada.Lovelace@Example.org"
	for _, tc := range []struct {
		name, pw string
		want     Rule
	}{
		{"empty", "", TooShort},
		{"eleven", "abcdefghijk", TooShort},
		{"twelve", "mzq-vbx-rtkw", ""},
		// Characters, not bytes: 11 code points are 22 bytes here, 12 pass.
		{"eleven umlauts", strings.Repeat("ü", 11), TooShort},
		{"twelve umlauts", "ÄÖÜäöüßẞéèêë", ""},
		{"emoji count one each", strings.Repeat("🐴", 12), ""},
		{"common", "1q2w3e4r5t6y", Common},
		{"common other case", "1Q2W3E4R5T6Y", Common},
		{"common long", "qwertyuiopasdfghjkl", Common},
		{"email", "ada.lovelace@example.org", IsEmail},
		{"email other case", "ADA.LOVELACE@EXAMPLE.ORG", IsEmail},
		{"local part", "ADA.lovelace", IsEmail},
		{"email inside a longer one", "ada.lovelace@example.org!", ""},
		{"short beats common", "password", TooShort},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := p.Check(tc.pw, email)
			if got := ruleOf(err); got != tc.want {
				t.Fatalf("Check(%q) = %v (rule %q), want rule %q", tc.pw, err, got, tc.want)
			}
			if err != nil && err.Error() == "" {
				t.Error("a refusal without a message")
			}
		})
	}
}

func TestCheckWithoutEmail(t *testing.T) {
	p := mustNew(t, 8, false)
	if err := p.Check("password", ""); err != nil {
		t.Errorf("the list is off and the email unknown: %v", err)
	}
	if err := p.Check("seven!!", ""); ruleOf(err) != TooShort {
		t.Errorf("7 characters under -password-min-length 8: %v", err)
	}
	var r *Refusal
	if !errors.As(p.Check("short", ""), &r) || r.MinLength != 8 || !strings.Contains(r.Error(), "8 characters") {
		t.Errorf("the refusal names the least length: %+v", r)
	}
}

func TestNewRefusesNonsense(t *testing.T) {
	for _, n := range []int{0, -1, MaxMinLength + 1} {
		if _, err := New(n, false); err == nil {
			t.Errorf("New(%d) accepted", n)
		}
	}
}

// TestCommonList: the shipped list is SecLists' top 100,000 (NOTICE.md),
// whole: its first and last entries are refused, and it fits in well under
// the 5 MiB budget the policy was given.
func TestCommonList(t *testing.T) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	p := mustNew(t, 1, true)
	runtime.GC()
	runtime.ReadMemStats(&after)
	if n := p.CommonCount(); n < 95_000 || n > 100_000 {
		t.Errorf("%d distinct common passwords, want the list's 100,000 less those equal without case", n)
	}
	for _, pw := range []string{"123456", "password", "070162", "Soso123aljg", "aª»"} {
		if ruleOf(p.Check(pw, "")) != Common {
			t.Errorf("%q is on the list but not refused", pw)
		}
	}
	grown := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("the list takes %d KiB of heap", grown/1024)
	if grown > 5<<20 {
		t.Errorf("the list takes %d bytes of heap, want under 5 MiB", grown)
	}
	runtime.KeepAlive(p)
	if mustNew(t, 1, false).RefusesCommon() {
		t.Error("the list is off but RefusesCommon")
	}
}

func FuzzCheck(f *testing.F) {
	p, err := New(DefaultMinLength, true)
	if err != nil {
		f.Fatal(err)
	}
	f.Add("correct horse battery", "ada@example.org")
	f.Add("ada", "ada@")
	f.Add("", "@")
	f.Fuzz(func(t *testing.T, pw, email string) {
		err := p.Check(pw, email)
		if err != nil && ruleOf(err) == "" {
			t.Fatalf("a refusal of no rule: %v", err)
		}
		if strings.EqualFold(pw, strings.TrimSpace(email)) && email != "" && err == nil {
			t.Fatalf("the email %q accepted as the password", email)
		}
	})
}
