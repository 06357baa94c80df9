package importer

import "strings"

const samplyNS = "http://schema.samply.de/mdr/common"

// Kinds of value domains and of elements, named after their XML elements.
const (
	vdDescribed  = "describedValueDomain"
	vdEnumerated = "enumeratedValueDomain"
	vdCatalog    = "catalogValueDomain"

	elDataElement = "dataElement"
	elGroup       = "dataElementGroup"
	elRecord      = "record"
)

// The x* types mirror the export's elements one to one; they hold its text,
// trimmed, and all checking happens when references are resolved.

type xDefinition struct {
	Lang        string `xml:"lang,attr"`
	UUID        string `xml:"uuid,attr"`
	Designation string `xml:"designation"`
	Definition  string `xml:"definition"`
}

type xSlot struct {
	Key   string `xml:"key"`
	Value string `xml:"value"`
}

type xNamespace struct {
	UUID        string        `xml:"uuid,attr"`
	Definitions []xDefinition `xml:"definitions>definition"`
	Name        string        `xml:"name"`
}

// xValueDomain covers all value domain kinds: they share the base fields and
// each kind just leaves some empty.
type xValueDomain struct {
	UUID           string `xml:"uuid,attr"`
	Format         string `xml:"format"`
	Datatype       string `xml:"datatype"`
	MaxCharacters  string `xml:"maxCharacters"`
	Description    string `xml:"description"`
	ValidationType string `xml:"validationType"`
	ValidationData string `xml:"validationData"`
	UnitOfMeasure  string `xml:"unitOfMeasure"`
}

type xPermissibleValue struct {
	ValueDomain string `xml:"valueDomain,attr"`
	UUID        string `xml:"uuid,attr"`
	Value       string `xml:"value"`
}

// xElement is a dataElement, dataElementGroup or record; only data elements
// have a value domain.
type xElement struct {
	UUID        string `xml:"uuid,attr"`
	ValueDomain string `xml:"valueDomain"`
}

type xScopedIdentifier struct {
	UUID        string        `xml:"uuid,attr"`
	Definitions []xDefinition `xml:"definitions>definition"`
	Slots       []xSlot       `xml:"slots>slot"`
	Namespace   string        `xml:"namespace"`
	Identifier  string        `xml:"identifier"`
	Version     string        `xml:"version"`
	Element     string        `xml:"element"`
	Status      string        `xml:"status"`
	Subs        []string      `xml:"sub"`
}

// valueDomain is a value domain with the permissible values that point to it,
// which may come before it in the file.
type valueDomain struct {
	kind   string
	raw    xValueDomain
	values []xPermissibleValue
}

type element struct {
	kind string // elDataElement, elGroup or elRecord
	raw  xElement
}

type scoped struct {
	raw  xScopedIdentifier
	line int
}

// document is one <export>: its children by uuid, uuids being unique within
// an export but not across the exports of a concatenated file.
type document struct {
	index        int // 1-based, for messages
	namespaces   []*xNamespace
	namespaceBy  map[string]*xNamespace
	valueDomains map[string]*valueDomain
	elements     map[string]*element
	scoped       []*scoped
	scopedBy     map[string]*scoped
	values       []xPermissibleValue
	seen         map[string]string // uuid -> element name, to reject duplicates
}

func newDocument(index int) *document {
	return &document{
		index:        index,
		namespaceBy:  map[string]*xNamespace{},
		valueDomains: map[string]*valueDomain{},
		elements:     map[string]*element{},
		scopedBy:     map[string]*scoped{},
		seen:         map[string]string{},
	}
}

func (v *xNamespace) trim() {
	trimEach(&v.UUID, &v.Name)
	trimDefinitions(v.Definitions)
}

func (v *xValueDomain) trim() {
	trimEach(&v.UUID, &v.Format, &v.Datatype, &v.MaxCharacters, &v.Description,
		&v.ValidationType, &v.ValidationData, &v.UnitOfMeasure)
}

func (v *xPermissibleValue) trim() { trimEach(&v.UUID, &v.ValueDomain, &v.Value) }

func (v *xElement) trim() { trimEach(&v.UUID, &v.ValueDomain) }

func (v *xScopedIdentifier) trim() {
	trimEach(&v.UUID, &v.Namespace, &v.Identifier, &v.Version, &v.Element, &v.Status)
	trimDefinitions(v.Definitions)
	for i := range v.Slots {
		trimEach(&v.Slots[i].Key, &v.Slots[i].Value)
	}
	for i := range v.Subs {
		trimEach(&v.Subs[i])
	}
}

func trimDefinitions(ds []xDefinition) {
	for i := range ds {
		d := &ds[i]
		trimEach(&d.Lang, &d.UUID, &d.Designation, &d.Definition)
	}
}

func trimEach(ss ...*string) {
	for _, s := range ss {
		*s = strings.TrimSpace(*s)
	}
}
