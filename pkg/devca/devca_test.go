package devca

import (
	"crypto/x509"
	"encoding/pem"
	"net"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

func parse(t *testing.T, file string) *x509.Certificate {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	blk, _ := pem.Decode(b)
	c, err := x509.ParseCertificate(blk.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestEnsure(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tls")
	wrote, err := Ensure(dir, Names, Options{Hosts: []string{"fris.internal", "10.0.0.7"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(wrote) != 2+2*len(Names) {
		t.Fatalf("wrote %d files, want %d: %v", len(wrote), 2+2*len(Names), wrote)
	}
	ca := parse(t, filepath.Join(dir, "ca.pem"))
	roots := x509.NewCertPool()
	roots.AddCert(ca)
	for _, n := range Names {
		t.Run(n, func(t *testing.T) {
			c := parse(t, filepath.Join(dir, n+".pem"))
			if c.Subject.CommonName != n {
				t.Errorf("CN %q, want %q", c.Subject.CommonName, n)
			}
			usage := x509.ExtKeyUsageClientAuth
			if _, err := c.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{usage}}); err != nil {
				t.Errorf("not a client certificate of the CA: %v", err)
			}
			serves := !clientOnly[n]
			for _, host := range []string{"127.0.0.1", "localhost", n, n + ".fris.svc.cluster.local", "fris.internal", "10.0.0.7"} {
				_, err := c.Verify(x509.VerifyOptions{Roots: roots, DNSName: host})
				if (err == nil) != serves {
					t.Errorf("as server for %s: err %v, want a server certificate: %v", host, err, serves)
				}
			}
			if !slices.ContainsFunc(c.IPAddresses, func(ip net.IP) bool { return ip.Equal(net.ParseIP("::1")) }) {
				t.Errorf("no ::1 in %v", c.IPAddresses)
			}
			if d := c.NotAfter.Sub(c.NotBefore); d < 360*24*time.Hour || d > 370*24*time.Hour {
				t.Errorf("lifetime %v, want about a year", d)
			}
			st, err := os.Stat(filepath.Join(dir, n+"-key.pem"))
			if err != nil || st.Mode().Perm() != 0o600 {
				t.Errorf("key file: %v, mode %v, want 0600", err, st.Mode().Perm())
			}
		})
	}
	if st, _ := os.Stat(filepath.Join(dir, "ca-key.pem")); st.Mode().Perm() != 0o600 {
		t.Errorf("ca-key.pem mode %v, want 0600", st.Mode().Perm())
	}

	t.Run("rerun makes only what is missing", func(t *testing.T) {
		if err := os.Remove(filepath.Join(dir, "mdr.pem")); err != nil {
			t.Fatal(err)
		}
		before := parse(t, filepath.Join(dir, "auth.pem"))
		wrote, err := Ensure(dir, Names, Options{})
		if err != nil {
			t.Fatal(err)
		}
		want := []string{filepath.Join(dir, "mdr.pem"), filepath.Join(dir, "mdr-key.pem")}
		if !slices.Equal(wrote, want) {
			t.Fatalf("wrote %v, want %v", wrote, want)
		}
		if !parse(t, filepath.Join(dir, "auth.pem")).Equal(before) {
			t.Fatal("auth.pem was replaced")
		}
		if wrote, _ := Ensure(dir, Names, Options{}); len(wrote) != 0 {
			t.Fatalf("third run wrote %v", wrote)
		}
	})
	t.Run("leaves close to expiry are renewed", func(t *testing.T) {
		wrote, err := Ensure(dir, []string{"auth"}, Options{Now: time.Now().Add(340 * 24 * time.Hour)})
		if err != nil {
			t.Fatal(err)
		}
		if len(wrote) != 2 {
			t.Fatalf("wrote %v, want auth's certificate and key", wrote)
		}
	})
}

func TestEnsureRefusesLeavesWithoutTheirCA(t *testing.T) {
	dir := t.TempDir()
	if _, err := Ensure(dir, []string{"mdr"}, Options{}); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "ca.pem")); err != nil {
		t.Fatal(err)
	}
	if _, err := Ensure(dir, []string{"mdr"}, Options{}); err == nil {
		t.Fatal("Ensure made a new CA beside certificates of the lost one")
	}
}
