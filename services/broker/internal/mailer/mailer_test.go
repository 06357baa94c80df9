package mailer

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	gosmtp "github.com/emersion/go-smtp"
)

// inbox is a real SMTP server (go-smtp) that keeps what it receives.
type inbox struct {
	mu       sync.Mutex
	from     string
	to       []string
	data     string
	user     string
	password string
}

type session struct{ in *inbox }

func (s session) AuthMechanisms() []string { return []string{sasl.Plain} }
func (s session) Auth(string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(_, user, pass string) error {
		if user != "broker" || pass != "s3cret" {
			return errors.New("bad credentials")
		}
		s.in.mu.Lock()
		s.in.user, s.in.password = user, pass
		s.in.mu.Unlock()
		return nil
	}), nil
}
func (s session) Mail(from string, _ *gosmtp.MailOptions) error {
	s.in.mu.Lock()
	defer s.in.mu.Unlock()
	s.in.from = from
	return nil
}
func (s session) Rcpt(to string, _ *gosmtp.RcptOptions) error {
	s.in.mu.Lock()
	defer s.in.mu.Unlock()
	s.in.to = append(s.in.to, to)
	return nil
}
func (s session) Data(r io.Reader) error {
	b, err := io.ReadAll(r)
	s.in.mu.Lock()
	defer s.in.mu.Unlock()
	s.in.data = string(b)
	return err
}
func (session) Reset()        {}
func (session) Logout() error { return nil }

func startInbox(t *testing.T) (*inbox, string) {
	in := &inbox{}
	srv := gosmtp.NewServer(gosmtp.BackendFunc(func(*gosmtp.Conn) (gosmtp.Session, error) { return session{in}, nil }))
	srv.Domain = "localhost"
	srv.AllowInsecureAuth = true
	srv.ReadTimeout, srv.WriteTimeout = 10*time.Second, 10*time.Second
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(func() { _ = srv.Close() })
	return in, lis.Addr().String()
}

func TestSMTPDeliversTheCode(t *testing.T) {
	in, addr := startInbox(t)
	m := SMTP{Addr: addr, From: "FRIS Broker <broker@fris.test>", User: "broker", Password: "s3cret", BrokerName: "Test Broker"}
	if err := m.SendActivation(context.Background(), "Bank@Site.example", "12345678"); err != nil {
		t.Fatal(err)
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.from != "broker@fris.test" || len(in.to) != 1 || in.to[0] != "Bank@Site.example" || in.user != "broker" {
		t.Fatalf("envelope from=%q to=%v user=%q", in.from, in.to, in.user)
	}
	for _, want := range []string{"Subject: Activation code for Test Broker", "Activation code: 12345678", "SamplyRegistration 12345678"} {
		if !strings.Contains(in.data, want) {
			t.Errorf("message lacks %q:\n%s", want, in.data)
		}
	}
}

func TestSMTPFailures(t *testing.T) {
	_, addr := startInbox(t)
	for name, m := range map[string]SMTP{
		"WrongPassword": {Addr: addr, From: "broker@fris.test", User: "broker", Password: "nope"},
		"NoServer":      {Addr: "127.0.0.1:1", From: "broker@fris.test", Timeout: time.Second},
		"BadFrom":       {Addr: addr, From: "not an address"},
	} {
		t.Run(name, func(t *testing.T) {
			if err := m.SendActivation(context.Background(), "bank@site.example", "1"); err == nil {
				t.Fatal("no error")
			}
		})
	}
}

func TestLogMailer(t *testing.T) {
	var buf bytes.Buffer
	m := Log{Log: slog.New(slog.NewJSONHandler(&buf, nil))}
	if err := m.SendActivation(context.Background(), "bank@site.example", "87654321"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `"code":"87654321"`) || !strings.Contains(buf.String(), "bank@site.example") {
		t.Fatalf("log = %s", buf.String())
	}
}
