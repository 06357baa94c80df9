package stats

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"fris.dev/services/upload/internal/contenttype"
)

func TestParseTime(t *testing.T) {
	at := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, tc := range []struct {
		in   string
		want time.Time
		ok   bool
	}{
		{"Mon, 23 Nov 2026 10:00:00 GMT", at("2026-11-23T10:00:00Z"), true},
		{"Mon, 23 Nov 2026 10:00:00 UTC", at("2026-11-23T10:00:00Z"), true},
		{"Mon, 23 Nov 2026 10:00:00 CET", at("2026-11-23T09:00:00Z"), true},
		{"Mon, 23 Nov 2026 10:00:00 MEZ", at("2026-11-23T09:00:00Z"), true},
		{"Thu, 23 Jul 2026 10:00:00 CEST", at("2026-07-23T08:00:00Z"), true},
		{"Thu, 23 Jul 2026 10:00:00 MESZ", at("2026-07-23T08:00:00Z"), true},
		{"Thu, 23 Jul 2026 10:00:00 EEST", at("2026-07-23T07:00:00Z"), true},
		{"Thu, 23 Jul 2026 10:00:00 cest", at("2026-07-23T08:00:00Z"), true},
		{"Mon, 23 Nov 2026 10:00:00 UT", at("2026-11-23T10:00:00Z"), true},
		{"Mon, 23 Nov 2026 10:00:00 Z", at("2026-11-23T10:00:00Z"), true},
		{"Mon, 23 Nov 2026 10:00:00 WET", at("2026-11-23T10:00:00Z"), true},
		{"Thu, 23 Jul 2026 10:00:00 WEST", at("2026-07-23T09:00:00Z"), true},
		{"Thu, 23 Jul 2026 10:00:00 BST", at("2026-07-23T09:00:00Z"), true},
		{"Mon, 23 Nov 2026 10:00:00 EET", at("2026-11-23T08:00:00Z"), true},
		{"Mon, 23 Nov 2026 00:30:00 CET", at("2026-11-22T23:30:00Z"), true},
		{"Mon, 23 Nov 2026 10:00:00 -0500", at("2026-11-23T15:00:00Z"), true},
		{"2026-07-23T10:00:00Z", at("2026-07-23T10:00:00Z"), true},
		{"2026-07-23T10:00:00.5+02:00", at("2026-07-23T08:00:00.5Z"), true},
		{"Thursday, 23-Jul-26 10:00:00 CEST", at("2026-07-23T08:00:00Z"), true},
		// Abbreviations time.Parse would take as UTC without a word.
		{"Mon, 23 Nov 2026 10:00:00 PST", at("2026-11-23T18:00:00Z"), true},
		{"Mon, 23 Nov 2026 10:00:00 CETX", time.Time{}, false},
		// SimpleDateFormat("E, dd MMM yyyy HH:mm:ss z") in an English
		// locale: Europe/Berlin, a custom GMT+01:00 zone, America/New_York,
		// Asia/Kolkata, UTC, and zones Java names by offset only.
		{"Thu, 26 Nov 2026 16:19:46 CET", at("2026-11-26T15:19:46Z"), true},
		{"Sun, 26 Jul 2026 16:19:46 CEST", at("2026-07-26T14:19:46Z"), true},
		{"Thu, 26 Nov 2026 16:19:46 GMT+01:00", at("2026-11-26T15:19:46Z"), true},
		{"Thu, 26 Nov 2026 10:19:46 EST", at("2026-11-26T15:19:46Z"), true},
		{"Sun, 26 Jul 2026 10:19:46 EDT", at("2026-07-26T14:19:46Z"), true},
		{"Thu, 26 Nov 2026 20:49:46 IST", at("2026-11-26T15:19:46Z"), true},
		{"Thu, 26 Nov 2026 15:19:46 UTC", at("2026-11-26T15:19:46Z"), true},
		{"Thu, 26 Nov 2026 07:19:46 PST", at("2026-11-26T15:19:46Z"), true},
		{"Thu, 26 Nov 2026 12:19:46 GMT-03:00", at("2026-11-26T15:19:46Z"), true},
		{"Thu, 26 Nov 2026 20:04:46 GMT+04:45", at("2026-11-26T15:19:46Z"), true},
		{"Thu, 26 Nov 2026 16:19:46 UTC+1", at("2026-11-26T15:19:46Z"), true},
		{"Thu, 26 Nov 2026 16:19:46 GMT+15:00", time.Time{}, false},
		{"Thu, 26 Nov 2026 16:19:46 GMT+01:60", time.Time{}, false},
		// A German JVM: CLDR's names (Java 9 on) and the older JRE's.
		{"Do., 26 Nov. 2026 16:19:46 MEZ", at("2026-11-26T15:19:46Z"), true},
		{"Do, 26 Nov 2026 16:19:46 MEZ", at("2026-11-26T15:19:46Z"), true},
		{"Do., 26 März 2026 16:19:46 MEZ", at("2026-03-26T15:19:46Z"), true},
		{"Do, 26 Mrz 2026 16:19:46 MEZ", at("2026-03-26T15:19:46Z"), true},
		{"So., 26 Juli 2026 16:19:46 MESZ", at("2026-07-26T14:19:46Z"), true},
		{"Sa., 26 Dez. 2026 16:19:46 MEZ", at("2026-12-26T15:19:46Z"), true},
		// An ambiguous name is read as its earliest instant: IST as India's,
		// CST as China's (the next upload starts early, never late).
		{"Thu, 26 Nov 2026 23:19:46 CST", at("2026-11-26T15:19:46Z"), true},
		{"Thu, 26 Nov 2026 18:19:46 AST", at("2026-11-26T15:19:46Z"), true},
		{"Mon, 31 Nov 2026 10:00:00 GMT", time.Time{}, false},
		{"Mon, 23 Nov 2026 10:00:00 +2400", time.Time{}, false},
		{"Mon, 32 Nov 2026 10:00:00 GMT", time.Time{}, false},
		{"Mon, 23 Nov 2026 25:00:00 GMT", time.Time{}, false},
		{"GMT", time.Time{}, false},
		{"Thu, 3 Jul 2026 10:00:00 GMT", at("2026-07-03T10:00:00Z"), true},
		{"Thu, 23 Jul 2026 10:00:00 +0200", at("2026-07-23T08:00:00Z"), true},
		{"2026-07-23T10:00:00+02:00", at("2026-07-23T08:00:00Z"), true},
		{"Thursday, 23-Jul-26 10:00:00 GMT", at("2026-07-23T10:00:00Z"), true},
		{"Thu Jul 23 10:00:00 2026", at("2026-07-23T10:00:00Z"), true},
		{"  Mon,  23 Nov 2026 10:00:00   GMT \n", at("2026-11-23T10:00:00Z"), true},
		{"Mon, 23 Nov 2026 10:00:00 XYZ", time.Time{}, false},
		{"Mon, 23 Nov 2026 10:00:00", time.Time{}, false},
		{"yesterday", time.Time{}, false},
		{"", time.Time{}, false},
	} {
		got, ok := ParseTime(tc.in)
		if ok != tc.ok || !got.Equal(tc.want) {
			t.Errorf("ParseTime(%q) = %v, %v; want %v, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		ok       bool
		reason   string
	}{
		{"spec", `<?xml version="1.0"?><Uploadstats><LastUploadTimestamp>Mon, 23 Nov 2026 10:00:00 GMT</LastUploadTimestamp></Uploadstats>`, true, ""},
		{"camel case", `<UploadStats><LastUploadTimestamp>Mon, 23 Nov 2026 10:00:00 GMT</LastUploadTimestamp></UploadStats>`, true, ""},
		{"namespaced", `<u:Uploadstats xmlns:u="urn:x"><u:LastUploadTimestamp>Mon, 23 Nov 2026 10:00:00 GMT</u:LastUploadTimestamp></u:Uploadstats>`, true, ""},
		{"no timestamp", `<Uploadstats/>`, false, ""},
		{"bad timestamp", `<Uploadstats><LastUploadTimestamp>soon</LastUploadTimestamp></Uploadstats>`, false, `LastUploadTimestamp "soon" is not a time`},
		{"wrong root", `<Stats/>`, false, "root element must be Uploadstats"},
		{"malformed", `<Uploadstats><LastUploadTimestamp>`, false, "malformed XML"},
		// An empty body means "now", like a document without a time.
		{"empty", ``, false, ""},
		{"blank", " \r\n\t", false, ""},
		{"comment only", `<!-- x -->`, false, "no root element"},
		{"doctype", `<!DOCTYPE x><Uploadstats/>`, false, "DOCTYPE"},
		{"too large", `<Uploadstats>` + strings.Repeat(" ", MaxBytes) + `</Uploadstats>`, false, "larger than"},
		{"one byte over", `<Uploadstats>` + strings.Repeat(" ", MaxBytes-len(`<Uploadstats></Uploadstats>`)+1) + `</Uploadstats>`, false, "larger than"},
		{"exactly the limit", `<Uploadstats>` + strings.Repeat(" ", MaxBytes-len(`<Uploadstats></Uploadstats>`)) + `</Uploadstats>`, false, ""},
		{"namespaced default", `<Uploadstats xmlns="urn:x"><LastUploadTimestamp> Mon, 23 Nov 2026 10:00:00 GMT </LastUploadTimestamp></Uploadstats>`, true, ""},
		{"empty timestamp", `<Uploadstats><LastUploadTimestamp/></Uploadstats>`, false, ""},
		{"unknown zone", `<Uploadstats><LastUploadTimestamp>Mon, 23 Nov 2026 10:00:00 XYZ</LastUploadTimestamp></Uploadstats>`, false, "is not a time with a known zone"},
		{"blank timestamp", `<Uploadstats><LastUploadTimestamp> </LastUploadTimestamp></Uploadstats>`, false, ""},
		{"lower-case root", `<uploadstats/>`, false, "root element must be Uploadstats"},
		{"two roots", `<Uploadstats/><Uploadstats/>`, false, "more than one root"},
		{"entity", `<Uploadstats><LastUploadTimestamp>&x;</LastUploadTimestamp></Uploadstats>`, false, "malformed XML"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok, err := Parse(strings.NewReader(tc.in), contenttype.Unnamed)
			if tc.reason != "" {
				var ie *InvalidError
				if !errors.As(err, &ie) || !strings.Contains(ie.Reason, tc.reason) {
					t.Fatalf("err = %v, want %q", err, tc.reason)
				}
				return
			}
			if err != nil || ok != tc.ok {
				t.Fatalf("Parse = %v, %v, %v", got, ok, err)
			}
			if ok && !got.Equal(time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)) {
				t.Fatalf("time = %v", got)
			}
		})
	}
}

func TestParseCharset(t *testing.T) {
	connector := `<UploadStats><LastUploadTimestamp>Mon, 23 Nov 2026 11:00:00 CET</LastUploadTimestamp></UploadStats>`
	latin := "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><UploadStats><!-- Stra\xdfe --><LastUploadTimestamp>Mon, 23 Nov 2026 10:00:00 GMT</LastUploadTimestamp></UploadStats>"
	for _, tc := range []struct {
		name, in string
		cs       contenttype.Charset
		ok       bool
		err      string
	}{
		{"connector", connector, contenttype.Latin1, true, ""},
		{"utf-8", connector, contenttype.UTF8, true, ""},
		{"unnamed", connector, contenttype.Unnamed, true, ""},
		{"latin1 byte by header", latin, contenttype.Latin1, true, ""},
		// Without a charset the declaration says how to read the body.
		{"latin1 byte by declaration", latin, contenttype.Unnamed, true, ""},
		{"header wins", strings.Replace(latin, "ISO-8859-1", "KOI8-R", 1), contenttype.Latin1, true, ""},
		{"declaration alias", strings.Replace(latin, "ISO-8859-1", "latin1", 1), contenttype.Unnamed, true, ""},
		{"unknown declaration", strings.Replace(latin, "ISO-8859-1", "KOI8-R", 1), contenttype.Unnamed, false, `encoding "KOI8-R" is not supported`},
		{"empty", "", contenttype.Latin1, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok, err := Parse(strings.NewReader(tc.in), tc.cs)
			if tc.err != "" {
				var ie *InvalidError
				if !errors.As(err, &ie) || !strings.Contains(ie.Reason, tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || ok != tc.ok {
				t.Fatalf("Parse = %v, %v, %v", got, ok, err)
			}
			if ok && !got.Equal(time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)) {
				t.Fatalf("time = %v", got)
			}
		})
	}
}

func TestRender(t *testing.T) {
	for _, tc := range []struct {
		at    time.Time
		stamp string
	}{
		// Never uploaded: the epoch, so the connector sends everything.
		{time.Time{}, "Thu, 01 Jan 1970 00:00:00 GMT"},
		{time.Unix(0, 0), "Thu, 01 Jan 1970 00:00:00 GMT"},
		{time.Date(2026, 11, 23, 10, 0, 0, 999999999, time.FixedZone("CET", 3600)), "Mon, 23 Nov 2026 09:00:00 GMT"},
	} {
		got, err := Render(tc.at)
		want := `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>` + "\n" +
			"<Uploadstats><LastUploadTimestamp>" + tc.stamp + "</LastUploadTimestamp></Uploadstats>\n"
		if err != nil || string(got) != want {
			t.Errorf("Render(%v) = %q, %v; want %q", tc.at, got, err, want)
		}
	}
}

func TestRenderRoundTrip(t *testing.T) {
	for _, at := range []time.Time{
		time.Unix(0, 0),
		time.Date(2026, 11, 23, 10, 0, 0, 123456789, time.FixedZone("CET", 3600)),
		time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC),
		time.Date(1, 1, 1, 0, 0, 1, 0, time.UTC),
	} {
		doc, err := Render(at)
		if err != nil {
			t.Fatal(err)
		}
		// As the connector would send it back, in its charset too.
		for _, cs := range []contenttype.Charset{contenttype.Unnamed, contenttype.UTF8, contenttype.Latin1} {
			got, ok, err := Parse(bytes.NewReader(doc), cs)
			if err != nil || !ok || !got.Equal(at.Truncate(time.Second)) || got.Location() != time.UTC {
				t.Errorf("Parse(Render(%v), %d) = %v, %v, %v", at, cs, got, ok, err)
			}
		}
	}
}
