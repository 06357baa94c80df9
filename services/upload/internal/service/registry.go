package service

import (
	"context"
	"fmt"

	"fris.dev/pkg/rpcerr"
	mdrv1 "fris.dev/proto/mdr/v1"
	"fris.dev/services/upload/internal/patient"
)

func invalid(msg string) error { return rpcerr.New(rpcerr.ErrInvalid, "%s", msg) }

// Registry checks values with the mdr service's CheckValues, where the
// validation rules live (one implementation for the registry and uploads).
type Registry struct {
	Client mdrv1.MdrServiceClient
}

// checksPerCall stays below the registry's own bound per call.
const checksPerCall = 5000

// Check implements Checker.
func (r Registry) Check(ctx context.Context, values []patient.Value) ([]Problem, error) {
	var out []Problem
	for start := 0; start < len(values); start += checksPerCall {
		chunk := values[start:min(start+checksPerCall, len(values))]
		req := &mdrv1.CheckValuesRequest{Checks: make([]*mdrv1.ValueCheck, len(chunk))}
		for i, v := range chunk {
			req.Checks[i] = &mdrv1.ValueCheck{Urn: v.MdrKey, Value: v.Text}
		}
		res, err := r.Client.CheckValues(ctx, req)
		if err != nil {
			return nil, fmt.Errorf("registry CheckValues: %w", err)
		}
		if len(res.GetVerdicts()) != len(chunk) {
			return nil, fmt.Errorf("registry CheckValues: %d verdicts for %d values", len(res.GetVerdicts()), len(chunk))
		}
		for i, vd := range res.GetVerdicts() {
			if !vd.GetValid() {
				out = append(out, Problem{Value: chunk[i], Reason: vd.GetReason()})
			}
		}
	}
	return out, nil
}
