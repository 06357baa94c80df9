package e2e

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	// Zone names as Java prints them, whatever the host has installed.
	_ "time/tzdata"
)

// The site connector (share-client's CentralSearchConnector) replayed byte
// for byte: Apache HttpClient 4 with non-preemptive Basic credentials,
// JAXB-marshalled patients, ids encoded by java.net.URLEncoder and upload
// statistics sent as a Java string (text/plain; charset=ISO-8859-1).

// connector speaks as the deployed client does. Its HTTP client sends no
// credentials until a request of a kind was answered with a Basic
// challenge, and then repeats that request with them.
type uploadConnector struct {
	s          *Stack
	c          site
	challenged map[string]bool // method + operation
}

func newConnector(s *Stack, c site) *uploadConnector {
	return &uploadConnector{s: s, c: c, challenged: map[string]bool{}}
}

// base is the connector's path form.
func (k *uploadConnector) base() string { return k.c.connector() }

// do sends one request the way the connector does and returns the final
// answer; a first request of its kind must be a 401 with the challenge.
func (k *uploadConnector) do(t *testing.T, method, op, path, contentType string, body []byte) (*http.Response, string) {
	t.Helper()
	kind := method + " " + op
	if !k.challenged[kind] {
		res, b := k.send(t, method, path, contentType, body, false)
		if res.StatusCode != http.StatusUnauthorized {
			t.Fatalf("%s %s without credentials = %d, want 401: %s", method, path, res.StatusCode, b)
		}
		if ch := res.Header.Get("WWW-Authenticate"); !regexp.MustCompile(`^Basic realm="[^"]+"$`).MatchString(ch) {
			t.Fatalf("%s %s: challenge %q is not Basic with a realm", method, path, ch)
		}
		k.challenged[kind] = true
	}
	return k.send(t, method, path, contentType, body, true)
}

func (k *uploadConnector) send(t *testing.T, method, path, contentType string, body []byte, withAuth bool) (*http.Response, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var r io.Reader
	if body != nil {
		r = strings.NewReader(string(body))
	}
	req, err := http.NewRequestWithContext(ctx, method, k.s.URL+path, r)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.ContentLength = int64(len(body))
		req.Header.Set("Content-Type", contentType)
	}
	req.Header.Set("User-Agent", "Apache-HttpClient/4.5.13 (Java/1.8.0_292)")
	req.Header.Set("Accept-Encoding", "gzip,deflate")
	if withAuth {
		req.Header.Set("Authorization", basic(k.c.user, k.c.pass))
	}
	res, err := k.s.client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res, string(b)
}

// javaURLEncode is java.net.URLEncoder.encode(s, "UTF-8"): a space is '+',
// '*' '-' '.' '_' and alphanumerics stay, everything else is %XX.
func javaURLEncode(s string) string {
	return strings.NewReplacer("~", "%7E", "%2A", "*").Replace(url.QueryEscape(s))
}

// jaxbPatient is a patient as the connector's JAXB marshaller writes it
// (formatted output, prefixes ns2..ns9 in the order JAXB met the
// namespaces, schemaLocation on the root): containers directly in the
// Patient and the Case (progress, tumour, histology, therapy), a Sample in
// the Patient with its own container, Ref links and a nil Value.
// javaURLEncodeLatin1 is URLEncoder.encode(s, "ISO-8859-1"), as the
// connector encodes patient ids.
func javaURLEncodeLatin1(t *testing.T, s string) string {
	t.Helper()
	b := make([]byte, 0, len(s))
	for _, r := range s {
		if r > 0xff {
			t.Fatalf("%q is not Latin-1", s)
		}
		b = append(b, byte(r))
	}
	return javaURLEncode(string(b))
}

func jaxbPatient(id string) string {
	return `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<ns2:Patient xmlns:ns2="http://schema.samply.de/ccp/Patient" xmlns:ns3="http://schema.samply.de/ccp/Attribute" xmlns:ns4="http://schema.samply.de/ccp/MdrKey" xmlns:ns5="http://schema.samply.de/ccp/Value" xmlns:ns6="http://schema.samply.de/ccp/Container" xmlns:ns7="http://schema.samply.de/ccp/Case" xmlns:ns8="http://schema.samply.de/ccp/Sample" xmlns:ns9="http://schema.samply.de/ccp/Entity" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:schemaLocation="http://schema.samply.de/ccp/Patient http://schema.samply.de/ccp/Patient.xsd" id="` + id + `" dktk_id="DKTK-000123" centraxx_id="28301" idType="PSN">
    <ns3:Attribute>
        <ns4:MdrKey>urn:mdr16:dataelement:23:1</ns4:MdrKey>
        <ns5:Value>female</ns5:Value>
    </ns3:Attribute>
    <ns3:Attribute>
        <ns4:MdrKey>urn:mdr16:dataelement:24:1</ns4:MdrKey>
        <ns5:Value xsi:nil="true"/>
    </ns3:Attribute>
    <ns6:Container id="PROGRESS-1" designation="Progress">
        <ns3:Attribute>
            <ns4:MdrKey>urn:mdr16:dataelement:26:1</ns4:MdrKey>
            <ns5:Value>14.01.2021</ns5:Value>
        </ns3:Attribute>
        <ns6:Container id="THERAPY-1" designation="SystemTherapy">
            <ns3:Attribute>
                <ns4:MdrKey>urn:mdr16:dataelement:34:1</ns4:MdrKey>
                <ns5:Value></ns5:Value>
            </ns3:Attribute>
        </ns6:Container>
        <Ref>
            <EntityId>CASE-1</EntityId>
        </Ref>
    </ns6:Container>
    <ns7:Case id="CASE-1">
        <ns3:Attribute>
            <ns4:MdrKey>urn:mdr16:dataelement:26:1</ns4:MdrKey>
            <ns5:Value>02.04.2019</ns5:Value>
        </ns3:Attribute>
        <ns6:Container id="TUMOUR-1" designation="Tumour">
            <ns3:Attribute>
                <ns4:MdrKey>urn:mdr16:dataelement:27:1</ns4:MdrKey>
                <ns5:Value>C50.4</ns5:Value>
            </ns3:Attribute>
            <ns6:Container id="HISTOLOGY-1" designation="Histology">
                <ns3:Attribute>
                    <ns4:MdrKey>urn:mdr16:dataelement:32:1</ns4:MdrKey>
                    <ns5:Value xsi:nil="true"/>
                </ns3:Attribute>
            </ns6:Container>
        </ns6:Container>
        <Ref>
            <EntityId>SAMPLE-1</EntityId>
            <EntityId>PROGRESS-1</EntityId>
        </Ref>
    </ns7:Case>
    <ns8:Sample id="SAMPLE-1">
        <ns3:Attribute>
            <ns4:MdrKey>urn:mdr16:dataelement:14:1</ns4:MdrKey>
            <ns5:Value>58</ns5:Value>
        </ns3:Attribute>
        <ns6:Container id="ALIQUOT-1" designation="Aliquot">
            <ns3:Attribute>
                <ns4:MdrKey>urn:mdr16:dataelement:17:1</ns4:MdrKey>
                <ns5:Value>minus_sixty_to_minus_eighty_five_degrees</ns5:Value>
            </ns3:Attribute>
        </ns6:Container>
        <Ref>
            <EntityId>CASE-1</EntityId>
        </Ref>
    </ns8:Sample>
</ns2:Patient>
`
}

// selfTestPatient is the minimal patient of the connector's self-test: one
// Case and one Sample, both directly in the Patient.
func selfTestPatient(id string) string {
	return `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<ns2:Patient xmlns:ns2="http://schema.samply.de/ccp/Patient" xmlns:ns3="http://schema.samply.de/ccp/Case" xmlns:ns4="http://schema.samply.de/ccp/Sample" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:schemaLocation="http://schema.samply.de/ccp/Patient http://schema.samply.de/ccp/Patient.xsd" id="` + id + `">
    <ns3:Case id="` + id + `-case"/>
    <ns4:Sample id="` + id + `-sample"/>
</ns2:Patient>
`
}

func TestCompatUpload(t *testing.T) {
	t.Parallel()
	s := NewStack(t, Options{UploadArgs: []string{"-validation", "reject"}})
	seedSites(t, s)
	compatUploadSuite(t, s)
}

func TestCompatUploadRedis(t *testing.T) {
	t.Parallel()
	s := NewStack(t, Options{Redis: true, UploadArgs: []string{"-validation", "reject"}})
	seedSites(t, s)
	compatUploadSuite(t, s)
}

func TestCompatUploadCluster(t *testing.T) {
	t.Parallel()
	s := NewStack(t, Options{Cluster: true, UploadArgs: []string{"-validation", "reject"}})
	seedSites(t, s)
	compatUploadSuite(t, s)
}

// compatUploadSuite runs under -validation reject, the strictest mode: the
// connector's nil and empty values must not cost a patient.
func compatUploadSuite(t *testing.T, s *Stack) {
	t.Run("Patients", func(t *testing.T) {
		k := newConnector(s, charite)
		for _, tc := range []struct{ name, id, path string }{
			{"id ending in ==", "UFNOLTAwMDEyMw==", "UFNOLTAwMDEyMw%3D%3D"},
			{"space as +", "PSN 000124", "PSN+000124"},
			{"literal + as %2B", "a+b/c==", "a%2Bb%2Fc%3D%3D"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				if got := javaURLEncode(tc.id); got != tc.path {
					t.Fatalf("URLEncoder form of %q is %q, the test says %q", tc.id, got, tc.path)
				}
				doc := jaxbPatient(tc.id)
				path := k.base() + "/pats/" + tc.path
				res, body := k.do(t, http.MethodPut, "pats", path, "application/xml", []byte(doc))
				if res.StatusCode != http.StatusCreated || body != "" {
					t.Fatalf("PUT %s = %d %q, want 201 without a body", path, res.StatusCode, body)
				}
				if got := storedDoc(t, s, charite, tc.id); got != doc {
					t.Fatalf("stored document differs from the upload:\n%s", got)
				}
				// The next run uploads it again: 200, still byte for byte.
				res, body = k.do(t, http.MethodPut, "pats", path, "application/xml", []byte(doc))
				if res.StatusCode != http.StatusOK || body != "" {
					t.Fatalf("second PUT %s = %d %q, want 200", path, res.StatusCode, body)
				}
				if got := storedDoc(t, s, charite, tc.id); got != doc {
					t.Fatal("re-uploaded document differs")
				}
			})
		}
		// The summary counts what the document holds.
		list := s.UploadCLI(t, 0, "patients", "-site", charite.id, "-teiler", charite.teiler, "-prefix", "PSN ")
		if !regexp.MustCompile(`PSN 000124\s+\S+\s+\d+\s+1\s+1\s+9\s+5\s+3\b`).MatchString(list) {
			t.Fatalf("summary (cases, samples, attributes, containers, refs) not as uploaded:\n%s", list)
		}
		// Values are checked wherever they sit: one in a container is refused
		// (422), and the stored patient stays as it was.
		wrong := strings.Replace(jaxbPatient("PSN 000124"), ">minus_sixty_to_minus_eighty_five_degrees<", ">warm<", 1)
		res, body := k.do(t, http.MethodPut, "pats", k.base()+"/pats/PSN+000124", "application/xml", []byte(wrong))
		if res.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(body, `container "ALIQUOT-1": urn:mdr16:dataelement:17:1 = "warm"`) {
			t.Fatalf("a refused value in a container = %d %q", res.StatusCode, body)
		}
		if storedDoc(t, s, charite, "PSN 000124") != jaxbPatient("PSN 000124") {
			t.Fatal("a rejected upload changed the stored patient")
		}
		// A Case holding a Sample is not the model: a clear 400.
		bad := strings.Replace(selfTestPatient("BAD-1"), `<ns3:Case id="BAD-1-case"/>`, `<ns3:Case id="BAD-1-case"><ns4:Sample id="x"/></ns3:Case>`, 1)
		res, body = k.do(t, http.MethodPut, "pats", k.base()+"/pats/BAD-1", "application/xml", []byte(bad))
		if res.StatusCode != http.StatusBadRequest || !strings.Contains(body, "a Sample belongs directly in the Patient") {
			t.Fatalf("Sample in a Case = %d %q", res.StatusCode, body)
		}
	})

	t.Run("Latin1Ids", func(t *testing.T) {
		// URLEncoder.encode(id, "ISO-8859-1"): Müller-1 travels as M%FCller-1.
		k := newConnector(s, charite)
		id := "Müller-1 Straße"
		path := javaURLEncodeLatin1(t, id)
		if path != "M%FCller-1+Stra%DFe" {
			t.Fatalf("the Latin-1 URLEncoder form of %q is %q", id, path)
		}
		res, body := k.do(t, http.MethodPut, "pats", k.base()+"/pats/"+path, "application/xml", []byte(jaxbPatient(id)))
		if res.StatusCode != http.StatusCreated {
			t.Fatalf("PUT a Latin-1 id = %d %q, want 201", res.StatusCode, body)
		}
		if storedDoc(t, s, charite, id) != jaxbPatient(id) {
			t.Fatal("the Latin-1 id's patient is not stored under its id")
		}
		if list := s.UploadCLI(t, 0, "patients", "-site", charite.id, "-teiler", charite.teiler, "-prefix", "Mü"); !strings.Contains(list, id) {
			t.Fatalf("the patient list lacks %q:\n%s", id, list)
		}
		res, body = k.do(t, http.MethodDelete, "pats", k.base()+"/pats/"+path, "", nil)
		if res.StatusCode != http.StatusNoContent {
			t.Fatalf("DELETE a Latin-1 id = %d %q, want 204", res.StatusCode, body)
		}
		if storedDoc(t, s, charite, id) != "" {
			t.Fatal("the Latin-1 id survived its delete")
		}
		// A prefix in Latin-1 too.
		k.do(t, http.MethodPut, "pats", k.base()+"/pats/"+path, "application/xml", []byte(jaxbPatient(id)))
		res, body = k.do(t, http.MethodDelete, "patsPrefix", k.base()+"/patsPrefix/"+javaURLEncodeLatin1(t, "Mü"), "", nil)
		if res.StatusCode != http.StatusNoContent || storedDoc(t, s, charite, id) != "" {
			t.Fatalf("DELETE patsPrefix/M%%FC = %d %q, or the patient survived", res.StatusCode, body)
		}
		// Outside group C such a path stays a 400.
		res, raw := s.Do(t, http.MethodGet, "/v3/api/mdr/dataelements/M%FCller", nil)
		if res.StatusCode != http.StatusBadRequest || !strings.Contains(string(raw), "not valid UTF-8") {
			t.Fatalf("a Latin-1 registry path = %d %s, want 400", res.StatusCode, raw)
		}
	})

	t.Run("SelfTest", func(t *testing.T) {
		k := newConnector(s, charite)
		ids := []string{"TEST-PATIENT-1", "TEST-PATIENT-2"}
		for _, id := range ids {
			res, body := k.do(t, http.MethodPut, "pats", k.base()+"/pats/"+javaURLEncode(id), "application/xml", []byte(selfTestPatient(id)))
			if res.StatusCode != http.StatusCreated {
				t.Fatalf("self-test PUT %s = %d %q", id, res.StatusCode, body)
			}
			if storedDoc(t, s, charite, id) != selfTestPatient(id) {
				t.Fatalf("self-test patient %s not stored as sent", id)
			}
		}
		res, body := k.do(t, http.MethodDelete, "patsPrefix", k.base()+"/patsPrefix/"+javaURLEncode("TEST-PATIENT-"), "", nil)
		if res.StatusCode != http.StatusNoContent || body != "" {
			t.Fatalf("DELETE patsPrefix = %d %q, want 204", res.StatusCode, body)
		}
		for _, id := range ids {
			if storedDoc(t, s, charite, id) != "" {
				t.Fatalf("%s survived the prefix delete", id)
			}
		}
		if storedDoc(t, s, charite, "UFNOLTAwMDEyMw==") == "" {
			t.Fatal("the prefix delete removed a real patient")
		}
	})

	t.Run("UploadStats", func(t *testing.T) {
		k := newConnector(s, dresden)
		path := k.base() + "/uploadStats"
		const latin1 = "text/plain; charset=ISO-8859-1"
		get := func(t *testing.T) string {
			t.Helper()
			res, body := k.do(t, http.MethodGet, "uploadStats", path, "", nil)
			if res.StatusCode != http.StatusOK {
				t.Fatalf("GET uploadStats = %d %q", res.StatusCode, body)
			}
			wantHeader(t, res, "Content-Type", "application/xml; charset=utf-8")
			if _, err := http.ParseTime(res.Header.Get("Date")); err != nil {
				t.Fatalf("Date %q: %v", res.Header.Get("Date"), err)
			}
			m := regexp.MustCompile(`^<\?xml version="1.0" encoding="UTF-8" standalone="yes"\?>\n<Uploadstats><LastUploadTimestamp>([^<]*)</LastUploadTimestamp></Uploadstats>\n$`).FindStringSubmatch(body)
			if m == nil {
				t.Fatalf("GET uploadStats body: %q", body)
			}
			return m[1]
		}
		put := func(t *testing.T, body string) {
			t.Helper()
			res, b := k.do(t, http.MethodPut, "uploadStats", path, latin1, []byte(body))
			if res.StatusCode != http.StatusOK || b != "" {
				t.Fatalf("PUT uploadStats %q = %d %q, want 200 without a body", body, res.StatusCode, b)
			}
		}
		if got := get(t); got != "Thu, 01 Jan 1970 00:00:00 GMT" {
			t.Fatalf("never uploaded: %q", got)
		}
		// The connector's exact body (JVM zone CET).
		exact := time.Date(2026, 11, 23, 15, 19, 46, 0, time.UTC)
		put(t, `<UploadStats><LastUploadTimestamp>Mon, 23 Nov 2026 16:19:46 CET</LastUploadTimestamp></UploadStats>`)
		if got := get(t); time.Now().After(exact) && got != "Mon, 23 Nov 2026 15:19:46 GMT" {
			t.Fatalf("the connector's CET time came back as %q", got)
		}
		// The same, an hour ago, in each zone a JVM may run in, as
		// SimpleDateFormat("E, dd MMM yyyy HH:mm:ss z") writes it: the
		// zone's short name, or GMT+hh:mm for a zone without one (Go's
		// tzdata names these zones as Java does).
		at := time.Now().Add(-time.Hour).Truncate(time.Second)
		zones := []*time.Location{time.FixedZone("CET", 3600), time.FixedZone("CEST", 7200), time.FixedZone("UTC", 0), time.FixedZone("GMT", 0),
			time.FixedZone("GMT+01:00", 3600), time.FixedZone("GMT-03:00", -3*3600), time.FixedZone("GMT+05:45", 5*3600+45*60)}
		for _, name := range []string{"Europe/Berlin", "America/New_York", "Asia/Kolkata", "UTC", "America/Los_Angeles", "Asia/Tokyo", "Australia/Sydney", "Europe/London"} {
			loc, err := time.LoadLocation(name)
			if err != nil {
				t.Fatal(err)
			}
			zones = append(zones, loc)
		}
		for _, z := range zones {
			body := `<UploadStats><LastUploadTimestamp>` + at.In(z).Format("Mon, 02 Jan 2006 15:04:05 MST") + `</LastUploadTimestamp></UploadStats>`
			put(t, body)
			if got, want := get(t), at.UTC().Format(http.TimeFormat); got != want {
				t.Fatalf("%s came back as %q, want %q", body, got, want)
			}
		}
		// An empty body: now.
		before := time.Now().Truncate(time.Second)
		put(t, "")
		got, err := http.ParseTime(get(t))
		if err != nil || got.Before(before) || got.After(time.Now().Add(time.Second)) {
			t.Fatalf("after an empty PUT the time is %v (%v), want now", got, err)
		}
		// A German JVM (CLDR's names) and a time no table can read: the
		// first is stored, the second refused with its reason, and the time
		// stays what it was (never replaced by the server's clock).
		put(t, "<UploadStats><LastUploadTimestamp>Do., 26 Nov. 2026 16:19:46 MEZ</LastUploadTimestamp></UploadStats>")
		if got := get(t); got != "Thu, 26 Nov 2026 15:19:46 GMT" {
			t.Fatalf("the German JVM's time came back as %q", got)
		}
		res, b := k.do(t, http.MethodPut, "uploadStats", path, latin1, []byte(`<UploadStats><LastUploadTimestamp>Thu, 26 Nov 2026 16:19:46 XYZT</LastUploadTimestamp></UploadStats>`))
		if res.StatusCode != http.StatusBadRequest || !strings.Contains(b, "XYZT") {
			t.Fatalf("an unknown zone = %d %q, want 400 naming the time", res.StatusCode, b)
		}
		if got := get(t); got != "Thu, 26 Nov 2026 15:19:46 GMT" {
			t.Fatalf("after a refused time the stored one is %q", got)
		}
		// A charset it cannot read: a clear 415, and nothing changes.
		res, b = k.do(t, http.MethodPut, "uploadStats", path, "text/plain; charset=KOI8-R", []byte(`<UploadStats/>`))
		if res.StatusCode != http.StatusUnsupportedMediaType || !strings.Contains(b, "KOI8-R") && !strings.Contains(b, "koi8-r") {
			t.Fatalf("unknown charset = %d %q, want 415 naming it", res.StatusCode, b)
		}
	})
}
