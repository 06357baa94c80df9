package explorer

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"google.golang.org/grpc"

	mdrv1 "fris.dev/proto/mdr/v1"
)

// catMDR is the builder's registry with a tree: Patient (age, and a
// nested Diagnosis group with its date and ICD code), Sample (the
// enumerated sample type), a record (not a catalogue entry), and a search
// that matches substrings as the registry's does.
type catMDR struct {
	*qbMDR
}

const (
	urnPatient   = "urn:mdr16:dataelementgroup:2:1"
	urnDiagnosis = "urn:mdr16:dataelementgroup:3:1"
	urnSample    = "urn:mdr16:dataelementgroup:4:1"
)

func (m *catMDR) ListNamespaceMembers(ctx context.Context, r *mdrv1.NamespaceMembersRequest, _ ...grpc.CallOption) (*mdrv1.MemberList, error) {
	return &mdrv1.MemberList{Results: []*mdrv1.Member{
		{Id: urnPatient, Type: "DATAELEMENTGROUP", Designations: ds("Patient", "Patient")},
		{Id: urnSample, Type: "DATAELEMENTGROUP", Designations: ds("Sample", "Probe")},
		{Id: "urn:mdr16:record:1:1", Type: "RECORD", Designations: ds("Blood pressure", "Blutdruck")},
		{Id: "urn:mdr16:dataelementgroup:9:1", Type: "DATAELEMENTGROUP", Designations: ds("Hidden", "Versteckt")},
	}}, nil
}

func (m *catMDR) GetDataElementGroupMembers(ctx context.Context, r *mdrv1.MembersRequest, _ ...grpc.CallOption) (*mdrv1.MemberList, error) {
	var ms []*mdrv1.Member
	switch r.GetUrn() {
	case urnPatient:
		ms = []*mdrv1.Member{{Id: urnAge, Type: "DATAELEMENT", Designations: ds("Donor age", "Spenderalter")},
			{Id: urnDiagnosis, Type: "DATAELEMENTGROUP", Designations: ds("Diagnosis", "Diagnose")}}
	case urnDiagnosis:
		ms = []*mdrv1.Member{{Id: urnDate, Type: "DATAELEMENT", Designations: ds("Date of diagnosis", "Diagnosedatum")}, {Id: urnICD, Type: "DATAELEMENT"}}
	case urnSample:
		ms = []*mdrv1.Member{{Id: urnEnum, Type: "DATAELEMENT", Designations: ds("Sample type tissue", "Materialart Gewebe")}}
	}
	return &mdrv1.MemberList{Results: ms}, nil
}

var catSearchable = []*mdrv1.Member{
	{Id: "urn:mdr16:dataelement:40:1", Type: "DATAELEMENT", Designations: ds("Manager", "Manager")},
	{Id: "urn:mdr16:dataelement:41:1", Type: "DATAELEMENT", Designations: ds("Contact name", "Kontaktname")},
	{Id: "urn:mdr16:dataelement:42:1", Type: "DATAELEMENT", Designations: ds("Storage temperature", "Lagertemperatur")},
	{Id: "urn:mdr16:dataelement:43:1", Type: "DATAELEMENT", Designations: []*mdrv1.Designation{
		{Lang: "en", Designation: "Years lived", Definition: "The donor's age in years"}}},
	{Id: "urn:mdr16:dataelement:23:1", Type: "DATAELEMENT", Designations: ds("Age at diagnosis", "Alter bei Diagnose")},
	{Id: urnAge, Type: "DATAELEMENT", Designations: ds("Donor age", "Spenderalter")},
}

// SearchNamespace matches substrings of designations and definitions, as
// the registry does.
func (m *catMDR) SearchNamespace(ctx context.Context, r *mdrv1.SearchRequest, _ ...grpc.CallOption) (*mdrv1.MemberList, error) {
	q := strings.ToLower(r.GetQuery())
	out := &mdrv1.MemberList{}
	for _, it := range catSearchable {
		for _, d := range it.GetDesignations() {
			if strings.Contains(strings.ToLower(d.GetDesignation()+" "+d.GetDefinition()), q) {
				out.Results = append(out.Results, it)
				break
			}
		}
	}
	return out, nil
}

func newCatEnv(t *testing.T) (*env, *fakeBroker) {
	t.Helper()
	e := &env{t: t, idp: newIdP(), v: &fakeVerifier{refused: map[string]bool{}}, mdr: &fakeMDR{}, clock: &clock{mustTime("2030-01-01T10:00:00Z")}}
	e.store = NewMemory(100, e.clock.now)
	fb := newFakeBroker()
	a, err := New(Config{MDR: &catMDR{&qbMDR{fakeMDR: e.mdr}}, Broker: fb, Verifier: researcherVerifier{e.v}, Loopback: e.idp, Store: e.store, Now: e.clock.now,
		ClientID: "explorer", ClientSecret: "s3cret-s3cret-s3cret", MaxUpload: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	a.Register(mux)
	e.app, e.h = a, mux
	return e, fb
}

// inOrder fails unless body has each of wants, in order.
func inOrder(t *testing.T, body string, wants ...string) {
	t.Helper()
	at := 0
	for _, w := range wants {
		i := strings.Index(body[at:], w)
		if i < 0 {
			t.Fatalf("lacks %q (in order) in\n%s", w, body)
		}
		at += i + len(w)
	}
}

// TestCatalogueTree: the builder's page has the namespace's groups,
// nested, as details, each data element with the fields of its kind, and
// no record.
func TestCatalogueTree(t *testing.T) {
	e, _ := newCatEnv(t)
	b := e.browser()
	b.signIn()
	rec := b.do("GET", InquiriesPath+"/new", nil)
	body := rec.Body.String()
	if rec.Code != 200 {
		t.Fatalf("%d\n%s", rec.Code, body)
	}
	inOrder(t, body, `<section class="cat" id="cat"`, `<h2 id="cat-title">Criteria catalogue</h2>`,
		`<details class="cat-group" data-urn="`+urnPatient+`"><summary>Patient</summary>`,
		`<details class="cat-el" id="cat-e1" data-urn="`+urnAge+`"`, `hx-get="/explorer/query/catalogue/element?urn=urn%3Amdr16%3Adataelement%3A14%3A1&amp;key=e1" hx-trigger="toggle once"`,
		`<summary>Donor age</summary>`, `name="qb.catadd" value="`+urnAge+`"`, `hx-get="/explorer/query/catalogue/add"`,
		`<details class="cat-group" data-urn="`+urnDiagnosis+`"><summary>Diagnosis</summary>`,
		`<summary>Date of diagnosis</summary>`,
		`<summary>`+urnICD+`</summary>`, // a member without a designation: its URN
		`</details></li>`,               // Diagnosis closes inside Patient
		`<details class="cat-group" data-urn="`+urnSample+`"><summary>Sample</summary>`,
		`<summary>Sample type tissue</summary>`, `name="qb.catadd" value="`+urnEnum+`"`)
	// A record is no catalogue entry; a group with no members is left out.
	for _, not := range []string{"Blood pressure", "Hidden"} {
		if strings.Contains(body, not) {
			t.Fatalf("the catalogue has %q", not)
		}
	}
	// An opened element's body (htmx): the fields of its kind.
	for urn, want := range map[string]string{urnAge: `name="cat.` + urnAge + `.from" type="number" step="1" min="0" max="120"`,
		urnDate: `name="cat.` + urnDate + `.from" type="date"`, urnICD: `name="cat.` + urnICD + `.v" maxlength="200"`,
		urnEnum: `type="checkbox" name="cat.` + urnEnum + `.v" value="tissue_frozen"`} {
		rec := b.do("GET", QueryPath+"/catalogue/element?"+url.Values{"urn": {urn}, "key": {"e7"}}.Encode(), nil, "HX-Request", "true")
		part := rec.Body.String()
		if rec.Code != 200 || !strings.Contains(part, want) || !strings.HasPrefix(part, `<div class="cat-body">`) || !strings.Contains(part, `hx-include="#cat-e7, `) || strings.Contains(part, "<html") {
			t.Fatalf("element %s: %d\n%s", urn, rec.Code, part)
		}
	}
	for _, bad := range []string{"urn=" + urnAge + "&key=x1", "key=e1", "urn=" + urnAge + "&key=e12345"} {
		if rec := b.do("GET", QueryPath+"/catalogue/element?"+bad, nil); rec.Code != 400 {
			t.Fatalf("%s: %d", bad, rec.Code)
		}
	}
	if rec := b.do("GET", QueryPath+"/catalogue/element?key=e1&urn="+urnAbsent, nil); rec.Code != 404 {
		t.Fatalf("unknown element: %d", rec.Code)
	}
	// Nested: the Diagnosis group's details close before Patient's do.
	p := strings.Index(body, "<summary>Patient</summary>")
	s := strings.Index(body, "<summary>Sample</summary>")
	if d := strings.Index(body, "<summary>Diagnosis</summary>"); !(p < d && d < s) {
		t.Fatal("Diagnosis is not within Patient")
	}
	// Another namespace's catalogue, as htmx fetches it when the builder's
	// namespace changes.
	rec = b.do("GET", QueryPath+"/catalogue?qb.ns=mdr16", nil, "HX-Request", "true")
	if part := rec.Body.String(); rec.Code != 200 || !strings.HasPrefix(strings.TrimSpace(part), `<section class="cat" id="cat"`) || !strings.Contains(part, "<summary>Patient</summary>") || strings.Contains(part, "<html") {
		t.Fatalf("catalogue part: %d\n%s", rec.Code, part)
	}
	if rec := b.do("GET", QueryPath+"/catalogue", nil, "HX-Request", "true"); rec.Code != 400 {
		t.Fatalf("no namespace: %d", rec.Code)
	}
	de := b.do("GET", InquiriesPath+"/new?lang=de", nil).Body.String()
	inOrder(t, de, "Kriterienkatalog", "<summary>Patient</summary>", "<summary>Spenderalter</summary>", "Zur Abfrage hinzufügen", "<summary>Diagnose</summary>", "<summary>Probe</summary>")
}

// TestCatalogueAdd: a catalogue element's values and range make a
// condition, by htmx (a fragment for the builder's last group) and
// without script (the form comes back with it, nothing saved); a
// condition is taken out again without saving.
func TestCatalogueAdd(t *testing.T) {
	e, fb := newCatEnv(t)
	b := e.browser()
	b.signIn()
	q := url.Values{"urn": {urnEnum}, "qb.group": {"g2"}, "cat." + urnEnum + ".v": {"tissue_frozen"}}
	rec := b.do("GET", QueryPath+"/catalogue/add?"+q.Encode(), nil, "HX-Request", "true")
	body := rec.Body.String()
	for _, want := range []string{`name="qb.cond" value="g2.`, `value="tissue_frozen" checked`, `id="qb-status"`, `hx-swap-oob="true"`} {
		if rec.Code != 200 || !strings.Contains(body, want) {
			t.Fatalf("htmx add lacks %q: %d\n%s", want, rec.Code, body)
		}
	}
	if strings.Contains(body, "<html") {
		t.Fatal("the htmx add sent a whole page")
	}
	q = url.Values{"urn": {urnAge}, "qb.group": {"g1"}, "cat." + urnAge + ".from": {"18"}, "cat." + urnAge + ".to": {"65"}}
	rec = b.do("GET", QueryPath+"/catalogue/add?"+q.Encode(), nil, "HX-Request", "true")
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), `type="number" value="18"`) || !strings.Contains(rec.Body.String(), `type="number" value="65"`) {
		t.Fatalf("range: %d\n%s", rec.Code, rec.Body)
	}
	for _, bad := range []url.Values{{"urn": {urnAge}, "qb.group": {"G 1"}}, {"urn": {"no urn"}, "qb.group": {"g1"}}, {"qb.group": {"g1"}}} {
		if rec := b.do("GET", QueryPath+"/catalogue/add?"+bad.Encode(), nil, "HX-Request", "true"); rec.Code != 400 {
			t.Fatalf("%v: %d", bad, rec.Code)
		}
	}
	if rec := b.do("GET", QueryPath+"/catalogue/add?urn="+urnAbsent+"&qb.group=g1", nil); rec.Code != 404 {
		t.Fatalf("unknown element: %d", rec.Code)
	}

	// Without script: the add button submits the form.
	csrf := csrfOf(t, b.do("GET", InquiriesPath+"/new", nil).Body.String())
	f := inquiryFields(csrf)
	f.Set("label", "Kept label")
	f.Set("qb.catadd", urnAge)
	f.Set("cat."+urnAge+".from", "30")
	f.Set("cat."+urnAge+".to", "40")
	ct, form := multipartForm(t, f, nil)
	rec = b.post(InquiriesPath, ct, form)
	body = rec.Body.String()
	if rec.Code != 200 || len(fb.ins) != 0 {
		t.Fatalf("no-script add: %d, %d inquiries\n%s", rec.Code, len(fb.ins), body)
	}
	m := regexp.MustCompile(`name="qb.cond" value="g2\.([a-z0-9]+)"`).FindAllStringSubmatch(body, -1)
	if len(m) != 3 || m[2][1] == "c3" || m[2][1] == "c4" {
		t.Fatalf("the condition is not the last group's last: %v", m)
	}
	id := m[2][1]
	for _, want := range []string{`value="Kept label"`, `name="qb.c.` + id + `.from" type="number" value="30"`, `name="qb.c.` + id + `.to" type="number" value="40"`, `name="qb.c.c1.urn"`} {
		if !strings.Contains(body, want) {
			t.Fatalf("no-script add lacks %q\n%s", want, body)
		}
	}
	// And out again, without script: the chip's remove button.
	f.Del("qb.catadd")
	f.Set("qb.remove", "c1")
	ct, form = multipartForm(t, f, nil)
	rec = b.post(InquiriesPath, ct, form)
	if rec.Code != 200 || strings.Contains(rec.Body.String(), `name="qb.c.c1.urn"`) || len(fb.ins) != 0 {
		t.Fatalf("no-script remove: %d", rec.Code)
	}
}

// TestFindElementsByWords: the builder's search finds whole words and
// word prefixes, in both languages, designations before definitions; a
// word's inside is no match.
func TestFindElementsByWords(t *testing.T) {
	e, _ := newCatEnv(t)
	b := e.browser()
	b.signIn()
	find := func(q, lang string) string {
		rec := b.do("GET", QueryPath+"/elements?"+url.Values{"qb.ns": {"mdr16"}, "q": {q}, "g": {"g1"}, "lang": {lang}}.Encode(), nil, "HX-Request", "true")
		if rec.Code != 200 {
			t.Fatalf("%q: %d", q, rec.Code)
		}
		return rec.Body.String()
	}
	body := find("age", "en")
	for _, not := range []string{"Manager", "Contact name", "Storage temperature"} {
		if strings.Contains(body, not) {
			t.Fatalf("age finds %q\n%s", not, body)
		}
	}
	inOrder(t, body, "Age at diagnosis", "Donor age", "Years lived") // names, then the definition's match
	if body := find("alt", "de"); !strings.Contains(body, "Alter bei Diagnose") || strings.Contains(body, "Spenderalter") {
		t.Fatalf("alt (de)\n%s", body)
	}
	if body := find("age diag", "en"); !strings.Contains(body, "Age at diagnosis") || strings.Contains(body, "Donor age") {
		t.Fatalf("age diag\n%s", body)
	}
	if body := find("manag", "en"); !strings.Contains(body, "Manager") {
		t.Fatalf("a prefix\n%s", body)
	}
}
