package explorer

import (
	"bytes"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestInquiryFormErrors: what is missing or wrong is said in the page's
// language, the form keeps what was typed, and nothing is created.
func TestInquiryFormErrors(t *testing.T) {
	e, fb, _ := newInqEnv(t)
	b := e.browser()
	b.signIn()
	csrf := csrfOf(t, b.do("GET", InquiriesPath+"/new", nil).Body.String())
	f := inquiryFields(csrf)
	f.Set("label", "")
	f.Del("site")
	f.Set("expires", "2029-12-31")
	f.Set("qb.c.c1.to", "150")        // above the registry's 120
	f.Set("qb.c.c2.v", "tissue_warm") // not permissible
	f.Set("description", "kept <b>text</b>")
	ct, form := multipartForm(t, f, []byte("not a pdf"))
	rec := b.post(InquiriesPath+"?lang=de", ct, form)
	body := rec.Body.String()
	for _, want := range []string{"Geben Sie der Anfrage einen Titel.", "Wählen Sie mindestens einen Zielstandort.", "Der Ablauf muss ein Tag sein",
		"Das Exposé ist keine PDF-Datei", "Einige Bedingungen passen nicht zum Register", "&#34;150&#34; is not allowed", "&#34;tissue_warm&#34; is not allowed",
		"kept &lt;b&gt;text&lt;/b&gt;", `value="150"`, `role="alert"`, `aria-invalid="true"`} {
		if rec.Code != http.StatusBadRequest || !strings.Contains(body, want) {
			t.Fatalf("lacks %q: %d\n%s", want, rec.Code, body)
		}
	}
	if len(fb.ins) != 0 {
		t.Fatal("an invalid form created an inquiry")
	}
	// A good PDF with another mistake: the form asks for the file again.
	f = inquiryFields(csrf)
	f.Set("label", " ")
	ct, form = multipartForm(t, f, []byte(testPDF))
	if rec := b.post(InquiriesPath, ct, form); rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "choose it again") {
		t.Fatalf("a PDF with another mistake: %d\n%s", rec.Code, rec.Body)
	}
	// Too large for the form's limit.
	ct, form = multipartForm(t, inquiryFields(csrf), bytes.Repeat([]byte("%PDF-"), 20<<10))
	if rec := b.post(InquiriesPath, ct, form); rec.Code != http.StatusRequestEntityTooLarge {
		t.Fatalf("too large: %d", rec.Code)
	}
	// A malformed builder is a bad request.
	f = inquiryFields(csrf)
	f.Set("qb.cond", "nogroup.c1")
	ct, form = multipartForm(t, f, nil)
	if rec := b.post(InquiriesPath, ct, form); rec.Code != http.StatusBadRequest || len(fb.ins) != 0 {
		t.Fatalf("malformed builder: %d", rec.Code)
	}
}

// TestBuilderFragments: the pieces htmx fetches: a search's data
// elements, a condition of the element's kind, a group, the preview.
func TestBuilderFragments(t *testing.T) {
	e, _, _ := newInqEnv(t)
	b := e.browser()
	b.signIn()
	rec := b.do("GET", QueryPath+"/elements?qb.ns=mdr16&q=age&g=g1", nil, "HX-Request", "true")
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), `hx-get="/explorer/query/condition?urn=urn%3Amdr16%3Adataelement%3A23%3A1&amp;g=g1"`) {
		t.Fatalf("elements: %d\n%s", rec.Code, rec.Body)
	}
	for urn, want := range map[string]string{urnAge: `type="number" value="" step="1" min="0" max="120"`, urnEnum: `type="checkbox" name="qb.c.`, urnDate: `type="date"`, urnICD: `<option value="like"`} {
		rec := b.do("GET", QueryPath+"/condition?"+url.Values{"urn": {urn}, "g": {"g1"}}.Encode(), nil, "HX-Request", "true")
		if rec.Code != 200 || !strings.Contains(rec.Body.String(), want) || !strings.Contains(rec.Body.String(), `name="qb.cond" value="g1.`) || !strings.Contains(rec.Body.String(), `hx-swap-oob="true"`) {
			t.Fatalf("condition on %s: %d\n%s", urn, rec.Code, rec.Body)
		}
	}
	if rec := b.do("GET", QueryPath+"/condition?urn="+urnAbsent+"&g=g1", nil); rec.Code != 404 {
		t.Fatalf("unknown element: %d", rec.Code)
	}
	if rec := b.do("GET", QueryPath+"/group", nil); rec.Code != 200 || !strings.Contains(rec.Body.String(), `name="qb.group"`) {
		t.Fatalf("group: %d\n%s", rec.Code, rec.Body)
	}
	f := inquiryFields("")
	rec = b.do("GET", QueryPath+"/preview?"+f.Encode(), nil, "HX-Request", "true")
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), "Every condition fits the registry.") || !strings.Contains(rec.Body.String(), "&lt;v:LowerBound&gt;18&lt;/v:LowerBound&gt;") {
		t.Fatalf("preview: %d\n%s", rec.Code, rec.Body)
	}
	f.Set("qb.c.c1.from", "100")
	f.Set("qb.c.c1.to", "20")
	rec = b.do("GET", QueryPath+"/preview?"+f.Encode(), nil)
	if !strings.Contains(rec.Body.String(), "Donor age: “From” is above “to”.") {
		t.Fatalf("preview of a reversed range:\n%s", rec.Body)
	}
}

func TestInquiryMessages(t *testing.T) {
	for k, v := range inquiryMessages {
		if fmt.Sprint(messages[k]) != fmt.Sprint(v) {
			t.Errorf("%s is in both catalogues", k)
		}
	}
	if m := messages.Missing(); len(m) > 0 {
		t.Errorf("texts missing: %v", m)
	}
}

// TestInquiryFormSites: the target sites are the registry's, by their
// names in the page's language, those without an active bank marked; a
// site the registry does not hold (a crafted form value) is refused and
// named, and nothing is created.
func TestInquiryFormSites(t *testing.T) {
	e, fb, _ := newInqEnv(t)
	b := e.browser()
	b.signIn()
	for lang, want := range map[string][]string{
		"en": {"> Site berlin</label>", "> Site dresden <span class=\"hint\">(no active bank yet)</span>"},
		"de": {"> Standort berlin</label>", "> Standort dresden <span class=\"hint\">(noch keine aktive Biobank)</span>"},
	} {
		body := b.do("GET", InquiriesPath+"/new?lang="+lang, nil).Body.String()
		for _, w := range want {
			if !strings.Contains(body, w) {
				t.Fatalf("%s form lacks %q:\n%s", lang, w, body)
			}
		}
	}
	csrf := csrfOf(t, b.do("GET", InquiriesPath+"/new", nil).Body.String())
	f := inquiryFields(csrf)
	f.Add("site", "nosuch")
	ct, form := multipartForm(t, f, nil)
	rec := b.post(InquiriesPath+"?lang=en", ct, form)
	for _, want := range []string{"Not in the site registry: nosuch.", `value="nosuch" checked> nosuch <span class="hint">(not in the site registry)</span>`, `aria-invalid="true"`} {
		if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), want) {
			t.Fatalf("lacks %q: %d\n%s", want, rec.Code, rec.Body)
		}
	}
	if len(fb.ins) != 0 {
		t.Fatal("a form naming an unknown site created an inquiry")
	}
}
