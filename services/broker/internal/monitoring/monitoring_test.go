package monitoring

import (
	"strings"
	"testing"

	"fris.dev/pkg/samplyquery"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name    string
		body    string
		want    []Item
		wantErr string
	}{
		{name: "SnakeCase", body: `[{"parameter_name":"bridgehead-teiler","status_text":"ok","exit_status":"0"}]`,
			want: []Item{{"bridgehead-teiler", "ok", "0"}}},
		{name: "CamelCase", body: `[{"parameterName":"bridgehead-ldm-version","statusText":"1.2","exitStatus":"0"},{"parameterName":"x"}]`,
			want: []Item{{"bridgehead-ldm-version", "1.2", "0"}, {"x", "", ""}}},
		{name: "Empty", body: ` [] `, want: []Item{}},
		{name: "UnknownFieldsIgnored", body: `[{"parameter_name":"a","extra":1}]`, want: []Item{{"a", "", ""}}},
		{name: "NotArray", body: `{"parameter_name":"a"}`, wantErr: "JSON array"},
		{name: "Blank", body: ``, wantErr: "JSON array"},
		{name: "Trailing", body: `[] []`, wantErr: "after"},
		{name: "NoName", body: `[{"status_text":"ok"}]`, wantErr: "no parameter_name"},
		{name: "NumberField", body: `[{"parameter_name":1}]`, wantErr: "not a JSON array"},
		{name: "Latin1", body: "[{\"parameter_name\":\"p\",\"status_text\":\"Pr\xfcfung\"}]", want: []Item{{"p", "Prüfung", ""}}},
		{name: "TooManyItems", body: "[" + strings.Repeat(`{"parameter_name":"a"},`, MaxItems) + `{"parameter_name":"a"}]`, wantErr: "more than"},
		{name: "LongField", body: `[{"parameter_name":"a","status_text":"` + strings.Repeat("x", MaxFieldBytes+1) + `"}]`, wantErr: "longer"},
		{name: "TooLarge", body: `[{"parameter_name":"` + strings.Repeat("x", MaxBytes) + `"}]`, wantErr: "larger"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse([]byte(tc.body))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Fatalf("item %d = %+v, want %+v", i, got[i], tc.want[i])
				}
			}
		})
	}
}

func TestReferenceQueryIsNormalForm(t *testing.T) {
	n, err := samplyquery.Normalize([]byte(ReferenceQuery))
	if err != nil {
		t.Fatal(err)
	}
	if n != ReferenceQuery {
		t.Fatalf("not in normal form:\n%s\nwant\n%s", ReferenceQuery, n)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{`[]`, `[{"parameter_name":"a","status_text":"b","exit_status":"0"}]`, `[{"parameterName":"a"}]`, `{}`, `[null]`, "[\"\xff\"]"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		items, err := Parse(b)
		if err != nil {
			return
		}
		if len(items) > MaxItems {
			t.Fatalf("%d items", len(items))
		}
		for _, it := range items {
			if it.ParameterName == "" || len(it.StatusText) > MaxFieldBytes {
				t.Fatalf("bad item %+v", it)
			}
		}
	})
}
