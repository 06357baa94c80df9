package stats

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"
)

// format writes t the way the gateway writes the GET document.
func format(t time.Time) string { return t.UTC().Format(http.TimeFormat) }

func FuzzParse(f *testing.F) {
	f.Add(`<Uploadstats><LastUploadTimestamp>Mon, 23 Nov 2026 10:00:00 CET</LastUploadTimestamp></Uploadstats>`)
	f.Add(`<UploadStats><LastUploadTimestamp>2026-07-23T10:00:00+02:00</LastUploadTimestamp></UploadStats>`)
	f.Add(`<Uploadstats/>`)
	f.Fuzz(func(t *testing.T, in string) {
		at, ok, err := Parse(strings.NewReader(in))
		if err != nil {
			var ie *InvalidError
			if !errors.As(err, &ie) {
				t.Fatalf("error of an unexpected kind: %T %v", err, err)
			}
			return
		}
		if !ok {
			return
		}
		// What the service stores it writes back in the spec's form, and
		// that must read as the same second.
		doc := `<Uploadstats><LastUploadTimestamp>` + format(at) + `</LastUploadTimestamp></Uploadstats>`
		again, ok, err := Parse(strings.NewReader(doc))
		if at.Year() >= 0 && at.Year() <= 9999 && (err != nil || !ok || !again.Equal(at.Truncate(1e9))) {
			t.Fatalf("%v -> %q -> %v %v %v", at, format(at), again, ok, err)
		}
	})
}
