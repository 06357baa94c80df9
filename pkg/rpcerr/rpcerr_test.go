package rpcerr

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"fris.dev/pkg/errinfo"
	"fris.dev/pkg/kv"
)

func TestFrom(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	ctx := context.Background()
	for _, tc := range []struct {
		err  error
		code codes.Code
		msg  string
	}{
		{fmt.Errorf("loading: %w", kv.ErrNotFound), codes.NotFound, "loading: not found"},
		{New(kv.ErrNotFound, "no namespace %q", "x"), codes.NotFound, `no namespace "x"`},
		{New(ErrInvalid, "bad urn"), codes.InvalidArgument, "bad urn"},
		{kv.ErrExists, codes.AlreadyExists, "already exists"},
		{kv.ErrConflict, codes.Aborted, "conflicting concurrent update, try again"},
		{ErrPermission, codes.PermissionDenied, "permission denied"},
		{ErrUnauthenticated, codes.Unauthenticated, "unauthenticated"},
		{ErrUnimplemented, codes.Unimplemented, "not enabled"},
		{New(ErrPrecondition, "the store is Redis"), codes.FailedPrecondition, "the store is Redis"},
		{ErrTooLarge, codes.ResourceExhausted, "too large"},
		{New(ErrMediaType, "send application/xml"), codes.InvalidArgument, "send application/xml"},
		{context.Canceled, codes.Canceled, "canceled"},
		{context.DeadlineExceeded, codes.DeadlineExceeded, "deadline exceeded"},
		{errors.New("disk on fire at /var/lib"), codes.Internal, "internal error"},
		{status.Error(codes.FailedPrecondition, "as is"), codes.FailedPrecondition, "as is"},
		// A store that timed out is the store's failure, not the caller's.
		{fmt.Errorf("%w: %w", kv.ErrUnavailable, context.DeadlineExceeded), codes.Unavailable, "storage temporarily unavailable"},
		{fmt.Errorf("get: %w", fmt.Errorf("%w: dial tcp: connection refused", kv.ErrUnavailable)), codes.Unavailable, "storage temporarily unavailable"},
		{fmt.Errorf("%w: write /data/upload.db: no space left on device", kv.ErrNoSpace), codes.ResourceExhausted, "insufficient storage"},
	} {
		st := status.Convert(From(ctx, log, tc.err))
		if st.Code() != tc.code || st.Message() != tc.msg {
			t.Errorf("%v: got %v %q, want %v %q", tc.err, st.Code(), st.Message(), tc.code, tc.msg)
		}
	}
	if !errinfo.Has(status.Convert(From(ctx, log, kv.ErrNoSpace)), errinfo.InsufficientStorage) {
		t.Error("ErrNoSpace: no insufficient-storage detail")
	}
	if !errinfo.Has(status.Convert(From(ctx, log, New(ErrMediaType, "x"))), errinfo.UnsupportedMediaType) {
		t.Error("ErrMediaType: no unsupported-media-type detail")
	}
	if errinfo.Has(status.Convert(From(ctx, log, New(ErrInvalid, "x"))), errinfo.UnsupportedMediaType) {
		t.Error("ErrInvalid reads as an unsupported media type")
	}
	if errinfo.Has(status.Convert(From(ctx, log, ErrTooLarge)), errinfo.InsufficientStorage) {
		t.Error("ErrTooLarge reads as insufficient storage")
	}
	if From(ctx, log, nil) != nil {
		t.Error("From(nil) != nil")
	}
}

func TestWithReason(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	for _, tc := range []struct {
		name   string
		err    error
		code   codes.Code
		reason string
	}{
		{"reason kept", WithReason(New(ErrInvalid, "grant_type %q is not supported", "magic"), "unsupported_grant_type"), codes.InvalidArgument, "unsupported_grant_type"},
		{"wrapped reason", fmt.Errorf("token: %w", WithReason(New(ErrUnauthenticated, "client authentication failed"), "invalid_client")), codes.Unauthenticated, "invalid_client"},
		{"no reason", New(ErrInvalid, "bad"), codes.InvalidArgument, ""},
		{"nil", WithReason(nil, "x"), codes.OK, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := From(context.Background(), log, tc.err)
			if status.Code(got) != tc.code || errinfo.Reason(status.Convert(got)) != tc.reason {
				t.Fatalf("From = %v (%v), reason %q; want %v, %q", got, status.Code(got), errinfo.Reason(status.Convert(got)), tc.code, tc.reason)
			}
		})
	}
}
