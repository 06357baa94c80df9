package e2e

import (
	"net/http"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

const mdr = "/v3/api/mdr"

func designationTexts(t *testing.T, ds any) []string {
	t.Helper()
	var out []string
	for _, d := range ds.([]any) {
		out = append(out, field(t, d, "designation").(string))
	}
	return out
}

func memberIDs(t *testing.T, results any) []string {
	t.Helper()
	var out []string
	for _, m := range results.([]any) {
		out = append(out, field(t, m, "id").(string))
	}
	return out
}

// wantDesignationShape checks every documented field of a Designation, plus
// `language`, which real clients read.
func wantDesignationShape(t *testing.T, d any) {
	t.Helper()
	m := d.(map[string]any)
	for _, k := range []string{"definition", "designation", "lang", "language"} {
		if _, ok := m[k].(string); !ok {
			t.Fatalf("designation field %q missing or not a string: %v", k, m)
		}
	}
	if m["lang"] != m["language"] {
		t.Fatalf("lang %v != language %v", m["lang"], m["language"])
	}
}

func TestMDR(t *testing.T) {
	t.Parallel()
	s := NewStack(t, Options{})

	t.Run("NamespacesShape", func(t *testing.T) {
		res, b := s.Get(t, mdr+"/namespaces", 200)
		wantHeader(t, res, "Content-Type", "application/json; charset=utf-8")
		v := JSON(t, b).([]any)
		if len(v) != 1 {
			t.Fatalf("want only the public demo namespace, got %v", v)
		}
		ns := v[0].(map[string]any)
		if ns["name"] != "mdr16" || ns["writeable"] != false {
			t.Fatalf("namespace = %v", ns)
		}
		ds := ns["designations"].([]any)
		if len(ds) == 0 {
			t.Fatal("namespace has no designations")
		}
		for _, d := range ds {
			wantDesignationShape(t, d)
		}
	})

	t.Run("NamespaceMembers", func(t *testing.T) {
		_, b := s.Get(t, mdr+"/namespaces/mdr16/members", 200)
		v := JSON(t, b)
		results := field(t, v, "results").([]any)
		if tc := field(t, v, "totalcount").(float64); int(tc) != len(results) {
			t.Fatalf("totalcount %v != len(results) %d", tc, len(results))
		}
		want := []string{
			"urn:mdr16:dataelementgroup:1:1", "urn:mdr16:dataelementgroup:2:1", "urn:mdr16:dataelementgroup:3:1",
			"urn:mdr16:dataelementgroup:4:1", "urn:mdr16:dataelementgroup:5:1", "urn:mdr16:dataelementgroup:6:1",
		}
		if got := memberIDs(t, results); !reflect.DeepEqual(got, want) {
			t.Fatalf("root members = %v, want %v", got, want)
		}
		for _, m := range results {
			if field(t, m, "type") != "DATAELEMENTGROUP" {
				t.Fatalf("member type = %v", field(t, m, "type"))
			}
			wantDesignationShape(t, field(t, m, "designations", 0))
		}
	})

	t.Run("Paging", func(t *testing.T) {
		_, b := s.Get(t, mdr+"/namespaces/mdr16/members?offset=1&limit=2", 200)
		v := JSON(t, b)
		if got := memberIDs(t, field(t, v, "results")); !reflect.DeepEqual(got, []string{"urn:mdr16:dataelementgroup:2:1", "urn:mdr16:dataelementgroup:3:1"}) {
			t.Fatalf("page = %v", got)
		}
		if field(t, v, "totalcount").(float64) != 6 {
			t.Fatalf("totalcount with paging = %v, want the total 6", field(t, v, "totalcount"))
		}
		s.Get(t, mdr+"/namespaces/mdr16/members?offset=-1", 400)
		s.Get(t, mdr+"/namespaces/mdr16/members?limit=abc", 400)
	})

	t.Run("GroupMembersInOrder", func(t *testing.T) {
		_, b := s.Get(t, mdr+"/dataelementgroups/urn:mdr16:dataelementgroup:5:1/members", 200)
		v := JSON(t, b)
		want := []string{"urn:mdr16:dataelement:21:1", "urn:mdr16:dataelement:22:1", "urn:mdr16:dataelement:23:1", "urn:mdr16:dataelement:24:1"}
		if got := memberIDs(t, field(t, v, "results")); !reflect.DeepEqual(got, want) {
			t.Fatalf("members = %v, want %v", got, want)
		}
		if field(t, v, "totalcount").(float64) != 4 {
			t.Fatalf("totalcount = %v", field(t, v, "totalcount"))
		}
		if field(t, v, "results", 0, "type") != "DATAELEMENT" {
			t.Fatalf("type = %v", field(t, v, "results", 0, "type"))
		}
	})

	t.Run("EnumeratedElement", func(t *testing.T) {
		_, b := s.Get(t, mdr+"/dataelements/urn:mdr16:dataelement:23:1", 200)
		v := JSON(t, b)
		if field(t, v, "identification", "urn") != "urn:mdr16:dataelement:23:1" {
			t.Fatalf("identification = %v", field(t, v, "identification"))
		}
		val := field(t, v, "validation").(map[string]any)
		for _, k := range []string{"value_domain_type", "description", "datatype", "format", "maximum_character_quantity", "unit_of_measure", "validation_type", "validation_data", "meanings", "errorMessages"} {
			if _, ok := val[k]; !ok {
				t.Fatalf("validation lacks %q: %v", k, keys(val))
			}
		}
		if val["value_domain_type"] != "ENUMERATED" || val["datatype"] != "enumerated" {
			t.Fatalf("validation = %v", val)
		}
		pvs := val["permissible_values"].([]any)
		if len(pvs) != 4 {
			t.Fatalf("%d permissible values, want 4: %v", len(pvs), pvs)
		}
		for _, pv := range pvs {
			if _, ok := field(t, pv, "value").(string); !ok {
				t.Fatalf("permissible value without value: %v", pv)
			}
			wantDesignationShape(t, field(t, pv, "meanings", 0))
		}
		if n := len(val["meanings"].([]any)); n < 4 {
			t.Fatalf("meanings has %d entries, want at least one per value", n)
		}
		if _, ok := v.(map[string]any)["slots"].([]any); !ok {
			t.Fatalf("slots missing: %v", v)
		}
	})

	t.Run("IntegerRange", func(t *testing.T) {
		_, b := s.Get(t, mdr+"/dataelements/urn:mdr16:dataelement:14:1/validations", 200)
		v := JSON(t, b)
		if field(t, v, "validation_type") != "INTEGERRANGE" || field(t, v, "validation_data") != "0<=x<=120" {
			t.Fatalf("validation = %v", v)
		}
	})

	t.Run("DateTime", func(t *testing.T) {
		_, b := s.Get(t, mdr+"/dataelements/urn:mdr16:dataelement:13:1/validations", 200)
		v := JSON(t, b)
		if field(t, v, "validation_type") != "DATETIME" || field(t, v, "validation_data") != "DIN_5008_WITH_DAYS; HOURS_24_WITH_SECONDS" {
			t.Fatalf("validation = %v", v)
		}
	})

	t.Run("AcceptLanguage", func(t *testing.T) {
		for _, tc := range []struct{ lang, first string }{
			{"de", "Geschlecht biologisch"},
			{"en", "Sex"},
			{"en-US,en;q=0.9,de;q=0.5", "Sex"},
			{"fr, de;q=0.8", "Geschlecht biologisch"},
		} {
			for _, path := range []string{"/dataelements/urn:mdr16:dataelement:23:1", "/dataelements/urn:mdr16:dataelement:23:1/uimodel"} {
				_, b := s.Get(t, mdr+path, 200, "Accept-Language", tc.lang)
				got := designationTexts(t, field(t, JSON(t, b), "designations"))
				if got[0] != tc.first || len(got) != 2 {
					t.Fatalf("%s with Accept-Language %q: designations %v, want %q first and none dropped", path, tc.lang, got, tc.first)
				}
			}
			_, b := s.Get(t, mdr+"/dataelements/urn:mdr16:dataelement:23:1/labels", 200, "Accept-Language", tc.lang)
			if got := designationTexts(t, JSON(t, b)); got[0] != tc.first {
				t.Fatalf("labels with %q = %v", tc.lang, got)
			}
		}
		// Element 25 is stored with English first: German must still come first on request.
		_, b := s.Get(t, mdr+"/dataelements/urn:mdr16:dataelement:25:1/labels", 200, "Accept-Language", "de")
		if got := designationTexts(t, JSON(t, b)); got[0] != "Klinische Daten ID" {
			t.Fatalf("labels of 25 in de = %v", got)
		}
	})

	t.Run("BearerNullIsAnonymous", func(t *testing.T) {
		for _, h := range []string{"Bearer null", "Bearer ", "Bearer not-a-jwt", "Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4Iiwic2NvcGUiOlsibWRyOnNlY3JldCJdfQ.", "Basic Zm9vOmJhcg=="} {
			_, b := s.Get(t, mdr+"/namespaces", 200, "Authorization", h)
			if n := len(JSON(t, b).([]any)); n != 1 {
				t.Fatalf("Authorization %q: %d namespaces", h, n)
			}
			s.Get(t, mdr+"/dataelements/urn:mdr16:dataelement:23:1", 200, "Authorization", h)
		}
	})

	t.Run("NotFoundAndBadRequest", func(t *testing.T) {
		for _, tc := range []struct {
			path string
			code int
		}{
			{"/dataelements/urn:mdr16:dataelement:999:1", 404},
			{"/dataelements/urn:mdr16:dataelement:23:9", 404},
			{"/dataelements/urn:nope:dataelement:1:1", 404},
			{"/dataelements/urn:mdr16:dataelementgroup:5:1", 404},
			{"/dataelementgroups/urn:mdr16:dataelement:23:1/members", 404},
			{"/records/urn:mdr16:record:1:1/members", 404},
			{"/namespaces/nope/members", 404},
			{"/namespaces/nope/search?query=x", 404},
			{"/dataelements/not-a-urn", 400},
			{"/dataelements/urn:mdr16:dataelement:x:1", 400},
			{"/dataelements/urn:mdr16:thing:1:1/labels", 400},
			{"/dataelements/urn:mdr16:dataelement:1", 400},
			{"/dataelementgroups/urn:mdr16:dataelementgroup:0:1/labels", 400},
			{"/namespaces/mdr16/search", 400},
			{"/namespaces/mdr16/search?query=%20", 400},
		} {
			res, b := s.Get(t, mdr+tc.path, tc.code)
			wantHeader(t, res, "Content-Type", "application/json; charset=utf-8")
			body := JSON(t, b)
			if _, ok := field(t, body, "error").(string); !ok {
				t.Fatalf("%s: error body %s", tc.path, b)
			}
			if d, _ := field(t, body, "error_description").(string); d == "" || len(d) > 300 {
				t.Fatalf("%s: error_description %q", tc.path, d)
			}
		}
	})

	t.Run("PercentEncodedAndLatest", func(t *testing.T) {
		_, b := s.Get(t, mdr+"/dataelements/urn%3Amdr16%3Adataelement%3A23%3A1", 200)
		if field(t, JSON(t, b), "identification", "urn") != "urn:mdr16:dataelement:23:1" {
			t.Fatalf("percent-encoded: %s", b)
		}
		_, b = s.Get(t, mdr+"/dataelements/urn:mdr16:dataelement:23:latest", 200)
		if field(t, JSON(t, b), "identification", "urn") != "urn:mdr16:dataelement:23:1" {
			t.Fatalf("latest: %s", b)
		}
		_, b = s.Get(t, mdr+"/dataelementgroups/urn%3Amdr16%3Adataelementgroup%3A5%3Alatest/members", 200)
		if n := len(field(t, JSON(t, b), "results").([]any)); n != 4 {
			t.Fatalf("latest group members: %d", n)
		}
	})

	t.Run("UmlautsIntact", func(t *testing.T) {
		_, b := s.Get(t, mdr+"/dataelements/urn:mdr16:dataelement:30:1/labels", 200)
		if got := designationTexts(t, JSON(t, b)); got[0] != "Körpergröße" {
			t.Fatalf("labels = %q", got)
		}
	})

	t.Run("Search", func(t *testing.T) {
		_, b := s.Get(t, mdr+"/namespaces/mdr16/search?query=SPENDER", 200)
		v := JSON(t, b)
		ids := memberIDs(t, field(t, v, "results"))
		if int(field(t, v, "totalcount").(float64)) != len(ids) {
			t.Fatalf("totalcount != len(results)")
		}
		for _, want := range []string{"urn:mdr16:dataelementgroup:5:1", "urn:mdr16:dataelement:21:1"} {
			if !contains(ids, want) {
				t.Fatalf("search SPENDER = %v, lacks %s", ids, want)
			}
		}
		_, b = s.Get(t, mdr+"/namespaces/mdr16/search?query=k%C3%B6rpergr", 200)
		if ids := memberIDs(t, field(t, JSON(t, b), "results")); !reflect.DeepEqual(ids, []string{"urn:mdr16:dataelement:30:1"}) {
			t.Fatalf("search körpergr = %v", ids)
		}
		_, b = s.Get(t, mdr+"/namespaces/mdr16/search?query=zzzz-nothing", 200)
		if v := JSON(t, b); field(t, v, "totalcount").(float64) != 0 || len(field(t, v, "results").([]any)) != 0 {
			t.Fatalf("empty search = %s", b)
		}
	})

	t.Run("SlotsAndUiModel", func(t *testing.T) {
		_, b := s.Get(t, mdr+"/dataelements/urn:mdr16:dataelement:1:1/slots", 200)
		slots := JSON(t, b).([]any)
		if len(slots) == 0 {
			t.Fatal("no slots")
		}
		for _, sl := range slots {
			if _, ok := field(t, sl, "slot_name").(string); !ok {
				t.Fatalf("slot = %v", sl)
			}
			if _, ok := field(t, sl, "slot_value").(string); !ok {
				t.Fatalf("slot = %v", sl)
			}
		}
		_, b = s.Get(t, mdr+"/dataelements/urn:mdr16:dataelement:14:1/uimodel", 200)
		v := JSON(t, b).(map[string]any)
		if len(v) != 2 || field(t, v, "validation", "validation_type") != "INTEGERRANGE" {
			t.Fatalf("uimodel = %s", b)
		}
		_, b = s.Get(t, mdr+"/dataelementgroups/urn:mdr16:dataelementgroup:5:1/labels", 200)
		if got := designationTexts(t, JSON(t, b)); !reflect.DeepEqual(got, []string{"Spender", "Donor"}) {
			t.Fatalf("group labels = %v", got)
		}
	})

	t.Run("ETag", func(t *testing.T) {
		path := mdr + "/dataelements/urn:mdr16:dataelement:23:1"
		res, b := s.Get(t, path, 200)
		tag := res.Header.Get("ETag")
		if tag == "" || !strings.HasPrefix(tag, `"`) {
			t.Fatalf("ETag = %q", tag)
		}
		res2, b2 := s.Get(t, path, 304, "If-None-Match", tag)
		if len(b2) != 0 || res2.Header.Get("ETag") != tag {
			t.Fatalf("304 body %q, etag %q", b2, res2.Header.Get("ETag"))
		}
		s.Get(t, path, 304, "If-None-Match", `"other", W/`+tag)
		s.Get(t, path, 200, "If-None-Match", `"stale"`)
		// Another language is another representation.
		res3, _ := s.Get(t, path, 200, "Accept-Language", "en", "If-None-Match", tag)
		if res3.Header.Get("ETag") == tag {
			t.Fatal("ETag does not depend on Accept-Language")
		}
		wantContains(t, res.Header.Get("Vary"), "Accept-Language")
		_ = b
	})

	t.Run("MethodNotAllowed", func(t *testing.T) {
		for _, m := range []string{http.MethodPost, http.MethodPut, http.MethodDelete} {
			res, b := s.Do(t, m, mdr+"/namespaces", strings.NewReader("{}"), "Content-Type", "application/json")
			if res.StatusCode != 405 {
				t.Fatalf("%s /namespaces = %d %s", m, res.StatusCode, b)
			}
			wantContains(t, res.Header.Get("Allow"), "GET")
		}
		res, _ := s.Do(t, http.MethodHead, mdr+"/namespaces", nil)
		if res.StatusCode != 200 {
			t.Fatalf("HEAD = %d", res.StatusCode)
		}
		s.Get(t, "/v3/api/mdr/unknown", 404)
		s.Get(t, "/nothing/here", 404)
	})

	t.Run("RequestIDAndCORS", func(t *testing.T) {
		res, _ := s.Get(t, mdr+"/namespaces", 200, "X-Request-Id", "abc-123")
		wantHeader(t, res, "X-Request-Id", "abc-123")
		res, _ = s.Get(t, mdr+"/namespaces", 200)
		if len(res.Header.Get("X-Request-Id")) < 16 {
			t.Fatalf("generated request id %q", res.Header.Get("X-Request-Id"))
		}
		res, _ = s.Get(t, mdr+"/namespaces", 200, "Origin", "https://researcher.example")
		wantHeader(t, res, "Access-Control-Allow-Origin", "*")
		res, _ = s.Do(t, http.MethodOptions, mdr+"/namespaces", nil, "Origin", "https://researcher.example", "Access-Control-Request-Method", "GET", "Access-Control-Request-Headers", "authorization")
		if res.StatusCode != 204 && res.StatusCode != 200 {
			t.Fatalf("preflight = %d", res.StatusCode)
		}
		wantContains(t, strings.ToLower(res.Header.Get("Access-Control-Allow-Headers")), "authorization")
	})

	t.Run("SpoofedIdentityHeadersIgnored", func(t *testing.T) {
		s.MDRCLI(t, 0, "import", filepath.Join("testdata", "extra.json"))
		for _, h := range [][]string{
			{"Grpc-Metadata-X-Fris-Subject", "admin"},
			{"X-Fris-Subject", "admin"},
		} {
			_, b := s.Get(t, mdr+"/namespaces", 200, h[0], h[1], strings.Replace(h[0], "Subject", "Scope", 1), "mdr:secret")
			for _, ns := range JSON(t, b).([]any) {
				if field(t, ns, "name") == "secret" {
					t.Fatalf("header %s revealed the private namespace", h[0])
				}
			}
		}
	})
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func TestGracefulShutdown(t *testing.T) {
	t.Parallel()
	s := NewStack(t, Options{})
	s.Get(t, mdr+"/namespaces", 200)
	if err := s.Gateway.stop(t); err != nil {
		t.Fatalf("gateway exit on SIGTERM: %v", err)
	}
	if err := s.MDR.stop(t); err != nil {
		t.Fatalf("mdr exit on SIGTERM: %v", err)
	}
}

func TestMDROnRedis(t *testing.T) {
	t.Parallel()
	t.Run("redis", func(t *testing.T) { mdrOnRedis(t, Options{Redis: true}) })
	t.Run("cluster", func(t *testing.T) { mdrOnRedis(t, Options{Cluster: true}) })
}

func mdrOnRedis(t *testing.T, o Options) {
	s := NewStack(t, o)
	_, b := s.Get(t, mdr+"/dataelementgroups/urn:mdr16:dataelementgroup:5:1/members", 200)
	want := []string{"urn:mdr16:dataelement:21:1", "urn:mdr16:dataelement:22:1", "urn:mdr16:dataelement:23:1", "urn:mdr16:dataelement:24:1"}
	if got := memberIDs(t, field(t, JSON(t, b), "results")); !reflect.DeepEqual(got, want) {
		t.Fatalf("members on Redis = %v", got)
	}
}

// TestTracePropagation sends a W3C traceparent to the gateway and finds the
// same trace id in the service's log: the trace crosses gateway -> service.
func TestTracePropagation(t *testing.T) {
	t.Parallel()
	s := NewStack(t, Options{GatewayArgs: []string{"-log-level", "debug"}})
	const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	s.Get(t, mdr+"/namespaces/mdr16/members", 200, "traceparent", "00-"+traceID+"-00f067aa0ba902b7-01")
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(s.MDR.logs(), traceID) || !strings.Contains(s.Gateway.logs(), traceID) {
		if time.Now().After(deadline) {
			t.Fatalf("trace id not in both logs\nmdr:\n%s\ngateway:\n%s", s.MDR.logs(), s.Gateway.logs())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestResponseCache proves anonymous registry reads are reused for the
// configured TTL and no longer: with the service gone, a cached path still
// answers until the TTL runs out, an uncached one fails at once.
func TestResponseCache(t *testing.T) {
	// Not parallel: it reads a cached answer within the cache's 2 s after stopping mdr, a window a loaded machine must not close.
	s := NewStack(t, Options{GatewayArgs: []string{"-mdr-cache-ttl", "2s"}})
	path := mdr + "/dataelements/urn:mdr16:dataelement:23:1"
	_, first := s.Get(t, path, 200)
	res, again := s.Get(t, path, 200)
	if res.Header.Get("X-Cache") != "hit" || string(again) != string(first) {
		t.Fatalf("second read not from the cache: %v", res.Header)
	}
	if err := s.MDR.stop(t); err != nil {
		t.Fatal(err)
	}
	stopped := time.Now()
	s.Get(t, path, 200)
	s.Get(t, mdr+"/dataelements/urn:mdr16:dataelement:14:1", 503)
	time.Sleep(time.Until(stopped.Add(2500 * time.Millisecond)))
	s.Get(t, path, 503)
}
