package e2e

import (
	"net/http"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// statsDoc is the uploadStats document GET answers, byte for byte.
func statsDoc(stamp string) string {
	return `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>` + "\n" +
		"<Uploadstats><LastUploadTimestamp>" + stamp + "</LastUploadTimestamp></Uploadstats>\n"
}

// TestUploadWire pins group C's answers byte for byte (status, every header
// but Date, body) where the content type and the uploadStats document are
// decided, so moving that logic between gateway and service cannot change
// what a connector sees.
func TestUploadWire(t *testing.T) {
	t.Parallel()
	s := NewStack(t, Options{})
	seedSites(t, s)
	text := func(status int, body string) want {
		return want{status, map[string]string{
			"Content-Type": "text/plain; charset=utf-8", "X-Content-Type-Options": "nosniff",
			"Content-Length": strconv.Itoa(len(body)),
		}, body}
	}
	empty := func(status int) want {
		return want{status, map[string]string{"Content-Length": "0"}, ""}
	}
	stats := func(stamp string) want {
		body := statsDoc(stamp)
		return want{200, map[string]string{
			"Content-Type": "application/xml; charset=utf-8", "Content-Length": strconv.Itoa(len(body)),
			"Cache-Control": "no-store",
		}, body}
	}
	head := stats("Thu, 01 Jan 1970 00:00:00 GMT")
	head.body = ""
	noCreds := text(401, "Basic credentials are required\n")
	noCreds.header["Www-Authenticate"] = basicChalng
	ok := `<Uploadstats><LastUploadTimestamp>Mon, 02 Nov 2026 10:30:00 CET</LastUploadTimestamp></Uploadstats>`
	const patsWant, statsWant = "send application/xml\n", "send application/xml or a text type\n"
	doc := patientDoc("W-1", "Patient", "")
	for _, tc := range []struct {
		name, method, path, body string
		headers                  []string
		want                     want
	}{
		{"stats never uploaded, spec form", "GET", charite.spec() + "/uploadStats", "", charite.auth(), stats("Thu, 01 Jan 1970 00:00:00 GMT")},
		{"stats never uploaded, connector form", "GET", charite.connector() + "/uploadStats", "", charite.xml(), stats("Thu, 01 Jan 1970 00:00:00 GMT")},
		{"stats GET ignores the type", "GET", charite.spec() + "/uploadStats", "", append(charite.auth(), "Content-Type", "application/json"), stats("Thu, 01 Jan 1970 00:00:00 GMT")},
		{"stats HEAD", "HEAD", charite.spec() + "/uploadStats", "", charite.auth(), head},
		{"stats without credentials", "GET", charite.spec() + "/uploadStats", "", nil, noCreds},
		{"stats JSON", "PUT", charite.spec() + "/uploadStats", `{}`, append(charite.auth(), "Content-Type", "application/json"),
			text(415, "Content-Type application/json is not supported: "+statsWant)},
		{"stats JSON without credentials", "PUT", charite.spec() + "/uploadStats", `{}`, []string{"Content-Type", "application/json"},
			text(415, "Content-Type application/json is not supported: "+statsWant)},
		{"stats JSON at another site", "PUT", dresden.spec() + "/uploadStats", `{}`, append(charite.auth(), "Content-Type", "application/json"),
			text(415, "Content-Type application/json is not supported: "+statsWant)},
		{"stats unparseable type", "PUT", charite.spec() + "/uploadStats", ok, append(charite.auth(), "Content-Type", "text/"),
			text(415, "Content-Type text/ is not supported: "+statsWant)},
		{"stats type with a bad parameter", "PUT", charite.spec() + "/uploadStats", ok, append(charite.auth(), "Content-Type", "text/plain; charset"),
			text(415, "Content-Type text/plain; charset is not supported: "+statsWant)},
		{"stats KOI8-R", "PUT", charite.spec() + "/uploadStats", ok, append(charite.auth(), "Content-Type", "text/plain; charset=KOI8-R"),
			text(415, `charset "koi8-r" is not supported: send UTF-8 or ISO-8859-1`+"\n")},
		{"stats long charset", "PUT", charite.spec() + "/uploadStats", ok, append(charite.auth(), "Content-Type", "text/xml; charset="+strings.Repeat("x", 50)),
			text(415, `charset "`+strings.Repeat("x", 40)+`" is not supported: send UTF-8 or ISO-8859-1`+"\n")},
		{"stats quoted charset with spaces and UTF-8", "PUT", charite.spec() + "/uploadStats", ok, append(charite.auth(), "Content-Type", `text/xml; charset=" grüße "`),
			text(415, `charset "grüße" is not supported: send UTF-8 or ISO-8859-1`+"\n")},
		// The one change since the service decides: bytes that are not UTF-8
		// reach it as U+FFFD (before, the gateway echoed "\xff").
		{"stats charset not UTF-8", "PUT", charite.spec() + "/uploadStats", ok, append(charite.auth(), "Content-Type", "text/xml; charset=\"x\xffy\""),
			text(415, "charset \"x\ufffdy\" is not supported: send UTF-8 or ISO-8859-1\n")},
		{"stats malformed", "PUT", charite.spec() + "/uploadStats", `<Uploadstats><Last`, charite.xml(),
			text(400, "malformed XML: XML syntax error on line 1: unexpected EOF\n")},
		{"stats wrong root", "PUT", charite.spec() + "/uploadStats", `<Other/>`, charite.xml(),
			text(400, "root element must be Uploadstats, got Other\n")},
		{"stats declared encoding unknown", "PUT", charite.spec() + "/uploadStats", `<?xml version="1.0" encoding="KOI8-R"?><Uploadstats/>`, charite.auth(),
			text(400, `malformed XML: xml: opening charset "KOI8-R": encoding "KOI8-R" is not supported: send UTF-8 or ISO-8859-1`+"\n")},
		{"stats other site", "PUT", dresden.spec() + "/uploadStats", ok, charite.xml(), text(403, "these credentials may not upload for dresden/teiler1\n")},
		{"stats text/html", "PUT", charite.spec() + "/uploadStats", ok, append(charite.auth(), "Content-Type", "text/html"), empty(200)},
		{"stats the connector's type", "PUT", charite.spec() + "/uploadStats", "<UploadStats><!-- M\xfcnchen --><LastUploadTimestamp>Mon, 02 Nov 2026 10:30:00 CET</LastUploadTimestamp></UploadStats>",
			append(charite.auth(), "Content-Type", "text/plain; charset=ISO-8859-1"), empty(200)},
		{"stats upper case type, spaced charset", "PUT", charite.spec() + "/uploadStats", ok, append(charite.auth(), "Content-Type", `Application/XML; charset=" UTF-8 "`), empty(200)},
		{"stats after upload", "GET", charite.connector() + "/uploadStats", "", charite.auth(), stats("Mon, 02 Nov 2026 09:30:00 GMT")},
		{"stats empty body", "PUT", charite.spec() + "/uploadStats", "", append(charite.auth(), "Content-Type", "text/plain; charset=ISO-8859-1"), empty(200)},
		{"stats after an empty body", "GET", charite.connector() + "/uploadStats", "", charite.auth(), stats(nowStamp)},
		{"patient JSON", "PUT", charite.spec() + "/pats/W-1", doc, append(charite.auth(), "Content-Type", "application/json"),
			text(415, "Content-Type application/json is not supported: "+patsWant)},
		{"patient JSON without credentials", "POST", charite.spec() + "/pats/W-1", doc, []string{"Content-Type", "application/json"},
			text(415, "Content-Type application/json is not supported: "+patsWant)},
		{"patient text/plain", "PUT", charite.connector() + "/pats/W-1", doc, append(charite.auth(), "Content-Type", "text/plain"),
			text(415, "Content-Type text/plain is not supported: "+patsWant)},
		{"patient unparseable type", "PUT", charite.spec() + "/pats/W-1", doc, append(charite.auth(), "Content-Type", "application/xml;;"),
			text(415, "Content-Type application/xml;; is not supported: "+patsWant)},
		{"patient ISO-8859-1", "PUT", charite.spec() + "/pats/W-1", doc, append(charite.auth(), "Content-Type", "application/xml; charset=ISO-8859-1"),
			text(415, `charset "iso-8859-1" is not supported: send UTF-8`+"\n")},
		{"patient bad id before type", "PUT", charite.spec() + "/pats/a%00b", doc, append(charite.auth(), "Content-Type", "application/json"), text(400, "the path holds a NUL byte\n")},
		{"patient US-ASCII", "PUT", charite.spec() + "/pats/W-1", doc, append(charite.auth(), "Content-Type", "application/xml; charset=us-ascii"), empty(201)},
		{"patient +xml", "PUT", charite.spec() + "/pats/W-1", doc, append(charite.auth(), "Content-Type", "application/samply+xml"), empty(200)},
		{"patient text/xml", "POST", charite.spec() + "/pats/W-1", doc, append(charite.auth(), "Content-Type", "text/xml; charset=UTF-8"), empty(200)},
		{"patient without a type", "PUT", charite.spec() + "/pats/W-1", doc, charite.auth(), empty(200)},
		{"patient other site", "PUT", dresden.spec() + "/pats/W-1", doc, charite.xml(), text(403, "these credentials may not upload for dresden/teiler1\n")},
		{"patient malformed", "PUT", charite.spec() + "/pats/W-2", doc[:200], charite.xml(), text(400, "malformed XML: XML syntax error on line 2: unexpected EOF\n")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var res *http.Response
			var b []byte
			if tc.body == "" {
				res, b = s.Do(t, tc.method, tc.path, nil, tc.headers...)
			} else {
				res, b = s.Do(t, tc.method, tc.path, strings.NewReader(tc.body), tc.headers...)
			}
			tc.want.check(t, res, b)
		})
	}
}

// nowStamp in a stats want stands for the server's clock at the request.
const nowStamp = "(now)"

type want struct {
	status int
	header map[string]string
	body   string
}

// check compares status, body and the full header set (Vary: Origin, which
// every answer carries, implied); Date only has to be the server's clock.
func (w want) check(t *testing.T, res *http.Response, body []byte) {
	t.Helper()
	if d, err := http.ParseTime(res.Header.Get("Date")); err != nil || time.Since(d).Abs() > time.Minute {
		t.Errorf("Date = %q: %v", res.Header.Get("Date"), err)
	}
	if stamp := regexp.MustCompile(`<LastUploadTimestamp>([^<]*)<`).FindSubmatch(body); stamp != nil && strings.Contains(w.body, nowStamp) {
		if at, err := http.ParseTime(string(stamp[1])); err != nil || time.Since(at).Abs() > time.Minute {
			t.Errorf("timestamp %q is not now: %v", stamp[1], err)
		}
		w.body = strings.Replace(w.body, nowStamp, string(stamp[1]), 1)
		w.header["Content-Length"] = strconv.Itoa(len(w.body))
	}
	var got, exp []string
	for k, v := range res.Header {
		// Date is the clock's and X-Request-Id is random.
		if k != "Date" && k != "X-Request-Id" {
			got = append(got, k+": "+strings.Join(v, ", "))
		}
	}
	exp = append(exp, "Vary: Origin")
	for k, v := range w.header {
		exp = append(exp, k+": "+v)
	}
	sort.Strings(got)
	sort.Strings(exp)
	if res.StatusCode != w.status || string(body) != w.body || strings.Join(got, "\n") != strings.Join(exp, "\n") {
		t.Fatalf("got %d\n%s\n%q\nwant %d\n%s\n%q", res.StatusCode, strings.Join(got, "\n"), body, w.status, strings.Join(exp, "\n"), w.body)
	}
}
