package service

import (
	"context"
	"testing"

	"google.golang.org/grpc/codes"

	uploadv1 "fris.dev/proto/upload/v1"
)

// CheckCredentials answers as a call with a body would before it looks at
// the body: media type first, then teiler and credentials.
func TestCheckCredentials(t *testing.T) {
	f, ctx := seeded(t, ValidateOff)
	check := func(ctx context.Context, r *uploadv1.CheckCredentialsRequest) error {
		_, err := f.pub.CheckCredentials(ctx, r)
		return err
	}
	patient := func(ct string) *uploadv1.CheckCredentialsRequest {
		return &uploadv1.CheckCredentialsRequest{Teiler: t1, ContentType: ct, Body: uploadv1.CheckCredentialsRequest_PATIENT}
	}
	if err := check(ctx, patient("application/xml")); err != nil {
		t.Fatalf("right credentials: %v", err)
	}
	if err := check(ctx, &uploadv1.CheckCredentialsRequest{Teiler: t1, ContentType: "text/html", Body: uploadv1.CheckCredentialsRequest_UPLOAD_STATS}); err != nil {
		t.Fatalf("right credentials, statistics as text: %v", err)
	}
	wantCode(t, check(context.Background(), patient("application/xml")), codes.Unauthenticated, "required")
	wantCode(t, check(as("u", "wrong password"), patient("application/xml")), codes.Unauthenticated, "wrong")
	wantCode(t, check(ctx, &uploadv1.CheckCredentialsRequest{Teiler: &uploadv1.Teiler{SiteId: "dresden", TeilerId: "teiler1"}}), codes.PermissionDenied, "dresden/teiler1")
	wantCode(t, check(ctx, &uploadv1.CheckCredentialsRequest{Teiler: &uploadv1.Teiler{SiteId: "charite"}}), codes.InvalidArgument, "required")
	wantMediaType(t, check(context.Background(), patient("application/json")), "Content-Type application/json is not supported: send application/xml")
}
