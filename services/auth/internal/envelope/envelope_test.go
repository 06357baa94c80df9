package envelope

import (
	"bytes"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func secretOf(b byte) []byte { return bytes.Repeat([]byte{b}, SecretSize) }

func box(t *testing.T, secrets ...[]byte) *Box {
	t.Helper()
	b, err := New(secrets)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestOpen(t *testing.T) {
	plain := []byte("0\x82\x04\xbd PKCS#8 stand-in")
	oldS, newS, other := secretOf(1), secretOf(2), secretOf(3)
	sealed, err := box(t, oldS).Seal("kid-1", plain)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(sealed, plain) {
		t.Fatal("plaintext visible in the sealed value")
	}
	flip := func(i int) []byte {
		c := bytes.Clone(sealed)
		c[i] ^= 1
		return c
	}
	// The header naming another configured secret must not open either.
	renamed := bytes.Clone(sealed)
	copy(renamed[1:hdrSize], ID(newS))

	for _, tc := range []struct {
		name        string
		box         *Box
		kid         string
		sealed      []byte
		wantErr     error
		wantCurrent bool
	}{
		{"round trip", box(t, oldS), "kid-1", sealed, nil, true},
		{"rotated: old secret second still opens", box(t, newS, oldS), "kid-1", sealed, nil, false},
		{"wrong secret", box(t, other), "kid-1", sealed, ErrUnknownSecret, false},
		{"old secret dropped", box(t, newS), "kid-1", sealed, ErrUnknownSecret, false},
		{"swapped key id", box(t, oldS), "kid-2", sealed, ErrCorrupt, false},
		{"tampered ciphertext", box(t, oldS), "kid-1", flip(len(sealed) - 20), ErrCorrupt, false},
		{"tampered tag", box(t, oldS), "kid-1", flip(len(sealed) - 1), ErrCorrupt, false},
		{"tampered nonce", box(t, oldS), "kid-1", flip(hdrSize), ErrCorrupt, false},
		{"header names another secret", box(t, newS, oldS), "kid-1", renamed, ErrCorrupt, false},
		{"truncated", box(t, oldS), "kid-1", sealed[:hdrSize+4], ErrCorrupt, false},
		{"unknown version", box(t, oldS), "kid-1", flip(0), ErrCorrupt, false},
		{"empty", box(t, oldS), "kid-1", nil, ErrCorrupt, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, current, err := tc.box.Open(tc.kid, tc.sealed)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("Open err = %v, want %v", err, tc.wantErr)
			}
			if err == nil && (!bytes.Equal(got, plain) || current != tc.wantCurrent) {
				t.Fatalf("Open = %q current %v", got, current)
			}
		})
	}
}

// TestRewrap: a value opened under an older secret and sealed again moves
// to the first secret, and the old secret is no longer needed.
func TestRewrap(t *testing.T) {
	oldS, newS := secretOf(1), secretOf(2)
	sealed, _ := box(t, oldS).Seal("k", []byte("key"))
	rotated := box(t, newS, oldS)
	plain, current, err := rotated.Open("k", sealed)
	if err != nil || current {
		t.Fatalf("Open = %v current %v", err, current)
	}
	again, err := rotated.Seal("k", plain)
	if err != nil {
		t.Fatal(err)
	}
	if got, current, err := box(t, newS).Open("k", again); err != nil || !current || string(got) != "key" {
		t.Fatalf("after rewrap: %q %v %v", got, current, err)
	}
	if rotated.Current() != box(t, newS).Current() || len(rotated.IDs()) != 2 || rotated.IDs()[1] != box(t, oldS).Current() {
		t.Fatalf("ids: %s %v", rotated.Current(), rotated.IDs())
	}
	// Nonces are fresh: sealing twice never gives the same bytes.
	if twice, _ := rotated.Seal("k", plain); bytes.Equal(twice, again) {
		t.Fatal("same ciphertext twice")
	}
}

func TestNew(t *testing.T) {
	for _, tc := range []struct {
		name    string
		secrets [][]byte
		ok      bool
	}{
		{"one", [][]byte{secretOf(1)}, true},
		{"two", [][]byte{secretOf(1), secretOf(2)}, true},
		{"none", nil, false},
		{"short", [][]byte{make([]byte, 16)}, false},
		{"long", [][]byte{make([]byte, 33)}, false},
		{"repeated", [][]byte{secretOf(1), secretOf(1)}, false},
	} {
		if _, err := New(tc.secrets); (err == nil) != tc.ok {
			t.Errorf("%s: err = %v", tc.name, err)
		}
	}
}

func TestParse(t *testing.T) {
	a, b := secretOf(0xfb), secretOf(0xfe)
	std, url := base64.StdEncoding.EncodeToString(a), base64.RawURLEncoding.EncodeToString(b)
	for _, tc := range []struct {
		name, text string
		want       [][]byte
		ok         bool
	}{
		{"one", std, [][]byte{a}, true},
		{"comma list", std + "," + url, [][]byte{a, b}, true},
		{"file lines", "# newest first\n" + std + "\n\n" + url + "\n", [][]byte{a, b}, true},
		{"crlf", std + "\r\n", [][]byte{a}, true},
		{"empty", " \n", nil, true},
		{"garbage", "not*base64", nil, false},
	} {
		got, err := Parse(tc.text)
		if (err == nil) != tc.ok || len(got) != len(tc.want) {
			t.Errorf("%s: Parse = %d secrets, %v", tc.name, len(got), err)
			continue
		}
		for i := range got {
			if !bytes.Equal(got[i], tc.want[i]) {
				t.Errorf("%s: secret %d differs", tc.name, i)
			}
		}
	}
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty")
	_ = os.WriteFile(empty, []byte("# nothing yet\n"), 0o600)
	if _, err := ReadFile(empty); err == nil {
		t.Error("ReadFile of a file without secrets succeeded")
	}
	if _, err := ReadFile(filepath.Join(dir, "missing")); err == nil {
		t.Error("ReadFile of a missing file succeeded")
	}
}
