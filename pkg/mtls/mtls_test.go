package mtls

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fris.dev/pkg/devca"
)

func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		ok   bool
	}{
		{"all three", Config{Cert: "c", Key: "k", CA: "ca"}, true},
		{"plaintext asked for", Config{Insecure: true}, true},
		{"nothing", Config{}, false},
		{"no CA", Config{Cert: "c", Key: "k"}, false},
	}
	for _, tc := range tests {
		err := tc.cfg.Validate()
		if (err == nil) != tc.ok {
			t.Errorf("%s: %v", tc.name, err)
		}
		if err != nil && !strings.Contains(err.Error(), DevDir) {
			t.Errorf("%s: the message does not name make run's CA: %v", tc.name, err)
		}
	}
}

func TestDev(t *testing.T) {
	dir := t.TempDir()
	if got := Dev(dir, Admin); got != (Config{}) {
		t.Fatalf("without a CA: %+v, want zero", got)
	}
	if _, err := devca.Ensure(dir, []string{Admin}, devca.Options{}); err != nil {
		t.Fatal(err)
	}
	got := Dev(dir, Admin)
	if got.Cert != filepath.Join(dir, "admin.pem") || got.Key != filepath.Join(dir, "admin-key.pem") || got.CA != filepath.Join(dir, "ca.pem") {
		t.Fatalf("Dev = %+v", got)
	}
	if _, err := got.DialOption(); err != nil {
		t.Fatal(err)
	}
}

// A renewed certificate is picked up by the next handshake.
func TestKeyPairReloads(t *testing.T) {
	dir := t.TempDir()
	if _, err := devca.Ensure(dir, []string{"mdr"}, devca.Options{}); err != nil {
		t.Fatal(err)
	}
	kp := &keyPair{cert: filepath.Join(dir, "mdr.pem"), key: filepath.Join(dir, "mdr-key.pem")}
	first, err := kp.get()
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := kp.get(); again != first {
		t.Fatal("an unchanged pair was loaded again")
	}
	// Renew: near expiry by the clock Ensure is given.
	if _, err := devca.Ensure(dir, []string{"mdr"}, devca.Options{Now: time.Now().Add(360 * 24 * time.Hour)}); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Minute) // coarse file system clocks
	for _, f := range []string{kp.cert, kp.key} {
		if err := os.Chtimes(f, later, later); err != nil {
			t.Fatal(err)
		}
	}
	renewed, err := kp.get()
	if err != nil {
		t.Fatal(err)
	}
	if string(renewed.Certificate[0]) == string(first.Certificate[0]) {
		t.Fatal("the renewed certificate was not loaded")
	}
}

// TestDefaultDir: $FRIS_TLS_DIR names the certificates' directory from
// any working directory; without it, DevDir below the working directory.
func TestDefaultDir(t *testing.T) {
	dir := t.TempDir()
	if _, err := devca.Ensure(dir, []string{Admin}, devca.Options{}); err != nil {
		t.Fatal(err)
	}
	t.Setenv(EnvDir, "")
	if got := DefaultDir(); got != DevDir {
		t.Fatalf("DefaultDir without $%s = %q, want %q", EnvDir, got, DevDir)
	}
	t.Chdir(t.TempDir())
	if c := Dev(DefaultDir(), Admin); c != (Config{}) {
		t.Fatalf("no CA here, yet Dev = %+v", c)
	}
	t.Setenv(EnvDir, dir)
	c := Dev(DefaultDir(), Admin)
	if c.CA != filepath.Join(dir, "ca.pem") || c.Cert != filepath.Join(dir, Admin+".pem") || c.Validate() != nil {
		t.Fatalf("Dev with $%s = %+v", EnvDir, c)
	}
}
