// Package apierr is the gateway's one mapping from gRPC status codes to HTTP
// statuses and error bodies.
package apierr

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"fris.dev/pkg/errinfo"
)

// HTTPStatus is the HTTP status for a gRPC code.
func HTTPStatus(c codes.Code) int {
	switch c {
	case codes.OK:
		return http.StatusOK
	case codes.InvalidArgument, codes.OutOfRange, codes.FailedPrecondition:
		return http.StatusBadRequest
	case codes.Unauthenticated:
		return http.StatusUnauthorized
	case codes.PermissionDenied:
		return http.StatusForbidden
	case codes.NotFound:
		return http.StatusNotFound
	case codes.AlreadyExists, codes.Aborted:
		return http.StatusConflict
	case codes.ResourceExhausted:
		return http.StatusRequestEntityTooLarge
	case codes.Unimplemented:
		return http.StatusNotImplemented
	case codes.Unavailable, codes.Canceled:
		return http.StatusServiceUnavailable
	// A service that cannot reach its store says Unavailable within its own
	// bound (pkg/kv), so DeadlineExceeded is left for the gateway's own
	// -upstream-timeout: the service did not answer in time, which is what
	// 504 says.
	case codes.DeadlineExceeded:
		return http.StatusGatewayTimeout
	}
	return http.StatusInternalServerError
}

// errorCode is the short machine-readable `error` of a body, in the style of
// RFC 6749 for every JSON group.
func errorCode(httpStatus int) string {
	switch httpStatus {
	case http.StatusBadRequest:
		return "invalid_request"
	case http.StatusUnauthorized:
		return "unauthorized"
	case http.StatusForbidden:
		return "access_denied"
	case http.StatusNotFound:
		return "not_found"
	case http.StatusMethodNotAllowed:
		return "method_not_allowed"
	case http.StatusConflict:
		return "conflict"
	case http.StatusRequestEntityTooLarge:
		return "too_large"
	case http.StatusUnsupportedMediaType:
		return "unsupported_media_type"
	case http.StatusNotImplemented:
		return "not_implemented"
	case http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return "temporarily_unavailable"
	case http.StatusInsufficientStorage:
		return "insufficient_storage"
	case http.StatusTooManyRequests:
		return "too_many_requests"
	}
	if httpStatus >= 500 {
		return "server_error"
	}
	return "error"
}

// Body is the JSON error body.
type Body struct {
	Error       string `json:"error"`
	Description string `json:"error_description"`
}

// WriteJSON writes a JSON error. 5xx descriptions never carry internals:
// services already replace them with "internal error".
func WriteJSON(w http.ResponseWriter, httpStatus int, description string) {
	WriteOAuth(w, httpStatus, "", description)
}

// WriteOAuth is WriteJSON with the body's `error` given: an RFC 6749 5.2
// code such as invalid_client or unsupported_grant_type ("" derives it from
// the status). invalid_client on 401 carries the Basic challenge RFC 6749
// 5.2 asks for, since clients may authenticate with HTTP Basic.
func WriteOAuth(w http.ResponseWriter, httpStatus int, code, description string) {
	if !validCode(code) {
		code = errorCode(httpStatus)
	}
	h := w.Header()
	if code == "invalid_client" && httpStatus == http.StatusUnauthorized {
		h.Set("WWW-Authenticate", `Basic realm="fris"`)
	}
	h.Del("Content-Length")
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(httpStatus)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(Body{Error: code, Description: description})
}

// validCode admits what an error code may be (RFC 6749 5.2: a few printable
// characters; ours are lower case words joined by _).
func validCode(c string) bool {
	if c == "" || len(c) > 64 {
		return false
	}
	for _, r := range c {
		if (r < 'a' || r > 'z') && r != '_' {
			return false
		}
	}
	return true
}

// WriteText writes a plain-text error, for the XML and text groups.
func WriteText(w http.ResponseWriter, httpStatus int, description string) {
	h := w.Header()
	h.Del("Content-Length")
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(httpStatus)
	_, _ = w.Write([]byte(strings.TrimSpace(description) + "\n"))
}

// FromGRPC describes a gRPC error as HTTP status and description.
func FromGRPC(err error) (int, string) {
	st := status.Convert(err)
	if errinfo.Has(st, errinfo.InsufficientStorage) {
		// The service's disk (or Redis memory) is full: not the client's
		// fault as 413 would say, and not over in a moment as 503 would.
		return http.StatusInsufficientStorage, "insufficient storage: the service cannot store more data now"
	}
	if _, ok := errinfo.RetryAfter(err); ok {
		// An abuse limit (pkg/ratelimit), not a request too large: the
		// caller may try again after Retry-After (SetRetryAfter).
		return http.StatusTooManyRequests, st.Message()
	}
	if errinfo.Has(st, errinfo.UnsupportedMediaType) {
		// The service does not read the body's Content-Type; its message
		// says what to send.
		return http.StatusUnsupportedMediaType, st.Message()
	}
	code := HTTPStatus(st.Code())
	msg := st.Message()
	if code >= 500 && code != http.StatusNotImplemented && code != http.StatusServiceUnavailable && code != http.StatusGatewayTimeout {
		msg = "internal error"
	}
	if st.Code() == codes.Unavailable {
		msg = "service temporarily unavailable"
	}
	return code, msg
}

// SetRetryAfter sets Retry-After (whole seconds, rounded up, at least 1)
// when err is an abuse limit's refusal, which FromGRPC answers with 429.
func SetRetryAfter(h http.Header, err error) {
	d, ok := errinfo.RetryAfter(err)
	if !ok {
		return
	}
	secs := int64((d + time.Second - 1) / time.Second)
	h.Set("Retry-After", strconv.FormatInt(max(secs, 1), 10))
}

// GatewayErrorHandler plugs the mapping into grpc-gateway. A reason the
// service attached (rpcerr.WithReason) becomes the body's `error`; the full
// store's reason has chosen the status already.
func GatewayErrorHandler(_ context.Context, _ *runtime.ServeMux, _ runtime.Marshaler, w http.ResponseWriter, _ *http.Request, err error) {
	code, msg := FromGRPC(err)
	SetRetryAfter(w.Header(), err)
	reason := errinfo.Reason(status.Convert(err))
	if reason == errinfo.InsufficientStorage {
		reason = ""
	}
	WriteOAuth(w, code, reason, msg)
}
