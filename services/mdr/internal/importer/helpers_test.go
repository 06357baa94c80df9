package importer

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"

	mdrv1 "fris.dev/proto/mdr/v1"
)

func openFixture(t testing.TB, name string) *os.File {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func assertEqual(t testing.TB, got, want proto.Message) {
	t.Helper()
	if !proto.Equal(got, want) {
		opts := prototext.MarshalOptions{Multiline: true}
		t.Fatalf("result differs\ngot:\n%s\nwant:\n%s", opts.Format(got), opts.Format(want))
	}
}

// assertErrorMentions checks an error is present, readable on one line and names
// what went wrong.
func assertErrorMentions(t testing.TB, err error, want string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want one mentioning %q", want)
	}
	if strings.ContainsAny(err.Error(), "\r\n") {
		t.Errorf("error spans several lines: %q", err)
	}
	if !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not mention %q", err, want)
	}
}

func d(lang, designation, definition string) *mdrv1.Designation {
	return &mdrv1.Designation{Lang: lang, Designation: designation, Definition: definition}
}

func designationsOf(ds ...*mdrv1.Designation) []*mdrv1.Designation { return ds }

// elementByURN finds an element anywhere in the registry.
func elementByURN(reg *mdrv1.Registry, urn string) *mdrv1.Element {
	for _, ns := range reg.GetNamespaces() {
		for _, el := range ns.GetElements() {
			if el.GetUrn() == urn {
				return el
			}
		}
	}
	return nil
}

// urnKind of an element's URN: dataelement, dataelementgroup or record.
func kindOf(urn string) string {
	parts := strings.Split(urn, ":")
	if len(parts) != 5 {
		return ""
	}
	return parts[2]
}

// assertMembersResolve checks that every member URN names an element of the
// registry, which the service relies on.
func assertMembersResolve(t testing.TB, reg *mdrv1.Registry) {
	t.Helper()
	for _, ns := range reg.GetNamespaces() {
		members := append([]string(nil), ns.GetMembers()...)
		for _, el := range ns.GetElements() {
			members = append(members, el.GetMembers()...)
		}
		for _, m := range members {
			if elementByURN(reg, m) == nil {
				t.Errorf("namespace %s: member %s is not an element", ns.GetName(), m)
			}
		}
	}
}
