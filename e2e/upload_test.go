package e2e

import (
	"bytes"
	"encoding/base64"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

const (
	dktk        = "/dktk/sites"
	sitePass    = "charite secret 1"
	site2Pass   = "dresden secret 2"
	basicChalng = `Basic realm="fris"`
)

func basic(user, pass string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pass))
}

// site is one connector's credentials and its two path forms.
type site struct {
	id, teiler, user, pass string
}

func (c site) spec() string      { return dktk + "/" + c.id + "_teiler/" + c.teiler }
func (c site) connector() string { return dktk + "/" + c.id + "/teiler/" + c.teiler }
func (c site) auth() []string    { return []string{"Authorization", basic(c.user, c.pass)} }
func (c site) xml() []string {
	return []string{"Authorization", basic(c.user, c.pass), "Content-Type", "application/xml"}
}

var (
	charite = site{"charite", "teiler1", "charite-teiler1", sitePass}
	dresden = site{"dresden", "teiler1", "dresden-teiler1", site2Pass}
)

func seedSites(t *testing.T, s *Stack) {
	t.Helper()
	for _, c := range []site{charite, dresden} {
		out := s.UploadCLI(t, 0, "create-credential", "-site", c.id, "-teiler", c.teiler, "-password", c.pass, c.user)
		wantContains(t, out, c.user)
	}
}

// patientDoc is a small document in the shape real connectors send; extra
// goes at the end of the Patient.
func patientDoc(id, root, extra string) string {
	return `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<ns1:` + root + ` xmlns:ns1="http://schema.samply.de/ccp/Patient" xmlns:c="http://schema.samply.de/ccp/Case" xmlns:a="http://schema.samply.de/ccp/Attribute" xmlns:k="http://schema.samply.de/ccp/MdrKey" xmlns:v="http://schema.samply.de/ccp/Value" xmlns:s="http://schema.samply.de/ccp/Sample" xmlns:b="http://schema.samply.de/ccp/Container" xmlns:lo="http://schema.samply.de/ccp/LowerBound" xmlns:hi="http://schema.samply.de/ccp/UpperBound" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:schemaLocation="http://schema.samply.de/ccp/Patient Patient.xsd" id="` + id + `">
  <a:Attribute><k:MdrKey>urn:mdr16:dataelement:23:1</k:MdrKey><v:Value>male</v:Value></a:Attribute>
  <c:Case id="` + id + `-c1">
    <a:Attribute><k:MdrKey>urn:mdr16:dataelement:27:1</k:MdrKey><v:Value>C34.1</v:Value></a:Attribute>
    <a:Attribute><k:MdrKey>urn:mdr16:dataelement:31:1</k:MdrKey><lo:LowerBound>20</lo:LowerBound><hi:UpperBound>22.5</hi:UpperBound></a:Attribute>
  </c:Case>
  <s:Sample id="` + id + `-s1">
    <a:Attribute><k:MdrKey>urn:mdr16:dataelement:14:1</k:MdrKey><v:Value>61</v:Value></a:Attribute>
    <b:Container designation="Box 7"><b:Container designation="Tube 3"><a:Attribute><k:MdrKey>urn:mdr16:dataelement:10:1</k:MdrKey><v:Value>2</v:Value></a:Attribute></b:Container></b:Container>
  </s:Sample>` + extra + `
</ns1:` + root + `>
`
}

// upText sends a request and checks status and, for errors, a plain-text body.
func upText(t *testing.T, s *Stack, method, path, body string, want int, headers ...string) (*http.Response, string) {
	t.Helper()
	var r *strings.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	var res *http.Response
	var b []byte
	if r == nil {
		res, b = s.Do(t, method, path, nil, headers...)
	} else {
		res, b = s.Do(t, method, path, r, headers...)
	}
	if res.StatusCode != want {
		t.Fatalf("%s %s = %d, want %d: %s", method, path, res.StatusCode, want, b)
	}
	if want >= 400 {
		wantHeader(t, res, "Content-Type", "text/plain; charset=utf-8")
		if len(bytes.TrimSpace(b)) == 0 {
			t.Fatalf("%s %s: %d without a reason", method, path, want)
		}
	}
	if want == 401 {
		wantHeader(t, res, "WWW-Authenticate", basicChalng)
	}
	return res, string(b)
}

// storedDoc fetches a document through the admin CLI; "" when absent.
func storedDoc(t *testing.T, s *Stack, c site, id string) string {
	t.Helper()
	cmd := append([]string{"patient", "-addr", s.UploadAddr, "-site", c.id, "-teiler", c.teiler}, id)
	out, err := runBin("upload", cmd...)
	if err != nil {
		if strings.Contains(out, "NotFound") || strings.Contains(out, "no patient") {
			return ""
		}
		t.Fatalf("upload patient %s: %v\n%s", id, err, out)
	}
	return out
}

func count(t *testing.T, s *Stack, c site) string {
	t.Helper()
	return strings.TrimSpace(s.UploadCLI(t, 0, "count", "-site", c.id, "-teiler", c.teiler))
}

func TestUpload(t *testing.T) {
	t.Parallel()
	s := NewStack(t, Options{UploadArgs: []string{"-max-document-bytes", "200000"}})
	if s.Upload == nil {
		t.Fatal("the upload binary was not built")
	}
	seedSites(t, s)
	uploadSuite(t, s)

	t.Run("ValidationWarnStoresAndCounts", func(t *testing.T) {
		bad := strings.Replace(patientDoc("WARN-1", "Patient", ""), ">61<", ">161<", 1)
		upText(t, s, http.MethodPut, charite.spec()+"/pats/WARN-1", bad, 201, charite.xml()...)
		res, err := http.Get("http://" + s.UploadOps + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var b bytes.Buffer
		_, _ = b.ReadFrom(res.Body)
		if !regexp.MustCompile(`fris_upload_value_problems_total [1-9]`).Match(b.Bytes()) {
			t.Fatalf("warn mode did not count the refused value:\n%s", b.String())
		}
		wantContains(t, s.Upload.logs(), "stored a value the registry refuses")
	})
}

func TestUploadRedis(t *testing.T) {
	t.Parallel()
	s := NewStack(t, Options{Redis: true, UploadArgs: []string{"-max-document-bytes", "200000"}})
	seedSites(t, s)
	uploadSuite(t, s)
}

// TestUploadCluster runs the suite with every service on a Redis Cluster
// (where create-credential once failed: go-redis refuses a WATCH of no keys
// on a Cluster).
func TestUploadCluster(t *testing.T) {
	t.Parallel()
	s := NewStack(t, Options{Cluster: true, UploadArgs: []string{"-max-document-bytes", "200000"}})
	seedSites(t, s)
	uploadSuite(t, s)
}

// uploadSuite is every endpoint and decided status, on one backend.
func uploadSuite(t *testing.T, s *Stack) {
	t.Run("UploadStatsNeverUploaded", func(t *testing.T) {
		for _, base := range []string{charite.spec(), charite.connector()} {
			res, body := upText(t, s, http.MethodGet, base+"/uploadStats", "", 200, append(charite.auth(), "Content-Type", "application/xml")...)
			wantHeader(t, res, "Content-Type", "application/xml; charset=utf-8")
			if _, err := http.ParseTime(res.Header.Get("Date")); err != nil {
				t.Fatalf("Date header %q: %v", res.Header.Get("Date"), err)
			}
			wantContains(t, body, "<Uploadstats><LastUploadTimestamp>Thu, 01 Jan 1970 00:00:00 GMT</LastUploadTimestamp></Uploadstats>")
		}
	})

	t.Run("Credentials", func(t *testing.T) {
		path := charite.spec() + "/uploadStats"
		upText(t, s, http.MethodGet, path, "", 401)
		upText(t, s, http.MethodGet, path, "", 401, "Authorization", basic(charite.user, "wrong password"))
		upText(t, s, http.MethodGet, path, "", 401, "Authorization", basic("nobody", sitePass))
		upText(t, s, http.MethodGet, path, "", 401, "Authorization", "Bearer abc")
		upText(t, s, http.MethodGet, path, "", 401, "Authorization", "Basic %%%")
		// Valid credentials, another site's paths: 403 on every operation.
		doc := patientDoc("X1", "Patient", "")
		for _, base := range []string{dresden.spec(), dresden.connector()} {
			upText(t, s, http.MethodGet, base+"/uploadStats", "", 403, charite.auth()...)
			upText(t, s, http.MethodPut, base+"/uploadStats", "<Uploadstats/>", 403, charite.xml()...)
			upText(t, s, http.MethodPut, base+"/pats/X1", doc, 403, charite.xml()...)
			upText(t, s, http.MethodDelete, base+"/pats/X1", "", 403, charite.auth()...)
			upText(t, s, http.MethodDelete, base+"/patsPrefix/X", "", 403, charite.auth()...)
		}
		if got := storedDoc(t, s, dresden, "X1"); got != "" {
			t.Fatal("a refused upload was stored")
		}
		// Another teiler of the same site is another owner too.
		upText(t, s, http.MethodGet, dktk+"/charite_teiler/teiler2/uploadStats", "", 403, charite.auth()...)
		// A disabled credential stops working at once.
		s.UploadCLI(t, 0, "create-credential", "-site", "charite", "-teiler", "teiler9", "-password", "temporary pass", "tmp-user")
		tmp := []string{"Authorization", basic("tmp-user", "temporary pass")}
		upText(t, s, http.MethodGet, dktk+"/charite_teiler/teiler9/uploadStats", "", 200, tmp...)
		s.UploadCLI(t, 0, "disable", "tmp-user")
		upText(t, s, http.MethodGet, dktk+"/charite_teiler/teiler9/uploadStats", "", 401, tmp...)
		wantContains(t, s.UploadCLI(t, 0, "credentials"), "tmp-user")
	})

	t.Run("CreateReplaceBothFormsBothRoots", func(t *testing.T) {
		first := patientDoc("P-100", "Patient", "")
		upText(t, s, http.MethodPost, charite.spec()+"/pats/P-100", first, 201, charite.xml()...)
		if got := storedDoc(t, s, charite, "P-100"); got != first {
			t.Fatalf("stored document differs:\n%s", got)
		}
		second := patientDoc("P-100", "patient", `<c:Case id="P-100-c2"/>`)
		upText(t, s, http.MethodPut, charite.connector()+"/pats/P-100", second, 200, charite.xml()...)
		if got := storedDoc(t, s, charite, "P-100"); got != second {
			t.Fatalf("replaced document differs:\n%s", got)
		}
		upText(t, s, http.MethodPost, charite.connector()+"/pats/P-101", patientDoc("P-101", "patient", ""), 201, charite.xml()...)
		upText(t, s, http.MethodPut, charite.spec()+"/pats/P-101", patientDoc("P-101", "Patient", ""), 200, charite.xml()...)
		// The same id at another site is that site's own patient.
		upText(t, s, http.MethodPut, dresden.spec()+"/pats/P-100", patientDoc("P-100", "Patient", ""), 201, dresden.xml()...)
		// The demo document: JAXB's shape, containers in every entity, refs, nil values.
		demo, err := os.ReadFile(filepath.Join(repoRoot, "services/upload/demo/patient.xml"))
		if err != nil {
			t.Fatal(err)
		}
		upText(t, s, http.MethodPut, charite.spec()+"/pats/DEMO-0001", string(demo), 201, charite.xml()...)
		if got := storedDoc(t, s, charite, "DEMO-0001"); got != string(demo) {
			t.Fatal("the demo document did not round-trip byte for byte")
		}
		list := s.UploadCLI(t, 0, "patients", "-site", "charite", "-teiler", "teiler1")
		if !regexp.MustCompile(`DEMO-0001\s+\S+\s+6595\s+2\s+2\s+27\s+7\s+4`).MatchString(list) {
			t.Fatalf("patients list lacks the demo's summary:\n%s", list)
		}
	})

	t.Run("EncodedIDs", func(t *testing.T) {
		// Base64-like ids end in "==", which clients percent-encode.
		id := "aGVsbG8gd29ybGQ=="
		doc := patientDoc(id, "Patient", "")
		upText(t, s, http.MethodPut, charite.spec()+"/pats/aGVsbG8gd29ybGQ%3D%3D", doc, 201, charite.xml()...)
		upText(t, s, http.MethodPut, charite.connector()+"/pats/"+id, doc, 200, charite.xml()...)
		if storedDoc(t, s, charite, id) != doc {
			t.Fatal("encoded id not stored under its decoded value")
		}
		slash := "a/b"
		upText(t, s, http.MethodPut, charite.spec()+"/pats/a%2Fb", patientDoc(slash, "Patient", ""), 201, charite.xml()...)
		upText(t, s, http.MethodDelete, charite.spec()+"/pats/a%2Fb", "", 204, charite.auth()...)
		// Ids whose store key cannot fit: 400 on upload; ids over the
		// gateway's path segment limit (512 bytes): 400 on delete too.
		// Never 500.
		pct := strings.Repeat("%", 500)
		_, body := upText(t, s, http.MethodPut, charite.spec()+"/pats/"+url.PathEscape(pct), patientDoc(pct, "Patient", ""), 400, charite.xml()...)
		wantContains(t, body, "too long")
		_, body = upText(t, s, http.MethodDelete, charite.spec()+"/pats/"+strings.Repeat("x", 1100), "", 400, charite.auth()...)
		wantContains(t, body, "path segment is longer than 512 bytes")
	})

	t.Run("BadDocumentsLeaveNoTrace", func(t *testing.T) {
		before := count(t, s, charite)
		good := patientDoc("P-100", "patient", `<c:Case id="P-100-c2"/>`) // what P-100 holds now
		for _, tc := range []struct {
			name, id, body, reason string
		}{
			{"malformed", "BAD-1", patientDoc("BAD-1", "Patient", "")[:900], "malformed XML"},
			{"mismatched tags", "BAD-11", strings.Replace(patientDoc("BAD-11", "Patient", ""), "</c:Case>", "</c:Cases>", 1), "malformed XML"},
			{"wrong root", "BAD-2", `<Patients xmlns="http://schema.samply.de/ccp/Patient" id="BAD-2"/>`, "root element must be Patient"},
			{"wrong namespace", "BAD-3", `<Patient xmlns="http://schema.samply.de/ccp/Case" id="BAD-3"/>`, "namespace"},
			{"child namespace", "BAD-4", strings.Replace(patientDoc("BAD-4", "Patient", ""), "http://schema.samply.de/ccp/Case", "http://example.org/Case", 1), "not in namespace"},
			{"id differs", "BAD-5", patientDoc("OTHER", "Patient", ""), "the path's patient id"},
			{"no MdrKey", "BAD-6", patientDoc("BAD-6", "Patient", `<a:Attribute><v:Value>1</v:Value></a:Attribute>`), "Attribute without MdrKey"},
			{"no Value", "BAD-7", patientDoc("BAD-7", "Patient", `<a:Attribute><k:MdrKey>urn:mdr16:dataelement:23:1</k:MdrKey></a:Attribute>`), "without Value"},
			{"doctype", "BAD-8", `<!DOCTYPE x [<!ENTITY a "aaaa">]>` + patientDoc("BAD-8", "Patient", ""), "DOCTYPE"},
			{"too deep", "BAD-9", patientDoc("BAD-9", "Patient", `<s:Sample id="s">`+strings.Repeat(`<b:Container>`, 40)+strings.Repeat(`</b:Container>`, 40)+`</s:Sample>`), "nesting deeper"},
			{"empty", "BAD-10", "", "no root element"},
			// A failed replace keeps the old version whole.
			{"failed replace", "P-100", patientDoc("P-100", "Patient", `<c:Case/>`), "Case without id"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				_, body := upText(t, s, http.MethodPut, charite.spec()+"/pats/"+tc.id, tc.body, 400, charite.xml()...)
				wantContains(t, body, tc.reason)
				if strings.Count(strings.TrimSpace(body), "\n") > 0 {
					t.Fatalf("reason is not one line: %q", body)
				}
				if tc.id != "P-100" && storedDoc(t, s, charite, tc.id) != "" {
					t.Fatal("a refused document was stored")
				}
			})
		}
		if got := storedDoc(t, s, charite, "P-100"); got != good {
			t.Fatalf("a failed replace changed the stored patient:\n%s", got)
		}
		// 413: over the upload's -max-document-bytes 200000.
		huge := patientDoc("BIG", "Patient", strings.Repeat(`<c:Case id="x"/>`, 20000))
		upText(t, s, http.MethodPut, charite.spec()+"/pats/BIG", huge, 413, charite.xml()...)
		// 415: not XML, or XML in another charset.
		upText(t, s, http.MethodPut, charite.spec()+"/pats/P-102", patientDoc("P-102", "Patient", ""), 415, append(charite.auth(), "Content-Type", "application/json")...)
		upText(t, s, http.MethodPut, charite.spec()+"/pats/P-102", patientDoc("P-102", "Patient", ""), 415, append(charite.auth(), "Content-Type", "application/xml; charset=iso-8859-1")...)
		// text/xml is XML too.
		upText(t, s, http.MethodPut, charite.spec()+"/pats/P-102", patientDoc("P-102", "Patient", ""), 201, append(charite.auth(), "Content-Type", "text/xml; charset=UTF-8")...)
		if got, want := count(t, s, charite), before; got == want {
			t.Fatalf("count %s after one good upload, was %s", got, want)
		}
		if storedDoc(t, s, charite, "BIG") != "" {
			t.Fatal("a too large document was stored")
		}
	})

	t.Run("UploadStatsPut", func(t *testing.T) {
		stamp := func(c site) string {
			_, body := upText(t, s, http.MethodGet, c.connector()+"/uploadStats", "", 200, c.auth()...)
			m := regexp.MustCompile(`<LastUploadTimestamp>([^<]*)</LastUploadTimestamp>`).FindStringSubmatch(body)
			if m == nil {
				t.Fatalf("no timestamp in %s", body)
			}
			return m[1]
		}
		put := func(c site, body, ct string) {
			t.Helper()
			upText(t, s, http.MethodPut, c.spec()+"/uploadStats", body, 200, append(c.auth(), "Content-Type", ct)...)
		}
		put(charite, `<Uploadstats><LastUploadTimestamp>Mon, 02 Nov 2026 10:30:00 CET</LastUploadTimestamp></Uploadstats>`, "application/xml")
		if got := stamp(charite); got != "Mon, 02 Nov 2026 09:30:00 GMT" {
			t.Fatalf("CET timestamp stored as %q", got)
		}
		put(charite, `<UploadStats><LastUploadTimestamp>Thu, 23 Jul 2026 10:30:00 CEST</LastUploadTimestamp></UploadStats>`, "text/plain")
		if got := stamp(charite); got != "Thu, 23 Jul 2026 08:30:00 GMT" {
			t.Fatalf("CEST timestamp stored as %q", got)
		}
		// The other site's timestamp is its own.
		if got := stamp(dresden); got != "Thu, 01 Jan 1970 00:00:00 GMT" {
			t.Fatalf("dresden sees %q", got)
		}
		// A time that cannot be read is refused, never replaced.
		upText(t, s, http.MethodPut, dresden.spec()+"/uploadStats",
			`<Uploadstats><LastUploadTimestamp>Mon, 02 Nov 2026 10:30:00 XYZ</LastUploadTimestamp></Uploadstats>`, 400, dresden.xml()...)
		// No time at all, or one in the future: the server's clock.
		for _, body := range []string{
			`<Uploadstats/>`,
			`<Uploadstats><LastUploadTimestamp>Fri, 01 Jan 2100 00:00:00 GMT</LastUploadTimestamp></Uploadstats>`,
		} {
			before := time.Now().Add(-2 * time.Second)
			put(dresden, body, "application/xml")
			at, err := http.ParseTime(stamp(dresden))
			if err != nil || at.Before(before.Truncate(time.Second)) || at.After(time.Now().Add(2*time.Second)) {
				t.Fatalf("after %s the timestamp is %v (%v), want now", body, at, err)
			}
		}
		upText(t, s, http.MethodPut, charite.spec()+"/uploadStats", `<Uploadstats><Last`, 400, charite.xml()...)
		upText(t, s, http.MethodPut, charite.spec()+"/uploadStats", `<Other/>`, 400, charite.xml()...)
		upText(t, s, http.MethodPut, charite.spec()+"/uploadStats", `{}`, 415, append(charite.auth(), "Content-Type", "application/json")...)
		// HEAD is GET without the body.
		res, body := upText(t, s, http.MethodHead, charite.spec()+"/uploadStats", "", 200, charite.auth()...)
		if len(body) != 0 || res.Header.Get("Content-Type") != "application/xml; charset=utf-8" {
			t.Fatalf("HEAD: %q %v", body, res.Header)
		}
	})

	t.Run("Delete", func(t *testing.T) {
		doc := func(id string) string { return patientDoc(id, "Patient", "") }
		upText(t, s, http.MethodPut, charite.spec()+"/pats/DEL-1", doc("DEL-1"), 201, charite.xml()...)
		upText(t, s, http.MethodDelete, charite.spec()+"/pats/DEL-1", "", 204, charite.auth()...)
		upText(t, s, http.MethodDelete, charite.connector()+"/pats/DEL-1", "", 404, charite.auth()...)
		if storedDoc(t, s, charite, "DEL-1") != "" {
			t.Fatal("deleted patient still stored")
		}
		// The connector's self-test uploads TEST-... patients and removes them by prefix.
		for _, id := range []string{"TEST-1", "TEST-2", "TEST-30", "TESTX", "KEEP-TEST-1"} {
			upText(t, s, http.MethodPut, charite.spec()+"/pats/"+id, doc(id), 201, charite.xml()...)
		}
		upText(t, s, http.MethodPut, dresden.spec()+"/pats/TEST-1", doc("TEST-1"), 201, dresden.xml()...)
		upText(t, s, http.MethodDelete, charite.connector()+"/patsPrefix/TEST-", "", 204, charite.auth()...)
		for id, kept := range map[string]bool{"TEST-1": false, "TEST-2": false, "TEST-30": false, "TESTX": true, "KEEP-TEST-1": true} {
			if got := storedDoc(t, s, charite, id) != ""; got != kept {
				t.Fatalf("after patsPrefix/TEST- %s stored = %v, want %v", id, got, kept)
			}
		}
		if storedDoc(t, s, dresden, "TEST-1") == "" {
			t.Fatal("a prefix delete reached another site")
		}
		// Nothing matching is fine.
		upText(t, s, http.MethodDelete, charite.spec()+"/patsPrefix/NOTHING", "", 204, charite.auth()...)
	})

	t.Run("PathsAndMethods", func(t *testing.T) {
		res, _ := upText(t, s, http.MethodGet, charite.spec()+"/pats/P-100", "", 405, charite.auth()...)
		wantHeader(t, res, "Allow", "DELETE, POST, PUT")
		res, _ = upText(t, s, http.MethodPost, charite.spec()+"/uploadStats", "", 405, charite.auth()...)
		wantHeader(t, res, "Allow", "GET, HEAD, PUT")
		res, _ = upText(t, s, http.MethodGet, charite.spec()+"/patsPrefix/X", "", 405, charite.auth()...)
		wantHeader(t, res, "Allow", "DELETE")
		upText(t, s, http.MethodPut, charite.spec()+"/pats/%FF", patientDoc("x", "Patient", ""), 400, charite.xml()...)
		for _, p := range []string{"/charite/t/uploadStats", "/charite_teiler/teiler1/pats", "/charite_teiler/teiler1/other", "/charite_teiler/teiler1/pats/a/b", "/_teiler/t/uploadStats"} {
			upText(t, s, http.MethodGet, dktk+p, "", 404, charite.auth()...)
		}
	})
}

func TestUploadValidationReject(t *testing.T) {
	t.Parallel()
	s := NewStack(t, Options{UploadArgs: []string{"-validation", "reject"}})
	seedSites(t, s)
	good := patientDoc("V-1", "Patient", "")
	upText(t, s, http.MethodPut, charite.spec()+"/pats/V-1", good, 201, charite.xml()...)
	// Out of range, not an enumerated value, wrong date format, unknown element.
	bad := strings.NewReplacer(">61<", ">161<", ">male<", ">mann<").Replace(patientDoc("V-1", "Patient",
		`<a:Attribute><k:MdrKey>urn:mdr16:dataelement:26:1</k:MdrKey><v:Value>2021-01-14</v:Value></a:Attribute>`+
			`<a:Attribute><k:MdrKey>urn:mdr16:dataelement:999:1</k:MdrKey><v:Value>x</v:Value></a:Attribute>`))
	_, body := upText(t, s, http.MethodPut, charite.spec()+"/pats/V-1", bad, 422, charite.xml()...)
	for _, want := range []string{
		`sample "V-1-s1": urn:mdr16:dataelement:14:1 = "161": 161 is outside 0<=x<=120`,
		`patient "V-1": urn:mdr16:dataelement:23:1 = "mann": "mann" is not a permissible value`,
		`urn:mdr16:dataelement:26:1 = "2021-01-14": "2021-01-14" is not a date in format DIN_5008_WITH_DAYS`,
		`urn:mdr16:dataelement:999:1 = "x"`,
	} {
		wantContains(t, body, want)
	}
	if got := storedDoc(t, s, charite, "V-1"); got != good {
		t.Fatal("a rejected upload replaced the stored patient")
	}
	upText(t, s, http.MethodPut, charite.spec()+"/pats/V-2", strings.Replace(bad, `id="V-1"`, `id="V-2"`, 1), 422, charite.xml()...)
	if storedDoc(t, s, charite, "V-2") != "" {
		t.Fatal("a rejected new patient was stored")
	}
	// With the registry gone, reject mode refuses to store unchecked values.
	s.MDR.stop(t)
	upText(t, s, http.MethodPut, charite.spec()+"/pats/V-3", patientDoc("V-3", "Patient", ""), 503, charite.xml()...)
	if storedDoc(t, s, charite, "V-3") != "" {
		t.Fatal("an unvalidated upload was stored in reject mode")
	}
}

// runBin runs a built binary and returns its combined output and error.
func runBin(bin string, args ...string) (string, error) {
	out, err := exec.Command(filepath.Join(binDir, bin), withTLS(bin, args)...).CombinedOutput()
	return string(out), err
}
