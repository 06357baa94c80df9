// Package mtls is the deployment's service-to-service trust: mutual TLS
// between the gateway, the services and the operators' CLIs, every
// certificate signed by the deployment's own CA. A peer's name is its
// certificate's common name; pkg/server decides per method which names may
// call (docs/security.md, "Service-to-service trust").
package mtls

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/peer"
)

// The certificate names the authorisation table knows.
const (
	// Gateway is the only peer whose identity metadata (pkg/identity) a
	// service believes, and the caller of the public APIs.
	Gateway = "gateway"
	// Admin is an operator: the admin APIs and reflection.
	Admin = "admin"
	// Upload calls mdr's public API to check values.
	Upload = "upload"
)

// DevDir is where `make run` keeps its development CA (fris-certs' default).
const DevDir = ".fris/tls"

// EnvDir names the directory of the deployment's CA and certificates for
// every binary and CLI, so they find them from any working directory
// (`make run` writes it, absolute, into .fris/demo.env).
const EnvDir = "FRIS_TLS_DIR"

// DefaultDir is where the certificates are looked for by default: $FRIS_TLS_DIR,
// else DevDir below the working directory.
func DefaultDir() string {
	if d := os.Getenv(EnvDir); d != "" {
		return d
	}
	return DevDir
}

// Config names a component's TLS material: its certificate and key (PEM),
// and the CA its peers' certificates must be signed by.
type Config struct {
	Cert, Key, CA string
	// Insecure turns TLS off: plaintext, every caller trusted. Development
	// only.
	Insecure bool
}

// RegisterFlags adds -tls-cert, -tls-key, -tls-ca and -insecure-plaintext,
// with def's values as the defaults.
func (c *Config) RegisterFlags(fs *flag.FlagSet, def Config) {
	fs.StringVar(&c.Cert, "tls-cert", def.Cert, "this component's certificate (PEM), signed by the deployment's CA")
	fs.StringVar(&c.Key, "tls-key", def.Key, "the private key of -tls-cert (PEM)")
	fs.StringVar(&c.CA, "tls-ca", def.CA, "the deployment's CA certificate (PEM): peers must present a certificate it signed")
	fs.BoolVar(&c.Insecure, "insecure-plaintext", def.Insecure, "no TLS on gRPC: every caller is trusted (development only)")
}

// Dev is the configuration of the named component when the development CA
// exists in dir (as `make run` makes it), else the zero Config: the
// binaries and the operators' CLIs then work after `make run` without
// flags, each with its own certificate.
func Dev(dir, name string) Config {
	if name == "" {
		return Config{}
	}
	if _, err := os.Stat(filepath.Join(dir, "ca.pem")); err != nil {
		return Config{}
	}
	return Config{
		Cert: filepath.Join(dir, name+".pem"),
		Key:  filepath.Join(dir, name+"-key.pem"),
		CA:   filepath.Join(dir, "ca.pem"),
	}
}

// Validate reports missing TLS material, naming the way to make it.
func (c Config) Validate() error {
	if c.Insecure {
		return nil
	}
	if c.Cert == "" || c.Key == "" || c.CA == "" {
		return errors.New("-tls-cert, -tls-key and -tls-ca are required (this component's certificate and key, " +
			"and the deployment's CA), or $" + EnvDir + " naming the directory holding them: `make run` makes a development CA in " + DevDir +
			" (or run `bin/fris-certs -dir " + DevDir + "`); -insecure-plaintext turns TLS off, for development only")
	}
	return nil
}

// tlsConfig is what client and server share: TLS 1.3 only (every peer is
// ours), the CA pool, and the key pair read again when its files change.
func (c Config) tlsConfig() (*tls.Config, *x509.CertPool, *keyPair, error) {
	if err := c.Validate(); err != nil {
		return nil, nil, nil, err
	}
	pem, err := os.ReadFile(c.CA)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("-tls-ca: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, nil, nil, fmt.Errorf("-tls-ca %s: no PEM certificate in it", c.CA)
	}
	kp := &keyPair{cert: c.Cert, key: c.Key}
	if _, err := kp.get(); err != nil {
		return nil, nil, nil, err
	}
	return &tls.Config{MinVersion: tls.VersionTLS13}, pool, kp, nil
}

// ServerCredentials require every client to present a certificate the CA
// signed; nil with Insecure.
func (c Config) ServerCredentials() (credentials.TransportCredentials, error) {
	if c.Insecure {
		return nil, nil
	}
	tc, pool, kp, err := c.tlsConfig()
	if err != nil {
		return nil, err
	}
	tc.ClientAuth = tls.RequireAndVerifyClientCert
	tc.ClientCAs = pool
	tc.GetCertificate = func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return kp.get() }
	return credentials.NewTLS(tc), nil
}

// DialOption is the transport of a connection to a service: the service's
// certificate is checked against the CA and the dialled host name (or IP),
// and this component's certificate is presented.
func (c Config) DialOption() (grpc.DialOption, error) {
	if c.Insecure {
		return grpc.WithTransportCredentials(insecure.NewCredentials()), nil
	}
	tc, pool, kp, err := c.tlsConfig()
	if err != nil {
		return nil, err
	}
	tc.RootCAs = pool
	tc.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return kp.get() }
	return grpc.WithTransportCredentials(credentials.NewTLS(tc)), nil
}

// PeerName is the common name of the caller's verified certificate; false
// when the call came without one (plaintext).
func PeerName(ctx context.Context) (string, bool) {
	p, ok := peer.FromContext(ctx)
	if !ok {
		return "", false
	}
	info, ok := p.AuthInfo.(credentials.TLSInfo)
	if !ok || len(info.State.VerifiedChains) == 0 || len(info.State.VerifiedChains[0]) == 0 {
		return "", false
	}
	return info.State.VerifiedChains[0][0].Subject.CommonName, true
}

// keyPair is a certificate and key on disk, loaded again when either file
// changes: cert-manager and the kubelet replace Secret files in place, and
// new connections should get the renewed certificate without a restart.
// Connections are long-lived, so the two stats per handshake cost nothing.
type keyPair struct {
	cert, key string
	mu        sync.Mutex
	mod       time.Time
	kp        *tls.Certificate
}

func (k *keyPair) get() (*tls.Certificate, error) {
	var mod time.Time
	for _, f := range []string{k.cert, k.key} {
		st, err := os.Stat(f)
		if err != nil {
			return nil, err
		}
		if st.ModTime().After(mod) {
			mod = st.ModTime()
		}
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.kp != nil && mod.Equal(k.mod) {
		return k.kp, nil
	}
	kp, err := tls.LoadX509KeyPair(k.cert, k.key)
	if err != nil {
		if k.kp != nil { // half-written during a rotation: keep the old one
			return k.kp, nil
		}
		return nil, fmt.Errorf("-tls-cert/-tls-key: %w", err)
	}
	k.kp, k.mod = &kp, mod
	return k.kp, nil
}
