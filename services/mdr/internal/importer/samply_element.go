package importer

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"

	mdrv1 "fris.dev/proto/mdr/v1"
)

// urnKind is the URN's third part for an element of the given XML name.
func urnKind(elementName string) string {
	switch elementName {
	case elDataElement:
		return "dataelement"
	case elGroup:
		return "dataelementgroup"
	default:
		return "record"
	}
}

// urns computes the URN of every scoped identifier of the document, keyed by
// the scoped identifier's uuid (what <sub> refers to).
func (doc *document) urns() (map[string]string, error) {
	for _, ns := range doc.namespaces {
		if err := checkNamespaceName(ns.Name); err != nil {
			return nil, fmt.Errorf("document %d: namespace %q: %w", doc.index, ns.UUID, err)
		}
	}
	urns := make(map[string]string, len(doc.scoped))
	for _, s := range doc.scoped {
		urn, err := doc.urn(&s.raw)
		if err != nil {
			return nil, fmt.Errorf("document %d, line %d: scopedIdentifier %q: %w", doc.index, s.line, s.raw.UUID, err)
		}
		urns[s.raw.UUID] = urn
	}
	return urns, nil
}

func (doc *document) urn(si *xScopedIdentifier) (string, error) {
	if si.Namespace == "" {
		return "", fmt.Errorf("missing <namespace>")
	}
	ns, ok := doc.namespaceBy[si.Namespace]
	if !ok {
		return "", fmt.Errorf("namespace %q not found", si.Namespace)
	}
	if si.Element == "" {
		return "", fmt.Errorf("missing <element>")
	}
	el, ok := doc.elements[si.Element]
	if !ok {
		return "", fmt.Errorf("element %q not found", si.Element)
	}
	id, err := number("identifier", si.Identifier)
	if err != nil {
		return "", err
	}
	version, err := number("version", si.Version)
	if err != nil {
		return "", err
	}
	return "urn:" + ns.Name + ":" + urnKind(el.kind) + ":" + id + ":" + version, nil
}

// checkNamespaceName rejects names that would make URNs ambiguous.
func checkNamespaceName(name string) error {
	if name == "" {
		return fmt.Errorf("missing <name>")
	}
	if strings.ContainsFunc(name, func(r rune) bool { return r == ':' || unicode.IsSpace(r) || !unicode.IsPrint(r) }) {
		return fmt.Errorf("name %q cannot be part of a URN", name)
	}
	return nil
}

// number checks a URN part and writes it canonically, so that "01" and "1"
// name the same element.
func number(field, s string) (string, error) {
	if s == "" {
		return "", fmt.Errorf("missing <%s>", field)
	}
	n, err := strconv.ParseUint(s, 10, 31)
	if err != nil {
		return "", fmt.Errorf("<%s> %q is not a non-negative integer", field, s)
	}
	return strconv.FormatUint(n, 10), nil
}

// maxExpandedValues bounds the permissible values of all data elements
// together; real registries have thousands.
const maxExpandedValues = 1 << 20

// element builds the Element of one scoped identifier whose URN is known.
//
// Every data element carries a copy of its value domain's permissible
// values, so an export where many elements share a huge domain expands far
// beyond its size; budget is how many values may still be copied.
func (doc *document) element(s *scoped, urn string, resolve func(uuid string) (string, bool), budget *int) (*mdrv1.Element, error) {
	si := &s.raw
	el := doc.elements[si.Element] // urn() has checked it exists
	out := &mdrv1.Element{Urn: urn, Status: si.Status}
	for _, sl := range si.Slots {
		out.Slots = append(out.Slots, &mdrv1.Slot{SlotName: sl.Key, SlotValue: sl.Value})
	}

	var vd *valueDomain
	if el.kind == elDataElement {
		var ok bool
		if vd, ok = doc.valueDomains[el.raw.ValueDomain]; !ok {
			return nil, fmt.Errorf("data element %q: value domain %q not found", si.Element, el.raw.ValueDomain)
		}
		if len(si.Subs) > 0 {
			return nil, fmt.Errorf("%s is a data element but has <sub> members", urn)
		}
		if *budget -= len(vd.values); *budget < 0 {
			return nil, fmt.Errorf("the export expands to more than %d permissible values across its data elements", maxExpandedValues)
		}
	}

	// A scoped identifier's definitions label the element itself and, for
	// enumerated domains, each permissible value (its meanings).
	valueAt := map[string]int{}
	var meanings [][]*mdrv1.Designation
	if vd != nil {
		for i, pv := range vd.values {
			valueAt[pv.UUID] = i
		}
		meanings = make([][]*mdrv1.Designation, len(vd.values))
	}
	for _, d := range si.Definitions {
		if d.UUID == si.Element {
			out.Designations = append(out.Designations, designation(d))
			continue
		}
		i, ok := valueAt[d.UUID]
		if !ok {
			return nil, fmt.Errorf("definition for %q names neither element %q nor one of its permissible values", d.UUID, si.Element)
		}
		meanings[i] = append(meanings[i], designation(d))
	}

	if vd != nil {
		v, err := validation(vd, meanings)
		if err != nil {
			return nil, fmt.Errorf("data element %q: %w", si.Element, err)
		}
		out.Validation = v
	}

	for _, sub := range si.Subs {
		member, ok := resolve(sub)
		if !ok {
			return nil, fmt.Errorf("sub %q not found in the input", sub)
		}
		if member == urn {
			return nil, fmt.Errorf("%s lists itself as a member", urn)
		}
		out.Members = append(out.Members, member)
	}
	return out, nil
}
