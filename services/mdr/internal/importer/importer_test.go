package importer

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"
)

func TestDetect(t *testing.T) {
	tests := []struct {
		head    string
		want    string
		wantErr string
	}{
		{head: "<?xml version=\"1.0\"?>", want: FormatXML},
		{head: " \r\n\t<export/>", want: FormatXML},
		{head: "{\"namespaces\": []}", want: FormatJSON},
		{head: "\n  {", want: FormatJSON},
		{head: "\xEF\xBB\xBF<export/>", want: FormatXML},
		{head: "", wantErr: "input is empty"},
		{head: " \n ", wantErr: "input is empty"},
		{head: "[1, 2]", wantErr: `unrecognized input starting with '['`},
		{head: "\x00", wantErr: `unrecognized input starting with '\x00'`},
	}
	for _, tt := range tests {
		got, err := Detect([]byte(tt.head))
		if tt.wantErr != "" {
			assertErrorMentions(t, err, tt.wantErr)
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("Detect(%q) = %q, %v; want %q", tt.head, got, err, tt.want)
		}
	}
}

func TestParseDispatches(t *testing.T) {
	for _, name := range []string{"small.xml", "concat.xml", "registry.json"} {
		t.Run(name, func(t *testing.T) {
			got, err := Parse(openFixture(t, name))
			if err != nil {
				t.Fatal(err)
			}
			parse := ParseSamplyXML
			if strings.HasSuffix(name, ".json") {
				parse = ParseJSON
			}
			want, err := parse(openFixture(t, name))
			if err != nil {
				t.Fatal(err)
			}
			assertEqual(t, got, want)
		})
	}
}

func TestParseByteOrderMark(t *testing.T) {
	for _, input := range []string{
		"\xEF\xBB\xBF<export xmlns=\"http://schema.samply.de/mdr/common\"><namespace uuid=\"n\"><name>bom</name></namespace></export>",
		"\xEF\xBB\xBF{\"namespaces\": [{\"name\": \"bom\"}]}",
	} {
		reg, err := Parse(strings.NewReader(input))
		if err != nil {
			t.Fatalf("%q: %v", input, err)
		}
		if got := reg.GetNamespaces()[0].GetName(); got != "bom" {
			t.Errorf("%q: namespace %q, want bom", input, got)
		}
	}
}

func TestParseErrors(t *testing.T) {
	_, err := Parse(strings.NewReader(""))
	assertErrorMentions(t, err, "input is empty")
	_, err = Parse(strings.NewReader(strings.Repeat(" ", 5000) + "{}"))
	assertErrorMentions(t, err, "no XML or JSON in the first 4096 bytes")
	_, err = Parse(strings.NewReader("hello"))
	assertErrorMentions(t, err, "unrecognized input")
	_, err = Parse(iotest.ErrReader(errors.New("disk on fire")))
	assertErrorMentions(t, err, "reading input: disk on fire")
	_, err = Parse(openFixture(t, filepath.Join("broken", "dangling-sub.xml")))
	assertErrorMentions(t, err, `sub "missing-si" not found`)
	_, err = Parse(openFixture(t, filepath.Join("broken", "unknown-field.json")))
	assertErrorMentions(t, err, `unknown field "colour"`)
	// A reader that fails after the sniffed head.
	_, err = Parse(iotest.TimeoutReader(strings.NewReader("<export xmlns=\"http://schema.samply.de/mdr/common\">" + strings.Repeat(" ", 10000))))
	assertErrorMentions(t, err, "timeout")
}
