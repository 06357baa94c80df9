package stats

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"fris.dev/services/upload/internal/contenttype"
)

func FuzzParse(f *testing.F) {
	f.Add(`<Uploadstats><LastUploadTimestamp>Mon, 23 Nov 2026 10:00:00 CET</LastUploadTimestamp></Uploadstats>`)
	f.Add(`<UploadStats><LastUploadTimestamp>2026-07-23T10:00:00+02:00</LastUploadTimestamp></UploadStats>`)
	f.Add(`<u:Uploadstats xmlns:u="urn:x"><u:LastUploadTimestamp>Thursday, 23-Jul-26 10:00:00 MESZ</u:LastUploadTimestamp></u:Uploadstats>`)
	f.Add(`<Uploadstats><LastUploadTimestamp>Thu Jul 23 10:00:00 2026</LastUploadTimestamp></Uploadstats>`)
	f.Add(`<Uploadstats><LastUploadTimestamp>Thu, 23 Jul 2026 10:00:00 -0130</LastUploadTimestamp></Uploadstats>`)
	epoch, err := Render(time.Time{})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(string(epoch))
	f.Add(`<Uploadstats/>`)
	f.Add(``)
	f.Add(`<UploadStats><LastUploadTimestamp>Mon, 23 Nov 2026 16:19:46 CET</LastUploadTimestamp></UploadStats>`)
	f.Add("<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><Uploadstats><!-- \xe4 --><LastUploadTimestamp>Sun, 01 Mar 2026 01:00:00 UTC</LastUploadTimestamp></Uploadstats>")
	f.Add(`<!DOCTYPE x><Uploadstats/>`)
	f.Add(`<UploadStats><LastUploadTimestamp>Thu, 26 Nov 2026 16:19:46 GMT+01:00</LastUploadTimestamp></UploadStats>`)
	f.Add("<UploadStats><LastUploadTimestamp>Do., 26 M\xe4rz 2026 16:19:46 MEZ</LastUploadTimestamp></UploadStats>")
	f.Add(`<UploadStats><LastUploadTimestamp>Thu, 26 Nov 2026 20:49:46 IST</LastUploadTimestamp></UploadStats>`)
	// The decoder's message echoes an unbounded entity name with invalid UTF-8.
	f.Add("&000000000000" + strings.Repeat("\x9b", 35) + " ")
	f.Fuzz(func(t *testing.T, in string) {
		// The connector's charset too: every byte is a character in it.
		for _, cs := range []contenttype.Charset{contenttype.Unnamed, contenttype.Latin1} {
			check(t, in, cs)
		}
	})
}

func check(t *testing.T, in string, cs contenttype.Charset) {
	at, ok, err := Parse(strings.NewReader(in), cs)
	if err != nil {
		var ie *InvalidError
		if !errors.As(err, &ie) {
			t.Fatalf("error of an unexpected kind: %T %v", err, err)
		}
		if ie.Reason == "" || len(ie.Reason) > 200 || strings.ContainsAny(ie.Reason, "\r\n") {
			t.Fatalf("reason is not one short line: %q", ie.Reason)
		}
		return
	}
	if !ok {
		return
	}
	if at.Location() != time.UTC {
		t.Fatalf("time not in UTC: %v", at)
	}
	// An HTTP-date has four-digit years only.
	if at.Year() < 0 || at.Year() > 9999 {
		return
	}
	// What Render writes of it, Parse reads back to the second.
	doc, err := Render(at)
	if err != nil {
		t.Fatalf("Render(%v): %v", at, err)
	}
	again, ok, err := Parse(bytes.NewReader(doc), contenttype.Unnamed)
	if err != nil || !ok || !again.Equal(at.Truncate(time.Second)) {
		t.Fatalf("%v -> %s -> %v %v %v", at, doc, again, ok, err)
	}
}
