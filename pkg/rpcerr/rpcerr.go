// Package rpcerr is the one place where storage and context errors become
// gRPC status codes.
package rpcerr

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"fris.dev/pkg/errinfo"
	"fris.dev/pkg/kv"
)

// Domain sentinels beside the storage ones in kv. Wrap them with a message
// written for the caller: that message is what the client sees.
var (
	ErrInvalid         = errors.New("invalid argument")
	ErrPermission      = errors.New("permission denied")
	ErrUnauthenticated = errors.New("unauthenticated")
	ErrUnimplemented   = errors.New("not enabled")
	// ErrPrecondition is a call the service cannot serve as it is set up
	// (a backup of a store that Redis holds).
	ErrPrecondition = errors.New("failed precondition")
	ErrTooLarge     = errors.New("too large")
	// ErrMediaType is a body in a media type or charset the service does
	// not read.
	ErrMediaType = errors.New("unsupported media type")
)

// kindError carries a caller-facing message and the sentinel that decides
// its code, without the sentinel's own text in the message.
type kindError struct {
	kind error
	msg  string
}

func (e *kindError) Error() string { return e.msg }
func (e *kindError) Unwrap() error { return e.kind }

// New returns an error of the given kind (a sentinel of this package or of
// kv) whose message is exactly the formatted text: what the client sees.
func New(kind error, format string, a ...any) error {
	return &kindError{kind: kind, msg: fmt.Sprintf(format, a...)}
}

// reasonError carries a machine-readable reason for the caller beside the
// error's kind: OAuth 2.0 clients branch on the `error` code of RFC 6749
// 5.2 (invalid_client, unsupported_grant_type), which the status code alone
// does not tell apart.
type reasonError struct {
	error
	reason string
}

func (e *reasonError) Unwrap() error { return e.error }

// WithReason attaches reason to err; From sends it as an ErrorInfo detail
// (pkg/errinfo), which the gateway writes as the error body's `error`.
func WithReason(err error, reason string) error {
	if err == nil {
		return nil
	}
	return &reasonError{error: err, reason: reason}
}

// From converts err into a gRPC status error. Errors that already carry a
// status pass through; storage sentinels map to their codes; anything else is
// a server fault, logged here and hidden from the caller.
func From(ctx context.Context, log *slog.Logger, err error) error {
	if err == nil {
		return nil
	}
	if _, ok := status.FromError(err); ok {
		return err
	}
	out := from(ctx, log, err)
	var r *reasonError
	if errors.As(err, &r) {
		return errinfo.With(status.Convert(out), r.reason).Err()
	}
	return out
}

func from(ctx context.Context, log *slog.Logger, err error) error {
	switch {
	case errors.Is(err, kv.ErrNotFound):
		return status.Error(codes.NotFound, err.Error())
	case errors.Is(err, kv.ErrExists):
		return status.Error(codes.AlreadyExists, err.Error())
	case errors.Is(err, ErrMediaType):
		// InvalidArgument as any unreadable request; the reason tells the
		// gateway it is the body's type (415), not its content (400).
		return errinfo.New(codes.InvalidArgument, err.Error(), errinfo.UnsupportedMediaType).Err()
	case errors.Is(err, ErrInvalid):
		return status.Error(codes.InvalidArgument, err.Error())
	case errors.Is(err, ErrPermission):
		return status.Error(codes.PermissionDenied, err.Error())
	case errors.Is(err, ErrUnauthenticated):
		return status.Error(codes.Unauthenticated, err.Error())
	case errors.Is(err, ErrUnimplemented):
		return status.Error(codes.Unimplemented, err.Error())
	case errors.Is(err, ErrPrecondition):
		return status.Error(codes.FailedPrecondition, err.Error())
	case errors.Is(err, ErrTooLarge):
		return status.Error(codes.ResourceExhausted, err.Error())
	case errors.Is(err, kv.ErrConflict):
		return status.Error(codes.Aborted, "conflicting concurrent update, try again")
	// Before the context errors: a store that timed out wraps
	// DeadlineExceeded, and that is the store's failure, not the caller's.
	case errors.Is(err, kv.ErrUnavailable):
		log.WarnContext(ctx, "store unavailable", "err", err)
		return status.Error(codes.Unavailable, "storage temporarily unavailable")
	case errors.Is(err, kv.ErrNoSpace):
		log.ErrorContext(ctx, "store out of space", "err", err)
		// ResourceExhausted is gRPC's code for a full file system; the
		// reason tells it from a request that is too large.
		return errinfo.New(codes.ResourceExhausted, "insufficient storage", errinfo.InsufficientStorage).Err()
	case errors.Is(err, context.Canceled):
		return status.Error(codes.Canceled, "canceled")
	case errors.Is(err, context.DeadlineExceeded):
		return status.Error(codes.DeadlineExceeded, "deadline exceeded")
	}
	log.ErrorContext(ctx, "internal error", "err", err)
	return status.Error(codes.Internal, "internal error")
}

// Errorf is status.Errorf, re-exported so services need one import for errors.
func Errorf(c codes.Code, format string, a ...any) error { return status.Errorf(c, format, a...) }

// Throttled is the refusal of an abuse limit (pkg/ratelimit): gRPC
// ResourceExhausted with a google.rpc.RetryInfo detail saying when to try
// again (errinfo.Throttled), which the gateway answers with 429 and
// Retry-After. Its message names no account: it is the same whether or not
// the account exists.
func Throttled(retry time.Duration) error {
	return errinfo.Throttled("too many attempts; try again later", retry).Err()
}

// RetryAfter is the delay a Throttled error carries; false for any other
// error.
func RetryAfter(err error) (time.Duration, bool) { return errinfo.RetryAfter(err) }
