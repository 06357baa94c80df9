package apierr

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"fris.dev/pkg/errinfo"
)

func TestFromGRPC(t *testing.T) {
	for _, tc := range []struct {
		code   codes.Code
		msg    string
		status int
		desc   string
	}{
		{codes.NotFound, "namespace x: not found", 404, "namespace x: not found"},
		{codes.InvalidArgument, "bad urn", 400, "bad urn"},
		{codes.AlreadyExists, "exists", 409, "exists"},
		{codes.PermissionDenied, "no", 403, "no"},
		{codes.Unauthenticated, "who", 401, "who"},
		{codes.ResourceExhausted, "big", 413, "big"},
		{codes.Unimplemented, "off", 501, "off"},
		{codes.Unavailable, "dial tcp 10.0.0.1: refused", 503, "service temporarily unavailable"},
		{codes.Internal, "secret stack", 500, "internal error"},
		{codes.Unknown, "secret", 500, "internal error"},
		{codes.DataLoss, "secret", 500, "internal error"},
		{codes.DeadlineExceeded, "deadline exceeded", 504, "deadline exceeded"},
	} {
		st, desc := FromGRPC(status.Error(tc.code, tc.msg))
		if st != tc.status || desc != tc.desc {
			t.Errorf("%v: got %d %q, want %d %q", tc.code, st, desc, tc.status, tc.desc)
		}
	}
}

func TestWriteJSON(t *testing.T) {
	rec := httptest.NewRecorder()
	WriteJSON(rec, 404, "gone")
	var b Body
	if err := json.Unmarshal(rec.Body.Bytes(), &b); err != nil {
		t.Fatal(err)
	}
	if rec.Code != 404 || b.Error != "not_found" || b.Description != "gone" || rec.Header().Get("Content-Type") != "application/json; charset=utf-8" {
		t.Fatalf("%d %+v %q", rec.Code, b, rec.Header().Get("Content-Type"))
	}
}

func TestInsufficientStorage(t *testing.T) {
	full := errinfo.New(codes.ResourceExhausted, "insufficient storage", errinfo.InsufficientStorage).Err()
	if st, desc := FromGRPC(full); st != 507 || desc == "" {
		t.Fatalf("full store: %d %q, want 507", st, desc)
	}
	other := errinfo.New(codes.ResourceExhausted, "big", "SOMETHING_ELSE").Err()
	if st, _ := FromGRPC(other); st != 413 {
		t.Fatalf("another reason: %d, want 413", st)
	}
	rec := httptest.NewRecorder()
	WriteJSON(rec, 507, "full")
	var b Body
	if err := json.Unmarshal(rec.Body.Bytes(), &b); err != nil || b.Error != "insufficient_storage" {
		t.Fatalf("body %s: %v", rec.Body.Bytes(), err)
	}
}

func TestThrottled(t *testing.T) {
	err := errinfo.Throttled("too many attempts; try again later", 1500*time.Millisecond).Err()
	code, msg := FromGRPC(err)
	if code != http.StatusTooManyRequests || msg != "too many attempts; try again later" {
		t.Fatalf("FromGRPC = %d %q, want 429", code, msg)
	}
	h := http.Header{}
	SetRetryAfter(h, err)
	if got := h.Get("Retry-After"); got != "2" {
		t.Fatalf("Retry-After = %q, want 2 (seconds, rounded up)", got)
	}
	// ResourceExhausted without a retry delay is still a request too large.
	if code, _ := FromGRPC(status.Error(codes.ResourceExhausted, "too large")); code != http.StatusRequestEntityTooLarge {
		t.Fatalf("plain ResourceExhausted = %d, want 413", code)
	}
	h = http.Header{}
	SetRetryAfter(h, status.Error(codes.ResourceExhausted, "too large"))
	if h.Get("Retry-After") != "" {
		t.Fatal("Retry-After set for a request too large")
	}
	rec := httptest.NewRecorder()
	GatewayErrorHandler(context.Background(), nil, nil, rec, nil, errinfo.Throttled("x", 10*time.Millisecond).Err())
	if rec.Code != 429 || rec.Header().Get("Retry-After") != "1" || !strings.Contains(rec.Body.String(), `"error":"too_many_requests"`) {
		t.Fatalf("GatewayErrorHandler: %d %v %s", rec.Code, rec.Header(), rec.Body)
	}
}

func TestUnsupportedMediaType(t *testing.T) {
	msg := `charset "koi8-r" is not supported: send UTF-8`
	if st, desc := FromGRPC(errinfo.New(codes.InvalidArgument, msg, errinfo.UnsupportedMediaType).Err()); st != 415 || desc != msg {
		t.Fatalf("unsupported media type: %d %q, want 415 %q", st, desc, msg)
	}
	if st, _ := FromGRPC(status.Error(codes.InvalidArgument, msg)); st != 400 {
		t.Fatalf("without the reason: %d, want 400", st)
	}
}
