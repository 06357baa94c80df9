package importer

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	mdrv1 "fris.dev/proto/mdr/v1"
)

// addSeeds adds the fixtures matching the patterns to the fuzz corpus.
func addSeeds(f *testing.F, patterns ...string) {
	for _, pattern := range patterns {
		files, err := filepath.Glob(filepath.Join("testdata", pattern))
		if err != nil {
			f.Fatal(err)
		}
		for _, file := range files {
			data, err := os.ReadFile(file)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(data)
		}
	}
}

// checkResult holds for any successful parse: the registry survives the
// service's JSON encoding unchanged, and every member is an element.
func checkResult(t *testing.T, reg *mdrv1.Registry, err error) {
	if err != nil {
		if reg != nil {
			t.Fatalf("registry returned along with error %v", err)
		}
		if strings.ContainsAny(err.Error(), "\r\n") {
			t.Fatalf("multi-line error %q", err)
		}
		return
	}
	data, err := protojson.Marshal(reg)
	if err != nil {
		t.Fatalf("result cannot be marshalled: %v", err)
	}
	back, err := ParseJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("result does not parse back: %v", err)
	}
	if !proto.Equal(back, reg) {
		t.Fatalf("result changes in a JSON round trip")
	}
}

// The seeds are a few KB, so minimizing each new input can use up the whole
// default -fuzzminimizetime of 60s; for short runs add -fuzzminimizetime=2s.
func FuzzParseSamplyXML(f *testing.F) {
	addSeeds(f, "*.xml", "broken/*.xml")
	f.Fuzz(func(t *testing.T, data []byte) {
		reg, err := parseSamplyXML(bytes.NewReader(data), 1<<20)
		checkResult(t, reg, err)
		if err == nil {
			assertMembersResolve(t, reg)
		}
	})
}

func FuzzParseJSON(f *testing.F) {
	addSeeds(f, "*.json", "broken/*.json")
	f.Fuzz(func(t *testing.T, data []byte) {
		reg, err := parseJSON(bytes.NewReader(data), 1<<20)
		checkResult(t, reg, err)
	})
}
