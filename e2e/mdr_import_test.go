package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestMDRImport changes data, so it has a stack of its own.
func TestMDRImport(t *testing.T) {
	t.Parallel()
	// Imports must show at once: the gateway's 1 s response cache (tested on
	// its own) would let a read made just before an import answer for it.
	s := NewStack(t, Options{GatewayArgs: []string{"-mdr-cache-ttl", "0"}})
	before := s.MDRCLI(t, 0, "namespaces")

	t.Run("BadFilesChangeNothing", func(t *testing.T) {
		dir := t.TempDir()
		bad := map[string]string{
			"malformed.json": `{"namespaces": [`,
			"unknown.json":   `{"namespaces": [{"name": "x", "colour": "red"}]}`,
			"malformed.xml":  `<export xmlns="http://schema.samply.de/mdr/common"><namespace>`,
			"badurn.json":    `{"namespaces": [{"name": "x", "elements": [{"urn": "urn:x:thing:1:1"}]}]}`,
		}
		for name, body := range bad {
			p := filepath.Join(dir, name)
			if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
				t.Fatal(err)
			}
			s.MDRCLI(t, 1, "import", p)
		}
		out := s.MDRCLI(t, 1, "import", filepath.Join("testdata", "dangling.json"))
		wantContains(t, out, "urn:broken:dataelement:99:1")
		if after := s.MDRCLI(t, 0, "namespaces"); after != before {
			t.Fatalf("a rejected import changed the registry:\n%s\n%s", before, after)
		}
		s.Get(t, mdr+"/namespaces/broken/members", 404)
	})

	t.Run("PrivateNamespaceHidden", func(t *testing.T) {
		s.MDRCLI(t, 0, "import", filepath.Join("testdata", "extra.json"))
		out := s.MDRCLI(t, 0, "namespaces")
		wantContains(t, out, "secret")
		_, b := s.Get(t, mdr+"/namespaces", 200)
		var names []string
		for _, ns := range JSON(t, b).([]any) {
			names = append(names, field(t, ns, "name").(string))
		}
		if !reflect.DeepEqual(names, []string{"mdr16", "recs"}) {
			t.Fatalf("public namespaces = %v", names)
		}
		s.Get(t, mdr+"/namespaces/secret/members", 404)
		s.Get(t, mdr+"/namespaces/secret/search?query=hidden", 404)
		s.Get(t, mdr+"/dataelements/urn:secret:dataelement:1:1", 404, "Authorization", "Bearer null")
	})

	t.Run("Records", func(t *testing.T) {
		_, b := s.Get(t, mdr+"/records/urn:recs:record:1:1/members", 200, "Accept-Language", "de")
		arr := JSON(t, b).([]any)
		if len(arr) != 2 {
			t.Fatalf("record members = %s", b)
		}
		for i, want := range []string{"urn:recs:dataelement:2:1", "urn:recs:dataelement:1:1"} {
			if field(t, arr[i], "id") != want || field(t, arr[i], "order").(float64) != float64(i+1) || field(t, arr[i], "type") != "DATAELEMENT" {
				t.Fatalf("record member %d = %v", i, arr[i])
			}
		}
		if first := field(t, arr[1], "designations", 0, "designation"); first != "Gewicht" {
			t.Fatalf("Accept-Language on record members: %v", first)
		}
		_, b = s.Get(t, mdr+"/records/urn:recs:record:1:1/labels", 200)
		if got := designationTexts(t, JSON(t, b)); !reflect.DeepEqual(got, []string{"Body measures", "Körpermaße"}) {
			t.Fatalf("record labels = %v", got)
		}
		_, b = s.Get(t, mdr+"/namespaces/recs/members", 200)
		if ids := memberIDs(t, field(t, JSON(t, b), "results")); !reflect.DeepEqual(ids, []string{"urn:recs:record:1:1", "urn:recs:dataelement:3:2"}) {
			t.Fatalf("recs root = %v", ids)
		}
		if field(t, JSON(t, b), "results", 0, "type") != "RECORD" {
			t.Fatalf("record member type: %s", b)
		}
		_, b = s.Get(t, mdr+"/dataelements/urn:recs:dataelement:3:latest", 200)
		if field(t, JSON(t, b), "identification", "urn") != "urn:recs:dataelement:3:2" {
			t.Fatalf("latest = %s", b)
		}
		// Search lists the newest version only.
		_, b = s.Get(t, mdr+"/namespaces/recs/search?query=code", 200)
		if ids := memberIDs(t, field(t, JSON(t, b), "results")); !reflect.DeepEqual(ids, []string{"urn:recs:dataelement:3:2"}) {
			t.Fatalf("search code = %v", ids)
		}
	})

	t.Run("RealExports", func(t *testing.T) {
		dir := filepath.Join(repoRoot, "services", "mdr", "testdata", "samply-mdr-export")
		full := filepath.Join(dir, "mdr-full.xml")
		s.MDRCLI(t, 0, "import", filepath.Join(dir, "mdr16-gba.xml"))
		first := s.MDRCLI(t, 0, "import", full)
		_, b1 := s.Get(t, mdr+"/namespaces", 200)
		snap := func() string {
			var sb strings.Builder
			_, b := s.Get(t, mdr+"/namespaces/mdr16/members", 200)
			sb.Write(b)
			for _, id := range memberIDs(t, field(t, JSON(t, b), "results")) {
				_, mb := s.Get(t, mdr+"/dataelementgroups/"+id+"/members", 200)
				sb.Write(mb)
			}
			return sb.String()
		}
		before := snap()
		second := s.MDRCLI(t, 0, "import", full)
		if strings.Fields(first)[1] != strings.Fields(second)[1] {
			t.Fatalf("re-import reports different counts: %q vs %q", first, second)
		}
		_, b2 := s.Get(t, mdr+"/namespaces", 200)
		if string(b1) != string(b2) || snap() != before {
			t.Fatal("re-importing mdr-full.xml changed what the registry serves")
		}
		fmt.Fprintln(os.Stderr, "imported mdr-full.xml:", strings.TrimSpace(second))
	})
}
