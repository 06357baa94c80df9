// Package errinfo holds the reasons FRIS services attach to a gRPC status
// (google.rpc.ErrorInfo) where the code alone does not say enough for the
// gateway to choose its HTTP status. Services write them through rpcerr; the
// gateway reads them in apierr. It imports no storage code, so the gateway
// does not link any.
package errinfo

import (
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"
)

// Domain is the ErrorInfo domain of every FRIS reason.
const Domain = "fris.dev"

// InsufficientStorage on a ResourceExhausted status means "the service's
// store is full", as opposed to "the request is too large" (the same code
// without it).
const InsufficientStorage = "INSUFFICIENT_STORAGE"

// UnsupportedMediaType on an InvalidArgument status means "the service does
// not read a body of this media type or charset" (HTTP 415), as opposed to a
// body it read and found wrong (400). The message names what to send.
const UnsupportedMediaType = "UNSUPPORTED_MEDIA_TYPE"

// New returns a status of code c with message msg and the given reason.
func New(c codes.Code, msg, reason string) *status.Status {
	return With(status.New(c, msg), reason)
}

// With returns st carrying the given reason as well.
func With(st *status.Status, reason string) *status.Status {
	if with, err := st.WithDetails(&errdetails.ErrorInfo{Domain: Domain, Reason: reason}); err == nil {
		return with
	}
	return st
}

// Reason is the first FRIS reason st carries, "" when none.
func Reason(st *status.Status) string {
	for _, d := range st.Details() {
		if ei, ok := d.(*errdetails.ErrorInfo); ok && ei.GetDomain() == Domain {
			return ei.GetReason()
		}
	}
	return ""
}

// Has tells whether st carries the given FRIS reason.
func Has(st *status.Status, reason string) bool {
	for _, d := range st.Details() {
		if ei, ok := d.(*errdetails.ErrorInfo); ok && ei.GetDomain() == Domain && ei.GetReason() == reason {
			return true
		}
	}
	return false
}

// Throttled is a refusal by an abuse limit: ResourceExhausted (as for a
// request too large) told apart by a google.rpc.RetryInfo detail, the
// standard way to say when to try again.
func Throttled(msg string, retry time.Duration) *status.Status {
	st := status.New(codes.ResourceExhausted, msg)
	if with, err := st.WithDetails(&errdetails.RetryInfo{RetryDelay: durationpb.New(retry)}); err == nil {
		return with
	}
	return st
}

// RetryAfter is the delay of a Throttled error; false for any other error.
func RetryAfter(err error) (time.Duration, bool) {
	st, ok := status.FromError(err)
	if !ok || st.Code() != codes.ResourceExhausted {
		return 0, false
	}
	for _, d := range st.Details() {
		if ri, ok := d.(*errdetails.RetryInfo); ok {
			return ri.GetRetryDelay().AsDuration(), true
		}
	}
	return 0, false
}
