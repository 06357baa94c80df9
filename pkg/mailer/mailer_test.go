package mailer

import (
	"context"
	"errors"
	"io"
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

func TestSMTPSends(t *testing.T) {
	in, addr := startInbox(t)
	m := SMTP{Addr: addr, From: "FRIS <auth@fris.test>", User: "broker", Password: "s3cret"}
	if err := m.Send(context.Background(), "Ada@Site.example", "Passwort zurücksetzen", "Link: https://fris.example/oauth2/reset?token=abc\r\n"); err != nil {
		t.Fatal(err)
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.from != "auth@fris.test" || len(in.to) != 1 || in.to[0] != "Ada@Site.example" || in.user != "broker" {
		t.Fatalf("envelope from=%q to=%v user=%q", in.from, in.to, in.user)
	}
	for _, want := range []string{"Subject: =?utf-8?q?Passwort_zur=C3=BCcksetzen?=", "Link: https://fris.example/oauth2/reset?token=abc", "charset=utf-8"} {
		if !strings.Contains(in.data, want) {
			t.Errorf("message lacks %q:\n%s", want, in.data)
		}
	}
}

func TestSMTPFailures(t *testing.T) {
	_, addr := startInbox(t)
	for name, m := range map[string]SMTP{
		"WrongPassword": {Addr: addr, From: "auth@fris.test", User: "broker", Password: "nope"},
		"NoServer":      {Addr: "127.0.0.1:1", From: "auth@fris.test", Timeout: time.Second},
		"BadFrom":       {Addr: addr, From: "not an address"},
	} {
		t.Run(name, func(t *testing.T) {
			if err := m.Send(context.Background(), "ada@site.example", "s", "b"); err == nil {
				t.Fatal("no error")
			}
		})
	}
	if err := (SMTP{Addr: addr, From: "auth@fris.test"}).Send(context.Background(), "not an address", "s", "b"); err == nil {
		t.Fatal("bad recipient: no error")
	}
}
