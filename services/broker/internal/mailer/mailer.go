// Package mailer delivers activation codes to banks: by SMTP when a server
// is configured (pkg/mailer), else into the operator's log.
package mailer

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"fris.dev/pkg/mailer"
)

// Mailer sends a bank its activation code.
type Mailer interface {
	SendActivation(ctx context.Context, to, code string) error
}

// Log writes the code to the operator log: the fallback without SMTP.
type Log struct{ Log *slog.Logger }

func (l Log) SendActivation(ctx context.Context, to, code string) error {
	l.Log.WarnContext(ctx, "activation code for a bank (no SMTP server configured: hand it to the bank)", "bank", to, "code", code)
	return nil
}

// SMTP sends mail through a server, with STARTTLS when the server offers
// it (required whenever credentials are sent to a host other than
// loopback, by net/smtp's PLAIN auth).
type SMTP struct {
	Addr     string // host:port
	From     string
	User     string
	Password string
	// BrokerName is named in the message.
	BrokerName string
	Timeout    time.Duration
}

func (s SMTP) SendActivation(ctx context.Context, to, code string) error {
	subject := "Activation code for " + s.BrokerName
	body := fmt.Sprintf("Your bank %s asked to register with %s.\r\n\r\nActivation code: %s\r\n\r\n"+
		"Send it as \"Authorization: SamplyRegistration %s\" with the same registration request.\r\n", to, s.BrokerName, code, code)
	return s.send(ctx, to, subject, body)
}

func (s SMTP) send(ctx context.Context, to, subject, body string) error {
	return mailer.SMTP{Addr: s.Addr, From: s.From, User: s.User, Password: s.Password, Timeout: s.Timeout}.Send(ctx, to, subject, body)
}
