package cmdutil

import (
	"errors"
	"strings"
	"unicode"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// explained is an error reworded for an operator; it still wraps the
// original, so errors.Is and status checks keep working.
type explained struct {
	msg string
	err error
}

func (e *explained) Error() string { return e.msg }
func (e *explained) Unwrap() error { return e.err }

// explain rewords a gRPC error from the service at addr for the operator who
// typed the command: "rpc error: code = NotFound desc = no such client" says
// nothing they can act on. reached reports whether the service answered at
// all: only then is an Unavailable the service's own (a dependency down).
func (t Tool) explain(err error, addr string, reached bool) error {
	var se interface{ GRPCStatus() *status.Status }
	if err == nil || !errors.As(err, &se) {
		return err
	}
	st := se.GRPCStatus()
	var plain string
	switch {
	case st.Code() == codes.Unavailable && !reached && strings.Contains(st.Message(), "server preface: EOF"):
		// A TLS server closes a plaintext connection without a word.
		plain = "the " + t.Name + " service at " + addr + " closed the connection: it takes TLS only (drop -insecure-plaintext)"
	case st.Code() == codes.Unavailable && !reached && isTLS(st.Message()):
		plain = "no TLS connection to the " + t.Name + " service at " + addr + ": " + st.Message() +
			" (check -tls-cert, -tls-key and -tls-ca, or " + t.EnvPrefix + "_TLS_*: an operator's certificate of the deployment's CA)"
	case st.Code() == codes.Unavailable && !reached:
		plain = "the " + t.Name + " service is not reachable at " + addr +
			": is `make run` going? (or set -addr / " + t.EnvPrefix + "_ADDR)"
	case st.Code() == codes.DeadlineExceeded && !reached:
		plain = "the " + t.Name + " service at " + addr + " did not answer in time: is it running? (or set -addr / " +
			t.EnvPrefix + "_ADDR, -timeout)"
	default:
		plain = withCode(st.Code(), st.Message())
	}
	// Keep the context callers wrapped around the status ("import x: ...").
	msg := strings.Replace(err.Error(), se.(error).Error(), plain, 1)
	return &explained{msg: msg, err: err}
}

// isTLS tells a failed handshake (unknown CA, wrong host name, no or
// refused client certificate) from a service that is not there.
func isTLS(msg string) bool {
	for _, s := range []string{"tls:", "x509:", "certificate", "handshake"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// withCode prefixes msg with the code in words ("not found: no such client")
// unless msg already says them ("namespace x: not found").
func withCode(c codes.Code, msg string) string {
	if c == codes.Unknown {
		return msg
	}
	words := codeWords(c)
	if strings.Contains(strings.ToLower(msg), words) {
		return msg
	}
	if msg == "" {
		return words
	}
	return words + ": " + msg
}

// codeWords spells a code the way people say it: NotFound is "not found".
func codeWords(c codes.Code) string {
	var b strings.Builder
	for i, r := range c.String() {
		if unicode.IsUpper(r) {
			if i > 0 {
				b.WriteByte(' ')
			}
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}
