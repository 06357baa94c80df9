package importer

import (
	"fmt"
	"io"

	"google.golang.org/protobuf/encoding/protojson"

	mdrv1 "fris.dev/proto/mdr/v1"
)

// ParseJSON reads FRIS JSON, the protojson form of Registry. Unknown fields
// are rejected rather than dropped: a misspelt field would otherwise import
// silently as empty.
func ParseJSON(r io.Reader) (*mdrv1.Registry, error) {
	return parseJSON(r, MaxInputBytes)
}

func parseJSON(r io.Reader, limit int64) (*mdrv1.Registry, error) {
	data, err := readLimited(r, limit)
	if err != nil {
		return nil, err
	}
	reg := &mdrv1.Registry{}
	if err := protojson.Unmarshal(data, reg); err != nil {
		return nil, fmt.Errorf("importer: FRIS JSON: %w", err)
	}
	return reg, nil
}
