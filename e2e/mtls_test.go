package e2e

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"fris.dev/pkg/devca"
	"fris.dev/pkg/identity"
	"fris.dev/pkg/mtls"
	"fris.dev/pkg/rpcclient"
	authv1 "fris.dev/proto/auth/v1"
	brokerv1 "fris.dev/proto/broker/v1"
	mdrv1 "fris.dev/proto/mdr/v1"
)

// dialAs is the transport of a component of the test CA (devca.Names).
func dialAs(t *testing.T, name string) grpc.DialOption {
	t.Helper()
	opt, err := mtls.Config{Cert: filepath.Join(tlsDir, name+".pem"), Key: filepath.Join(tlsDir, name+"-key.pem"),
		CA: filepath.Join(tlsDir, "ca.pem")}.DialOption()
	if err != nil {
		t.Fatal(err)
	}
	return opt
}

// conn is a connection to addr over opt, closed with the test.
func conn(t *testing.T, addr string, opt grpc.DialOption) *grpc.ClientConn {
	t.Helper()
	cc, err := rpcclient.Dial(addr, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cc.Close() })
	return cc
}

// forged is a context carrying identity metadata as only the gateway may
// send it: the subject and scopes a caller would like to have.
func forged(subject string, scopes ...string) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	return metadata.AppendToOutgoingContext(ctx, identity.Identity{Subject: subject, Scopes: scopes}.Pairs()...), cancel
}

func wantCode(t *testing.T, what string, err error, want codes.Code) {
	t.Helper()
	if got := status.Code(err); got != want {
		t.Fatalf("%s: %v, want %v", what, err, want)
	}
}

// TestMTLS: through a real stack, the services' gRPC ports answer only
// certificates of the deployment's CA, believe identity metadata only from
// the gateway's, and keep the admin APIs for the operator's; the gateway
// and the admin CLIs work as before.
func TestMTLS(t *testing.T) {
	t.Parallel()
	s := NewStack(t, Options{})
	services := map[string]string{"auth": s.AuthAddr, "mdr": s.MDRAddr, "upload": s.UploadAddr, "broker": s.BrokerAddr}

	t.Run("NoClientCertificate", func(t *testing.T) {
		// The test CA is trusted, so the service's certificate checks out;
		// only the client's is missing.
		pem, err := os.ReadFile(filepath.Join(tlsDir, "ca.pem"))
		if err != nil {
			t.Fatal(err)
		}
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(pem)
		caOnly := grpc.WithTransportCredentials(credentials.NewTLS(&tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS13}))
		// And a certificate named "gateway" from a CA of its own.
		other := filepath.Join(t.TempDir(), "other")
		if _, err := devca.Ensure(other, []string{"gateway"}, devca.Options{}); err != nil {
			t.Fatal(err)
		}
		foreign, err := mtls.Config{Cert: filepath.Join(other, "gateway.pem"), Key: filepath.Join(other, "gateway-key.pem"),
			CA: filepath.Join(tlsDir, "ca.pem")}.DialOption()
		if err != nil {
			t.Fatal(err)
		}
		for name, addr := range services {
			for how, opt := range map[string]grpc.DialOption{
				"plaintext":            grpc.WithTransportCredentials(insecure.NewCredentials()),
				"TLS without a cert":   caOnly,
				"another CA's gateway": foreign,
			} {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				_, err := healthpb.NewHealthClient(conn(t, addr, opt)).Check(ctx, &healthpb.HealthCheckRequest{})
				cancel()
				wantCode(t, name+", "+how, err, codes.Unavailable)
			}
			// The control: the same call with a certificate of the CA.
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			_, err := healthpb.NewHealthClient(conn(t, addr, dialAs(t, "mdr"))).Check(ctx, &healthpb.HealthCheckRequest{})
			cancel()
			wantCode(t, name+", a certificate of the CA", err, codes.OK)
		}
	})

	t.Run("CLIFromAnyDirectory", func(t *testing.T) {
		// An operator on migration day, outside the repository: without
		// flags the CLI finds no certificate and says where it looks; with
		// $FRIS_TLS_DIR (what `make run` writes into .fris/demo.env) it works.
		for _, tc := range []struct {
			env      []string
			wantExit bool
		}{{nil, false}, {[]string{"FRIS_TLS_DIR=" + tlsDir}, true}} {
			cmd := exec.Command(filepath.Join(binDir, "broker"), "banks", "-addr", s.BrokerAddr)
			cmd.Dir = t.TempDir()
			cmd.Env = append(os.Environ(), "FRIS_TLS_DIR=")
			cmd.Env = append(cmd.Env, tc.env...)
			out, err := cmd.CombinedOutput()
			if (err == nil) != tc.wantExit {
				t.Fatalf("broker banks from %s with %q: %v\n%s", cmd.Dir, tc.env, err, out)
			}
			if err != nil && !strings.Contains(string(out), "FRIS_TLS_DIR") {
				t.Fatalf("the refusal does not name FRIS_TLS_DIR:\n%s", out)
			}
		}
	})

	t.Run("ForgedIdentityReadsNoPrivateNamespace", func(t *testing.T) {
		s.MDRCLI(t, 0, "import", filepath.Join("testdata", "extra.json"))
		read := func(as string) error {
			ctx, cancel := forged("intruder", "mdr:secret")
			defer cancel()
			_, err := mdrv1.NewMdrServiceClient(conn(t, s.MDRAddr, dialAs(t, as))).
				ListNamespaceMembers(ctx, &mdrv1.NamespaceMembersRequest{Namespace: "secret"})
			return err
		}
		// The control: from the gateway the metadata is believed (the
		// gateway sends it only for a verified token).
		wantCode(t, "gateway", read("gateway"), codes.OK)
		for _, as := range []string{"broker", "upload", "admin", "auth"} {
			wantCode(t, as, read(as), codes.PermissionDenied)
		}
		// upload may check values, but not with identity metadata.
		ctx, cancel := forged("intruder", "mdr:secret")
		defer cancel()
		_, err := mdrv1.NewMdrServiceClient(conn(t, s.MDRAddr, dialAs(t, "upload"))).CheckValues(ctx, &mdrv1.CheckValuesRequest{})
		wantCode(t, "upload's CheckValues with identity metadata", err, codes.PermissionDenied)
		_, err = mdrv1.NewMdrServiceClient(conn(t, s.MDRAddr, dialAs(t, "upload"))).CheckValues(context.Background(), &mdrv1.CheckValuesRequest{})
		if c := status.Code(err); c == codes.PermissionDenied || c == codes.Unauthenticated {
			t.Fatalf("upload's own CheckValues refused: %v", err)
		}
	})

	t.Run("ForgedIdentityReadsNoOtherInquiry", func(t *testing.T) {
		author := "researcher-" + NewKeySecret(t)[:8]
		id := strings.TrimSpace(s.BrokerCLI(t, 0, "seed-demo", "-author", author, "-sites", "charite"))
		get := func(as string) error {
			ctx, cancel := forged(author, identity.ScopeResearcher)
			defer cancel()
			_, err := brokerv1.NewResearcherServiceClient(conn(t, s.BrokerAddr, dialAs(t, as))).
				GetInquiry(ctx, &brokerv1.GetInquiryRequest{Id: id})
			return err
		}
		wantCode(t, "gateway", get("gateway"), codes.OK)
		for _, as := range []string{"mdr", "upload", "admin", "broker"} {
			wantCode(t, as, get(as), codes.PermissionDenied)
		}
	})

	t.Run("AdminAPINeedsTheAdminCertificate", func(t *testing.T) {
		create := func(as string) error {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_, err := authv1.NewAuthAdminClient(conn(t, s.AuthAddr, dialAs(t, as))).CreateUser(ctx, &authv1.CreateUserRequest{
				Email: as + "-made-me@fris.test", Password: "long enough password", RealName: "Intruder"})
			return err
		}
		for _, as := range []string{"upload", "mdr", "broker", "auth"} {
			wantCode(t, as, create(as), codes.PermissionDenied)
		}
		// The gateway reaches CreateUser only for an operator's token (the
		// Explorer's users view): without an identity, or with a
		// researcher's, it is refused; a password it cannot set at all.
		wantCode(t, "gateway without identity", create("gateway"), codes.Unauthenticated)
		ctx, cancel := forged("intruder", identity.ScopeResearcher)
		defer cancel()
		gw := authv1.NewAuthAdminClient(conn(t, s.AuthAddr, dialAs(t, "gateway")))
		_, err := gw.CreateUser(ctx, &authv1.CreateUserRequest{Email: "researcher-made-me@fris.test"})
		wantCode(t, "gateway for a researcher", err, codes.PermissionDenied)
		opCtx, cancel := forged("intruder", identity.ScopeOperator)
		defer cancel()
		_, err = gw.SetPassword(opCtx, &authv1.SetPasswordRequest{Email: "admin-made-me@fris.test", Password: "long enough password"})
		wantCode(t, "gateway's SetPassword for an operator", err, codes.PermissionDenied)
		wantCode(t, "admin", create("admin"), codes.OK)
		// The CLI with another component's certificate is refused, with the
		// reason; with the operator's (the harness's default) it works.
		out := s.AuthCLI(t, 1, "set-password", "-tls-cert", filepath.Join(tlsDir, "gateway.pem"), "-tls-key", filepath.Join(tlsDir, "gateway-key.pem"),
			"-password", "long enough password", "admin-made-me@fris.test")
		wantContains(t, out, `certificate "gateway" may not call /fris.auth.v1.AuthAdmin/SetPassword`)
		wantContains(t, s.AuthCLI(t, 0, "users"), "admin-made-me@fris.test")
		// Every service's CLI, with the operator's certificate.
		wantContains(t, s.MDRCLI(t, 0, "namespaces"), "mdr16")
		s.UploadCLI(t, 0, "credentials")
		s.BrokerCLI(t, 0, "banks")
	})

	t.Run("GatewayPathsWork", func(t *testing.T) {
		_, b := s.Get(t, "/v3/api/mdr/namespaces", 200)
		wantContains(t, string(b), "mdr16")
		s.Get(t, "/health/groups", 200)
		s.Get(t, "/.well-known/openid-configuration", 200)
	})
}
