package explorer

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	brokerv1 "fris.dev/proto/broker/v1"
	mdrv1 "fris.dev/proto/mdr/v1"
)

// csvRows is a CSV file of replies without its query line.
func csvRows(s string) string {
	if strings.HasPrefix(s, "# ") {
		_, s, _ = strings.Cut(s, "\n")
	}
	return s
}

// urnOdd is a data element whose designation is made of HTML's special
// characters.
const urnOdd = "urn:mdr16:dataelement:77:1"

// wordsMDR is qbMDR with urnOdd, counting lookups; down makes every
// lookup fail as an unreachable registry would.
type wordsMDR struct {
	*qbMDR
	lookups atomic.Int32
	down    atomic.Bool
}

func (m *wordsMDR) GetDataElement(ctx context.Context, r *mdrv1.UrnRequest, o ...grpc.CallOption) (*mdrv1.DataElement, error) {
	m.lookups.Add(1)
	if m.down.Load() {
		return nil, status.Error(codes.Unavailable, "registry down")
	}
	if r.GetUrn() == urnOdd {
		return &mdrv1.DataElement{Designations: ds(`<i>"R&D"</i>`, `<i>"F&E"</i>`), Validation: &mdrv1.Validation{Datatype: "STRING"}}, nil
	}
	return m.qbMDR.GetDataElement(ctx, r, o...)
}

// wordsFields is an inquiry form with "none of", "has no value", "is not"
// and a designation to escape: (ICD none of C50, C51 or age has no value)
// and tissue is not frozen and odd is <x>.
func wordsFields(csrf string) url.Values {
	return url.Values{
		"csrf_token": {csrf}, "label": {"Negations"}, "lastname": {"Lovelace"}, "site": {"berlin"},
		"qb.ns": {"mdr16"}, "qb.op": {"And"}, "qb.group": {"g1", "g2", "g3"}, "qb.g.g1.op": {"Or"}, "qb.g.g2.op": {"And"}, "qb.g.g3.op": {"And"},
		"qb.cond":     {"g1.c1", "g1.c2", "g2.c3", "g3.c4"},
		"qb.c.c1.urn": {urnICD}, "qb.c.c1.op": {"notin"}, "qb.c.c1.v": {"C50, C51"},
		"qb.c.c2.urn": {urnAge}, "qb.c.c2.op": {"none"},
		"qb.c.c3.urn": {urnEnum}, "qb.c.c3.op": {"notin"}, "qb.c.c3.v": {"tissue_frozen"},
		"qb.c.c4.urn": {urnOdd}, "qb.c.c4.op": {"eq"}, "qb.c.c4.v": {"<x>"},
	}
}

// TestQueryWordsPages: the builder's preview, the form, the inquiry page,
// the list and the CSV file say the query in words, in English and
// German, escaped; a chip removes its condition without saving; an element
// the registry lacks, or a registry that does not answer, leaves its URN.
func TestQueryWordsPages(t *testing.T) {
	e, fb, qb := newInqEnv(t)
	mdr := &wordsMDR{qbMDR: qb}
	e.app.cfg.MDR = mdr
	b := e.browser()
	b.signIn()
	body := b.do("GET", InquiriesPath+"/new", nil).Body.String()
	if !strings.Contains(body, `<div class="qb-words" id="qb-words"><p class="chips-empty">No condition: the query counts every donor.</p></div>`) {
		t.Fatalf("the new form's words:\n%s", body)
	}
	csrf := csrfOf(t, body)

	const odd = `<span class="chip">&lt;i&gt;&#34;R&amp;D&#34;&lt;/i&gt;: &lt;x&gt;`
	en := []string{`<ul class="chips" aria-label="The query in words">`,
		`<li><span class="chip-paren" aria-hidden="true">(</span><ul class="chips"><li><span class="chip">Diagnosis ICD-10 is none of C50, C51`,
		`<li><span class="chip-join">or</span> <span class="chip">Donor age has no value`,
		`<li><span class="chip-join">and</span> <span class="chip">Sample type tissue is not Tissue snap frozen`, odd}
	de := []string{`<ul class="chips" aria-label="Die Abfrage in Worten">`, `Diagnose ICD-10 ist keiner von C50, C51`,
		`<li><span class="chip-join">oder</span> <span class="chip">Spenderalter hat keinen Wert`, `Materialart Gewebe ist nicht Gewebe schockgefroren`, strings.Replace(odd, "R&amp;D", "F&amp;E", 1)}

	// The preview: the words out of band, each chip a remove button.
	rec := b.do("GET", QueryPath+"/preview?"+wordsFields("").Encode(), nil, "HX-Request", "true")
	body = rec.Body.String()
	for _, want := range append(en, `<div class="qb-words" id="qb-words" hx-swap-oob="true">`,
		`<button type="submit" class="chip-remove" name="qb.remove" value="c2" formnovalidate aria-label="Remove the condition Donor age has no value"`,
		"&lt;Neq&gt;", "&lt;IsNull&gt;") {
		if rec.Code != 200 || !strings.Contains(body, want) {
			t.Fatalf("preview lacks %s:\n%s", want, body)
		}
	}
	if strings.Contains(body, "<i>") {
		t.Fatal("a designation's markup reached the page")
	}

	// A chip's button sends the form: the condition is gone, nothing is
	// saved, and a form still being written shows no errors.
	f := wordsFields(csrf)
	f.Set("label", "")
	f.Set("qb.remove", "c2")
	ct, form := multipartForm(t, f, nil)
	rec = b.post(InquiriesPath, ct, form)
	body = rec.Body.String()
	if rec.Code != 200 || strings.Contains(body, `id="qb-c-c2"`) || !strings.Contains(body, `id="qb-c-c1"`) || strings.Contains(body, "has no value</span>") ||
		strings.Contains(body, `role="alert"`) || len(fb.ins) != 0 || !strings.Contains(body, "Diagnosis ICD-10 is none of C50, C51") {
		t.Fatalf("remove: %d, %d inquiries\n%s", rec.Code, len(fb.ins), body)
	}
	// Enter in a field presses the form's first submit button: Save, not a
	// chip's remove button.
	if save, chip := strings.Index(body, `<button type="submit" class="visually-hidden" tabindex="-1" aria-hidden="true">Save draft</button>`), strings.Index(body, "chip-remove"); save < 0 || chip < 0 || save > chip ||
		strings.Contains(body[strings.Index(body, `class="inquiry"`):save], `type="submit"`) {
		t.Fatalf("the form's default button (%d) is not its first, before the chips' (%d)", save, chip)
	}
	// The form offers the conditions' negations, the chosen one selected.
	for _, want := range []string{`<option value="notin" selected>is none of the values chosen</option>`, `<option value="none">has no value</option>`} {
		if !strings.Contains(body, want) {
			t.Fatalf("form lacks %s:\n%s", want, body)
		}
	}

	ct, form = multipartForm(t, wordsFields(csrf), nil)
	if rec := b.post(InquiriesPath, ct, form); rec.Code != http.StatusSeeOther {
		t.Fatalf("create: %d\n%s", rec.Code, rec.Body)
	}
	stored := fb.ins["1"].GetQuery()
	for _, want := range []string{"<IsNull><k:MdrKey>urn:mdr16:dataelement:14:1</k:MdrKey></IsNull>",
		"<And><Neq><a:Attribute><k:MdrKey>urn:mdr16:dataelement:27:1</k:MdrKey><v:Value>C50</v:Value></a:Attribute></Neq><Neq>",
		"<Neq><a:Attribute><k:MdrKey>urn:mdr16:dataelement:15:1</k:MdrKey><v:Value>tissue_frozen</v:Value></a:Attribute></Neq>"} {
		if !strings.Contains(stored, want) {
			t.Fatalf("stored query lacks %s:\n%s", want, stored)
		}
	}
	for lang, wants := range map[string][]string{"en": en, "de": de} {
		for _, page := range []string{InquiriesPath + "/1", InquiriesPath} {
			before := mdr.lookups.Load()
			body := b.do("GET", page+"?lang="+lang, nil).Body.String()
			for _, want := range wants {
				if !strings.Contains(body, want) {
					t.Fatalf("%s (%s) lacks %s:\n%s", page, lang, want, body)
				}
			}
			if strings.Contains(body, "chip-remove") {
				t.Fatalf("%s offers to remove a stored condition", page)
			}
			// One lookup per data element, not per chip or page part.
			if n := mdr.lookups.Load() - before; n != 4 {
				t.Fatalf("%s: %d lookups for 4 data elements", page, n)
			}
		}
	}
	// The XML stays, for experts.
	if body := b.do("GET", InquiriesPath+"/1?lang=en", nil).Body.String(); !strings.Contains(body, "&lt;IsNull&gt;&lt;k:MdrKey&gt;urn:mdr16:dataelement:14:1") {
		t.Fatalf("the inquiry page lost its XML:\n%s", body)
	}
	// The edit form reads the negations back into the builder.
	body = b.do("GET", InquiriesPath+"/1/edit", nil).Body.String()
	for _, want := range []string{`<option value="notin" selected>is none of</option>`, `value="C50, C51"`, `<option value="none" selected>has no value</option>`, `<option value="range">lies in the range</option>`,
		`<option value="notin" selected>is none of the values chosen</option>`, `value="tissue_frozen" checked`} {
		if !strings.Contains(body, want) {
			t.Fatalf("edit form lacks %s:\n%s", want, body)
		}
	}
	if strings.Contains(body, `name="qb.kept"`) {
		t.Fatal("the builder could not show its own negations")
	}

	// The CSV file's first line, in the page's language.
	fb.ins["1"].Status = brokerv1.InquiryStatus_RELEASED
	csv := b.do("GET", InquiriesPath+"/1/replies.csv?lang=de", nil).Body.String()
	if want := "# Abfrage: (Diagnose ICD-10 ist keiner von C50, C51 oder Spenderalter hat keinen Wert) und Materialart Gewebe ist nicht Gewebe schockgefroren und " +
		`<i>"F&E"</i>: <x>` + "\nsite,"; !strings.HasPrefix(csv, want) {
		t.Fatalf("CSV:\n%s\nwant\n%s", csv, want)
	}

	// An element the registry lacks, or a registry down: the URN.
	fb.ins["1"].Query = `<Query><Where><IsNull><MdrKey>` + urnAbsent + `</MdrKey></IsNull><Neq><Attribute><MdrKey>` + urnICD + `</MdrKey><Value>C50</Value></Attribute></Neq></Where></Query>`
	if rec := b.do("GET", InquiriesPath+"/1?lang=en", nil); rec.Code != 200 || !strings.Contains(rec.Body.String(), `<span class="chip">`+urnAbsent+` has no value</span>`) ||
		!strings.Contains(rec.Body.String(), "Diagnosis ICD-10 is not C50") {
		t.Fatalf("unknown element: %d\n%s", rec.Code, rec.Body)
	}
	mdr.down.Store(true)
	for _, page := range []string{InquiriesPath + "/1", InquiriesPath, InquiriesPath + "/1/replies.csv"} {
		if rec := b.do("GET", page, nil); rec.Code != 200 || !strings.Contains(rec.Body.String(), urnICD+" is not C50") {
			t.Fatalf("%s without the registry: %d\n%s", page, rec.Code, rec.Body)
		}
	}
	// A stored query the words cannot read shows its XML only.
	fb.ins["1"].Query = "<Query>"
	if rec := b.do("GET", InquiriesPath+"/1", nil); rec.Code != 200 || strings.Contains(rec.Body.String(), `class="chips`) {
		t.Fatalf("unreadable: %d\n%s", rec.Code, rec.Body)
	}
}

// TestQueryWordsLookupLimit: a page looks up at most maxWordsElements
// data elements, the rest said by their URNs.
func TestQueryWordsLookupLimit(t *testing.T) {
	e, _, qb := newInqEnv(t)
	mdr := &wordsMDR{qbMDR: qb}
	e.app.cfg.MDR = mdr
	var conds strings.Builder
	for i := range maxWordsElements + 20 {
		conds.WriteString("<IsNull><MdrKey>urn:mdr16:dataelement:" + strconv.Itoa(1000+i) + ":1</MdrKey></IsNull>")
	}
	q := &req{lang: "en", ctx: context.Background(), r: httptest.NewRequest("GET", "/explorer/inquiries", nil)}
	w := e.app.wordsOf(q, e.app.view(q, "inq.title"), "<Query><Where>"+conds.String()+"</Where></Query>")
	if n := mdr.lookups.Load(); n != maxWordsElements || w[0].S.Unreadable || len(w[0].S.Parts) != maxWordsElements+20 {
		t.Fatalf("%d lookups, %d parts", n, len(w[0].S.Parts))
	}
}

// TestNegationsChecked: "is none of" sends its values to the registry's
// check like "is one of"; "has no value" and "has any value" send none,
// whatever the form still holds.
func TestNegationsChecked(t *testing.T) {
	e, fb, mdr := newInqEnv(t)
	b := e.browser()
	b.signIn()
	csrf := csrfOf(t, b.do("GET", InquiriesPath+"/new", nil).Body.String())
	f := wordsFields(csrf)
	f.Set("qb.c.c3.v", "tissue_warm") // not permissible
	f.Set("qb.c.c2.from", "150")      // past the registry's 120, but "has no value" asks none
	f.Del("qb.cond")
	f["qb.cond"] = []string{"g1.c1", "g1.c2", "g2.c3"}
	ct, form := multipartForm(t, f, nil)
	rec := b.post(InquiriesPath, ct, form)
	if body := rec.Body.String(); rec.Code != http.StatusBadRequest || !strings.Contains(body, "&#34;tissue_warm&#34; is not allowed") || strings.Contains(body, "&#34;150&#34;") || len(fb.ins) != 0 {
		t.Fatalf("a wrong value to exclude: %d\n%s", rec.Code, body)
	}
	var checked []string
	for _, c := range mdr.checked {
		checked = append(checked, c.GetValue())
	}
	if got := strings.Join(checked, ","); got != "C50,C51,tissue_warm" {
		t.Fatalf("registry checked %s", got)
	}
	// "None of" with nothing to exclude is named on its condition.
	f.Del("qb.c.c3.v")
	ct, form = multipartForm(t, f, nil)
	if rec := b.post(InquiriesPath, ct, form); rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "Choose the values it must not have") {
		t.Fatalf("none of nothing: %d\n%s", rec.Code, rec.Body)
	}
}

func TestCommentSafe(t *testing.T) {
	for in, want := range map[string]string{
		"Sex: Female, Male":              "Sex: Female, Male",
		"X: a, =HYPERLINK(1);+2\t-3, @4": "X: a, '=HYPERLINK(1);'+2\t'-3, '@4",
		"Age: 18–65 and B is not -1":     "Age: 18–65 and B is not -1",
	} {
		if got := commentSafe(in); got != want {
			t.Errorf("%q: %q, want %q", in, got, want)
		}
	}
}
