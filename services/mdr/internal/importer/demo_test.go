package importer

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"

	mdrv1 "fris.dev/proto/mdr/v1"
)

// demoFile is the registry a fresh clone can load without the shared data.
func demoFile() string { return filepath.Join("..", "..", "demo", "mdr16.json") }

// marshalDemo writes a registry as FRIS JSON for people to read. protojson
// deliberately varies its whitespace between builds, so the output goes
// through json.Indent to make regenerating the file yield no diff.
func marshalDemo(reg *mdrv1.Registry) ([]byte, error) {
	raw, err := protojson.MarshalOptions{Multiline: true, Indent: "  ", UseProtoNames: true}.Marshal(reg)
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := json.Indent(&out, raw, "", "  "); err != nil {
		return nil, err
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}

func TestDemoRegistry(t *testing.T) {
	f, err := os.Open(demoFile())
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	reg, err := ParseJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	checkGBAFacts(t, reg)
}

// TestDemoMatchesExport keeps the demo file from drifting from the export
// it was made from. FRIS_UPDATE_DEMO=1 rewrites it.
func TestDemoMatchesExport(t *testing.T) {
	fresh := parseExport(t, "mdr16-gba.xml")
	if os.Getenv("FRIS_UPDATE_DEMO") == "1" {
		data, err := marshalDemo(fresh)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(demoFile(), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	f, err := os.Open(demoFile())
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	demo, err := ParseJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	assertEqual(t, demo, fresh)
}
