package e2e

import (
	"bytes"
	"mime/multipart"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

// csvTable is a replies CSV file without its first line, the query in
// words ("# Query: ...").
func csvTable(s string) string {
	if strings.HasPrefix(s, "# ") {
		_, s, _ = strings.Cut(s, "\n")
	}
	return s
}

// TestExplorerQueryWords: a researcher builds a query with "is not",
// "none of" and "has no value" through the Explorer's form (plain HTTP, as
// a browser without script would); the preview, the inquiry page (English
// and German), the list and the CSV file say it in chips from the demo
// registry's designations and meanings; a chip's button removes its
// condition without saving; the bank reads the query with Neq and IsNull.
func TestExplorerQueryWords(t *testing.T) {
	t.Parallel()
	s, bankA, _ := inquiryStack(t)
	c := signInHTTP(t, s)
	_, page := getPage(t, c, s.URL+"/explorer/inquiries/new")
	m := regexp.MustCompile(`name="csrf_token" value="([^"]+)"`).FindStringSubmatch(page)
	if m == nil {
		t.Fatal("no CSRF token on the form")
	}
	// Sex is none of male, other; (ICD-10 is not C50 or smoking habit has
	// no value); donor age 18 to 65.
	fields := url.Values{"csrf_token": {m[1]}, "label": {"Negations"}, "lastname": {"Lovelace"}, "site": {"charite", "dresden"},
		"qb.ns": {"mdr16"}, "qb.op": {"And"}, "qb.group": {"g", "h"}, "qb.g.g.op": {"And"}, "qb.g.h.op": {"Or"},
		"qb.cond":    {"g.a", "g.d", "h.b", "h.c"},
		"qb.c.a.urn": {"urn:mdr16:dataelement:23:1"}, "qb.c.a.op": {"notin"}, "qb.c.a.v": {"male", "sex_other/intersexual"},
		"qb.c.d.urn": {"urn:mdr16:dataelement:14:1"}, "qb.c.d.from": {"18"}, "qb.c.d.to": {"65"},
		"qb.c.b.urn": {"urn:mdr16:dataelement:27:1"}, "qb.c.b.op": {"neq"}, "qb.c.b.v": {"C50"},
		"qb.c.c.urn": {"urn:mdr16:dataelement:32:1"}, "qb.c.c.op": {"none"}}
	en := []string{`<ul class="chips" aria-label="The query in words">`, `<span class="chip">Sex is none of Male, Other/intersexual`,
		`<span class="chip">Donor age: 18–65`, `<span class="chip-paren" aria-hidden="true">(</span><ul class="chips"><li><span class="chip">Diagnosis ICD-10 is not C50`,
		`<span class="chip-join">or</span> <span class="chip">Smoking habit has no value`}

	// The preview, as htmx fetches it: chips with remove buttons, the XML.
	_, preview := getPage(t, c, s.URL+"/explorer/query/preview?"+fields.Encode())
	for _, want := range append(en, `name="qb.remove" value="c"`, "Every condition fits the registry.", "&lt;Neq&gt;", "&lt;IsNull&gt;") {
		if !strings.Contains(preview, want) {
			t.Fatalf("the preview lacks %s:\n%s", want, preview)
		}
	}

	post := func(f url.Values) (*http.Response, string) {
		t.Helper()
		var body bytes.Buffer
		w := multipart.NewWriter(&body)
		for k, vs := range f {
			for _, v := range vs {
				_ = w.WriteField(k, v)
			}
		}
		_ = w.Close()
		req, _ := http.NewRequest(http.MethodPost, s.URL+"/explorer/inquiries", &body)
		req.Header.Set("Content-Type", w.FormDataContentType())
		req.Header.Set("Origin", s.URL)
		res, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return res, readAll(t, res)
	}
	// A chip's remove button: the form comes back without the condition.
	removal := url.Values{}
	for k, v := range fields {
		removal[k] = v
	}
	removal.Set("qb.remove", "c")
	res, form := post(removal)
	if res.StatusCode != 200 || res.Request.URL.Path != "/explorer/inquiries" || strings.Contains(form, "Smoking habit has no value") ||
		!strings.Contains(form, "Diagnosis ICD-10 is not C50") || !strings.Contains(form, `<option value="notin" selected>`) {
		t.Fatalf("remove: %d at %s\n%s", res.StatusCode, res.Request.URL, form)
	}
	if _, list := getPage(t, c, s.URL+"/explorer/inquiries"); !strings.Contains(list, "You have no inquiries yet.") {
		t.Fatal("removing a condition saved the inquiry")
	}

	res, page = post(fields)
	id := strings.TrimPrefix(res.Request.URL.Path, "/explorer/inquiries/")
	if res.StatusCode != 200 || id == "" || strings.Contains(id, "/") {
		t.Fatalf("create: %d at %s\n%s", res.StatusCode, res.Request.URL, page)
	}
	for _, want := range append(en, "&lt;IsNull&gt;") {
		if !strings.Contains(page, want) {
			t.Fatalf("the inquiry page lacks %s:\n%s", want, page)
		}
	}
	_, de := getPage(t, c, s.URL+"/explorer/inquiries/"+id+"?lang=de")
	for _, want := range []string{`<ul class="chips" aria-label="Die Abfrage in Worten">`, "Geschlecht biologisch ist keiner von Männlich, Andere/intersexuell",
		"Alter des Spenders: 18–65", "Diagnose ICD-10 ist nicht C50", `<span class="chip-join">oder</span> <span class="chip">Raucherstatus hat keinen Wert`} {
		if !strings.Contains(de, want) {
			t.Fatalf("the German page lacks %s:\n%s", want, de)
		}
	}
	_, list := getPage(t, c, s.URL+"/explorer/inquiries?lang=en")
	if !strings.Contains(list, `<td class="words"><ul class="chips" aria-label="The query in words">`) || !strings.Contains(list, "Smoking habit has no value") {
		t.Fatalf("the list:\n%s", list)
	}

	req, _ := http.NewRequest(http.MethodPost, s.URL+"/explorer/inquiries/"+id+"/release", strings.NewReader(url.Values{"csrf_token": {m[1]}, "confirm": {"yes"}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if res, err := c.Do(req); err != nil || res.StatusCode != 200 {
		t.Fatalf("release: %v %v", res, err)
	}
	// What the sites run: the query the broker stores, Neq and IsNull in
	// the Samply query language.
	_, q := s.Get(t, sb+"/inquiries/"+id+"/query", 200, bankA.auth()...)
	for _, want := range []string{
		`<And><Neq><a:Attribute><k:MdrKey>urn:mdr16:dataelement:23:1</k:MdrKey><v:Value>male</v:Value></a:Attribute></Neq><Neq>`,
		`<Neq><a:Attribute><k:MdrKey>urn:mdr16:dataelement:27:1</k:MdrKey><v:Value>C50</v:Value></a:Attribute></Neq>`,
		`<IsNull><k:MdrKey>urn:mdr16:dataelement:32:1</k:MdrKey></IsNull>`} {
		if !strings.Contains(string(q), want) {
			t.Fatalf("the bank reads\n%s\nwithout %s", q, want)
		}
	}
	_, csv := getPage(t, c, s.URL+"/explorer/inquiries/"+id+"/replies.csv?lang=en")
	if want := "# Query: (Sex is none of Male, Other/intersexual and Donor age: 18–65) and (Diagnosis ICD-10 is not C50 or Smoking habit has no value)\n" +
		"site,answered,"; !strings.HasPrefix(csv, want) {
		t.Fatalf("CSV, want %s...:\n%s", want, csv)
	}
}
