package cmdutil

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/emptypb"

	"fris.dev/pkg/devca"
)

func TestExplain(t *testing.T) {
	tool := Tool{Name: "mdr", EnvPrefix: "FRIS_MDR"}
	notReachable := "the mdr service is not reachable at 127.0.0.1:9102: is `make run` going? (or set -addr / FRIS_MDR_ADDR)"
	for _, tc := range []struct {
		name    string
		err     error
		reached bool
		want    string
	}{
		{"nil", nil, false, ""},
		{"not a status", errors.New("open x: no such file"), false, "open x: no such file"},
		{"refused", status.Error(codes.Unavailable, "connection error: connection refused"), false, notReachable},
		{"refused, wrapped", fmt.Errorf("import a.json: %w", status.Error(codes.Unavailable, "x")), false, "import a.json: " + notReachable},
		{"plaintext to a TLS service", status.Error(codes.Unavailable, `connection error: desc = "error reading server preface: EOF"`), false,
			"the mdr service at 127.0.0.1:9102 closed the connection: it takes TLS only (drop -insecure-plaintext)"},
		{"another CA", status.Error(codes.Unavailable, `connection error: desc = "error reading server preface: remote error: tls: unknown certificate authority"`), false,
			`no TLS connection to the mdr service at 127.0.0.1:9102: connection error: desc = "error reading server preface: remote error: tls: unknown certificate authority" (check -tls-cert, -tls-key and -tls-ca, or FRIS_MDR_TLS_*: an operator's certificate of the deployment's CA)`},
		{"the service's own unavailable", status.Error(codes.Unavailable, "the registry cannot validate values right now"), true,
			"unavailable: the registry cannot validate values right now"},
		{"not found", status.Error(codes.NotFound, "no such client"), true, "not found: no such client"},
		{"code already in the message", status.Error(codes.NotFound, "not found: client x"), true, "not found: client x"},
		{"code at the end of the message", status.Error(codes.NotFound, `namespace "x": not found`), true, `namespace "x": not found`},
		{"two words", status.Error(codes.FailedPrecondition, "namespace in use"), true, "failed precondition: namespace in use"},
		{"unknown code", status.Error(codes.Unknown, "boom"), true, "boom"},
		{"wrapped", fmt.Errorf("delete x: %w", status.Error(codes.AlreadyExists, "")), true, "delete x: already exists"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := tool.explain(tc.err, "127.0.0.1:9102", tc.reached)
			if tc.err == nil {
				if got != nil {
					t.Fatalf("got %v, want nil", got)
				}
				return
			}
			if got.Error() != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
			if !errors.Is(got, tc.err) {
				t.Errorf("the reworded error no longer wraps the original")
			}
		})
	}
}

func TestExitCode(t *testing.T) {
	for _, tc := range []struct {
		name     string
		err      error
		code     int
		printErr bool
	}{
		{"success", nil, 0, false},
		{"asked for help", flag.ErrHelp, 0, false},
		{"asked for help, wrapped", fmt.Errorf("parse: %w", flag.ErrHelp), 0, false},
		{"usage", fmt.Errorf("%w: mdr import FILE", ErrUsage), 2, true},
		{"no subcommand", usageError("a subcommand is needed"), 2, true},
		{"failure", errors.New("boom"), 1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, msg := ExitCode(tc.err)
			if code != tc.code || (msg != "") != tc.printErr {
				t.Errorf("ExitCode(%v) = %d, %q; want %d, printed %t", tc.err, code, msg, tc.code, tc.printErr)
			}
		})
	}
}

// TestCommandLines runs whole command lines through a tool's tree: what an
// operator types, and how it exits.
func TestCommandLines(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := lis.Addr().String()
	lis.Close() // nothing listens here now

	tool := Tool{Name: "mdr", EnvPrefix: "FRIS_MDR", DefaultAddr: closed, Stderr: io.Discard}
	dir := t.TempDir()
	if _, err := devca.Ensure(dir, []string{"admin"}, devca.Options{}); err != nil {
		t.Fatal(err)
	}
	ping := func() *Admin {
		return &Admin{Name: "ping", Usage: "ping [flags]", Help: "call the service",
			Run: func(ctx context.Context, cc *grpc.ClientConn, _ []string) error {
				return cc.Invoke(ctx, "/fris.Test/Ping", &emptypb.Empty{}, &emptypb.Empty{})
			}}
	}
	for _, tc := range []struct {
		name    string
		args    []string
		code    int
		msgPart string
	}{
		{"-h on the root", []string{"-h"}, 0, ""},
		{"--help on the root", []string{"--help"}, 0, ""},
		{"-h on a subcommand", []string{"ping", "-h"}, 0, ""},
		{"no subcommand", nil, 2, "a subcommand is needed"},
		{"unknown subcommand", []string{"pong"}, 2, "unknown subcommand pong"},
		{"service down", []string{"ping", "-insecure-plaintext"}, 1, "the mdr service is not reachable at " + closed},
		{"service down, with TLS", []string{"ping", "-tls-cert", dir + "/admin.pem", "-tls-key", dir + "/admin-key.pem", "-tls-ca", dir + "/ca.pem"},
			1, "the mdr service is not reachable at " + closed},
		{"no TLS material", []string{"ping"}, 2, "-tls-cert, -tls-key and -tls-ca are required"},
		{"probe without a URL", []string{"probe"}, 2, "probe URL"},
		{"probe of a closed port", []string{"probe", "http://" + closed + "/readyz"}, 1, "connection refused"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := tool.Root(tool.Command(*ping()))
			code, msg := ExitCode(root.ParseAndRun(context.Background(), tc.args))
			if code != tc.code || !strings.Contains(msg, tc.msgPart) {
				t.Errorf("%v: exit %d, %q; want %d, containing %q", tc.args, code, msg, tc.code, tc.msgPart)
			}
		})
	}
}

// With -wait, an operator subcommand started before its service (a seed in
// docker compose) waits for the service instead of failing at once.
func TestCommandWaitsForService(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := lis.Addr().String()
	lis.Close() // the service has not started yet

	tool := Tool{Name: "mdr", EnvPrefix: "FRIS_MDR", DefaultAddr: addr, Stderr: io.Discard}
	called := make(chan struct{}, 1)
	ping := Admin{Name: "ping", Usage: "ping [flags]", Help: "call the service",
		Run: func(ctx context.Context, cc *grpc.ClientConn, _ []string) error {
			called <- struct{}{}
			return cc.Invoke(ctx, "/fris.Test/Ping", &emptypb.Empty{}, &emptypb.Empty{})
		}}
	done := make(chan error, 1)
	go func() {
		done <- tool.Root(tool.Command(ping)).ParseAndRun(context.Background(), []string{"ping", "-insecure-plaintext", "-wait", "-timeout", "10m"})
	}()
	<-called // the call is under way against a closed port
	srv := grpc.NewServer(grpc.UnknownServiceHandler(func(_ any, s grpc.ServerStream) error {
		if err := s.RecvMsg(&emptypb.Empty{}); err != nil {
			return err
		}
		return s.SendMsg(&emptypb.Empty{})
	}))
	defer srv.Stop()
	for {
		if lis, err = net.Listen("tcp", addr); err == nil {
			break
		}
	}
	go func() { _ = srv.Serve(lis) }()
	if err := <-done; err != nil {
		t.Fatalf("ping -wait after the service started: %v", err)
	}
}

func TestOneAndSplitList(t *testing.T) {
	tool := Tool{Name: "broker"}
	if got, err := tool.One([]string{"a@b"}, "delete-bank EMAIL"); got != "a@b" || err != nil {
		t.Fatalf("One(one arg) = %q, %v", got, err)
	}
	for _, args := range [][]string{nil, {"a", "b"}} {
		_, err := tool.One(args, "delete-bank EMAIL")
		if !errors.Is(err, ErrUsage) || err.Error() != "usage: broker delete-bank EMAIL" {
			t.Errorf("One(%q) = %v; want the usage error", args, err)
		}
	}
	if got := strings.Join(SplitList(" a, ,b,,c "), "|"); got != "a|b|c" {
		t.Errorf("SplitList = %q", got)
	}
	if got := SplitList(""); got != nil {
		t.Errorf("SplitList(\"\") = %q; want nil", got)
	}
}

func TestTable(t *testing.T) {
	var b strings.Builder
	tw := Table(&b, "NAME\tN")
	fmt.Fprintln(tw, "alpha\t1")
	fmt.Fprintln(tw, "b\t22")
	if err := tw.Flush(); err != nil {
		t.Fatal(err)
	}
	if want := "NAME   N\nalpha  1\nb      22\n"; b.String() != want {
		t.Errorf("table =\n%q; want\n%q", b.String(), want)
	}
}
