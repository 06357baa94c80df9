// Package devca makes a deployment's own certificate authority and the
// certificates of its components, for development and small deployments
// (`make run`, docker compose, the e2e tests). Production may use it or
// cert-manager; the services only need PEM files (pkg/mtls).
package devca

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// Names are the components `make run` and compose need a certificate for.
var Names = []string{"gateway", "auth", "mdr", "upload", "broker", "admin"}

// Lifetimes. A leaf within renewBefore of its end is made again by Ensure,
// so a yearly `make run` never meets an expired certificate.
const (
	caLifetime   = 5 * 365 * 24 * time.Hour
	leafLifetime = 365 * 24 * time.Hour
	renewBefore  = 30 * 24 * time.Hour
)

// clientOnly are names that only ever dial: no server certificate use.
var clientOnly = map[string]bool{"gateway": true, "admin": true}

// Options of Ensure.
type Options struct {
	// Hosts are extra DNS names or IPs in every leaf, beyond localhost,
	// 127.0.0.1, ::1, the name itself and its Kubernetes names in
	// namespace fris.
	Hosts []string
	// Now is the clock (zero: time.Now).
	Now time.Time
}

// Ensure makes in dir what is missing: ca.pem and ca-key.pem, and for each
// name <name>.pem and <name>-key.pem signed by that CA (common name = the
// name). Existing files are kept, except leaves close to expiry. It returns
// the files it wrote. Keys are written with mode 0600.
func Ensure(dir string, names []string, o Options) ([]string, error) {
	now := o.Now
	if now.IsZero() {
		now = time.Now()
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	var wrote []string
	caCert, caKey, err := loadCA(dir)
	if errors.Is(err, os.ErrNotExist) {
		// A new CA would not vouch for leaves signed by a lost one.
		for _, n := range names {
			if exists(filepath.Join(dir, n+".pem")) {
				return nil, fmt.Errorf("%s: %s.pem exists but the CA (ca.pem, ca-key.pem) does not: remove the directory's certificates to start over", dir, n)
			}
		}
		if caCert, caKey, err = newCA(dir, now); err != nil {
			return nil, err
		}
		wrote = append(wrote, filepath.Join(dir, "ca.pem"), filepath.Join(dir, "ca-key.pem"))
	} else if err != nil {
		return nil, err
	}
	for _, n := range names {
		certFile := filepath.Join(dir, n+".pem")
		if c, err := readCert(certFile); err == nil && c.NotAfter.Sub(now) > renewBefore && c.CheckSignatureFrom(caCert) == nil {
			continue
		}
		if err := newLeaf(dir, n, o.Hosts, caCert, caKey, now); err != nil {
			return nil, err
		}
		wrote = append(wrote, certFile, filepath.Join(dir, n+"-key.pem"))
	}
	return wrote, nil
}

func exists(p string) bool { _, err := os.Stat(p); return err == nil }

func serial() (*big.Int, error) {
	return rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
}

func newCA(dir string, now time.Time) (*x509.Certificate, *ecdsa.PrivateKey, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	sn, err := serial()
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          sn,
		Subject:               pkix.Name{CommonName: "FRIS development CA", Organization: []string{"FRIS"}},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(caLifetime),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, err
	}
	cert, _ := x509.ParseCertificate(der)
	if err := writeKey(filepath.Join(dir, "ca-key.pem"), key); err != nil {
		return nil, nil, err
	}
	return cert, key, writePEM(filepath.Join(dir, "ca.pem"), "CERTIFICATE", der, 0o644)
}

func newLeaf(dir, name string, hosts []string, ca *x509.Certificate, caKey *ecdsa.PrivateKey, now time.Time) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	sn, err := serial()
	if err != nil {
		return err
	}
	usage := []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	if !clientOnly[name] {
		usage = append(usage, x509.ExtKeyUsageServerAuth)
	}
	tmpl := &x509.Certificate{
		SerialNumber: sn,
		Subject:      pkix.Name{CommonName: name, Organization: []string{"FRIS"}},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(leafLifetime),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  usage,
	}
	// The names a client dials: loopback for `make run`, the compose
	// service name, the Kubernetes Service names in namespace fris.
	all := append([]string{"localhost", "127.0.0.1", "::1", name, name + ".fris", name + ".fris.svc", name + ".fris.svc.cluster.local"}, hosts...)
	for _, h := range all {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else if h != "" {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return err
	}
	if err := writeKey(filepath.Join(dir, name+"-key.pem"), key); err != nil {
		return err
	}
	return writePEM(filepath.Join(dir, name+".pem"), "CERTIFICATE", der, 0o644)
}

func loadCA(dir string) (*x509.Certificate, *ecdsa.PrivateKey, error) {
	cert, err := readCert(filepath.Join(dir, "ca.pem"))
	if err != nil {
		return nil, nil, err
	}
	b, err := os.ReadFile(filepath.Join(dir, "ca-key.pem"))
	if err != nil {
		return nil, nil, err
	}
	blk, _ := pem.Decode(b)
	if blk == nil {
		return nil, nil, fmt.Errorf("%s: no PEM key", filepath.Join(dir, "ca-key.pem"))
	}
	k, err := x509.ParsePKCS8PrivateKey(blk.Bytes)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", filepath.Join(dir, "ca-key.pem"), err)
	}
	key, ok := k.(*ecdsa.PrivateKey)
	if !ok {
		return nil, nil, fmt.Errorf("%s: not an ECDSA key", filepath.Join(dir, "ca-key.pem"))
	}
	return cert, key, nil
}

func readCert(file string) (*x509.Certificate, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	blk, _ := pem.Decode(b)
	if blk == nil || blk.Type != "CERTIFICATE" {
		return nil, fmt.Errorf("%s: no PEM certificate", file)
	}
	return x509.ParseCertificate(blk.Bytes)
}

func writeKey(file string, key *ecdsa.PrivateKey) error {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return err
	}
	return writePEM(file, "PRIVATE KEY", der, 0o600)
}

// writePEM replaces file atomically (a service reading it mid-write would
// see half a key), with the mode set before any byte is written.
func writePEM(file, typ string, der []byte, mode os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(file), ".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return err
	}
	if err := pem.Encode(tmp, &pem.Block{Type: typ, Bytes: der}); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), file)
}
