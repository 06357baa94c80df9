package importer

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	mdrv1 "fris.dev/proto/mdr/v1"
)

func TestParseJSON(t *testing.T) {
	got, err := ParseJSON(openFixture(t, "registry.json"))
	if err != nil {
		t.Fatal(err)
	}
	want := &mdrv1.Registry{Namespaces: []*mdrv1.NamespaceDef{{
		Name:         "demo",
		Private:      true,
		Designations: designationsOf(d("en", "Demo", "A tiny registry")),
		Members:      []string{"urn:demo:dataelementgroup:1:1"},
		Elements: []*mdrv1.Element{
			{
				Urn:          "urn:demo:dataelement:1:1",
				Designations: designationsOf(d("de", "Größe", "Körpergröße in cm")),
				Validation: &mdrv1.Validation{
					ValueDomainType:          "DESCRIBED",
					Datatype:                 "INTEGER",
					Format:                   "0<=x<=250",
					MaximumCharacterQuantity: "3",
					UnitOfMeasure:            "cm",
					ValidationType:           "INTEGERRANGE",
					ValidationData:           "0<=x<=250",
				},
				Slots:  []*mdrv1.Slot{{SlotName: "source", SlotValue: "survey"}},
				Status: "RELEASED",
			},
			{
				Urn:          "urn:demo:dataelementgroup:1:1",
				Designations: designationsOf(d("en", "Body", "Body measures")),
				Members:      []string{"urn:demo:dataelement:1:1"},
				Status:       "RELEASED",
			},
		},
	}}}
	assertEqual(t, got, want)
}

func TestParseJSONBroken(t *testing.T) {
	tests := []struct {
		file string
		want string
	}{
		{"unknown-field.json", `unknown field "colour"`},
		{"truncated.json", "unexpected EOF"},
		{"wrong-type.json", `unexpected token "demo"`},
	}
	seen := map[string]bool{}
	for _, tt := range tests {
		seen[tt.file] = true
		t.Run(tt.file, func(t *testing.T) {
			reg, err := ParseJSON(openFixture(t, filepath.Join("broken", tt.file)))
			if reg != nil {
				t.Errorf("got a registry along with the error")
			}
			assertErrorMentions(t, err, tt.want)
			assertErrorMentions(t, err, "importer: FRIS JSON: ")
		})
	}
	files, _ := filepath.Glob(filepath.Join("testdata", "broken", "*.json"))
	for _, f := range files {
		if !seen[filepath.Base(f)] {
			t.Errorf("fixture %s is not tested", f)
		}
	}
}

func TestParseJSONSizeLimit(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "registry.json"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := parseJSON(bytes.NewReader(data), int64(len(data))); err != nil {
		t.Fatalf("input of exactly the limit: %v", err)
	}
	_, err = parseJSON(bytes.NewReader(data), int64(len(data))-1)
	assertErrorMentions(t, err, "larger than the limit")
}

func TestMaxInputBytes(t *testing.T) {
	// An endless input must be cut off at the real limit. Parse goes through
	// ParseJSON; the XML path shares the limit logic, which
	// TestParseSamplyXMLSizeLimit checks with a small limit: reading 64 MiB
	// through encoding/xml under the race detector takes too long.
	endless := io.MultiReader(strings.NewReader(`{"namespaces": [] `), spaces{})
	_, err := Parse(endless)
	assertErrorMentions(t, err, "larger than the limit of 67108864 bytes")
}

// spaces is an endless stream of blanks.
type spaces struct{}

func (spaces) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	// Doubling copies: a byte loop is slow under the race detector.
	p[0] = ' '
	for n := 1; n < len(p); n *= 2 {
		copy(p[n:], p[:n])
	}
	return len(p), nil
}
