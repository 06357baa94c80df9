package importer

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
)

// decodeDocuments reads every <export> in r. Real exports are sometimes
// concatenated, declaration and all, which encoding/xml streams through
// happily as long as each root is read on its own.
func decodeDocuments(r io.Reader) ([]*document, error) {
	dec := xml.NewDecoder(r)
	var docs []*document
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", len(docs)+1, err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if t.Name.Space != samplyNS || t.Name.Local != "export" {
				return nil, fmt.Errorf("document %d: root element is %s, want <export> in namespace %s",
					len(docs)+1, describeName(t.Name), samplyNS)
			}
			doc, err := decodeExport(dec, len(docs)+1)
			if err != nil {
				return nil, err
			}
			docs = append(docs, doc)
		case xml.CharData:
			if len(bytes.TrimSpace(t)) > 0 {
				return nil, fmt.Errorf("document %d: text outside of <export>", len(docs)+1)
			}
		}
	}
	if len(docs) == 0 {
		return nil, errors.New("no <export> document found")
	}
	return docs, nil
}

func describeName(n xml.Name) string {
	if n.Space == "" {
		return fmt.Sprintf("<%s> without a namespace", n.Local)
	}
	return fmt.Sprintf("<%s> in namespace %q", n.Local, n.Space)
}

// decodeExport reads the children of one <export> up to its end tag.
func decodeExport(dec *xml.Decoder, index int) (*document, error) {
	doc := newDocument(index)
	for {
		tok, err := dec.Token()
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return nil, fmt.Errorf("document %d: %w", index, err)
		}
		switch t := tok.(type) {
		case xml.EndElement:
			// Token has checked that it matches <export>.
			if err := doc.attachValues(); err != nil {
				return nil, fmt.Errorf("document %d: %w", index, err)
			}
			return doc, nil
		case xml.StartElement:
			line, _ := dec.InputPos()
			if err := doc.decodeChild(dec, t, line); err != nil {
				return nil, fmt.Errorf("document %d, line %d: %w", index, line, err)
			}
		}
	}
}

// decodeChild reads one child of <export>, which starts on the given line.
// Children this importer has no use for (catalogs, codes, future additions)
// are skipped.
func (doc *document) decodeChild(dec *xml.Decoder, start xml.StartElement, line int) error {
	name := start.Name.Local
	if start.Name.Space != samplyNS {
		return dec.Skip()
	}
	switch name {
	case "namespace":
		var v xNamespace
		if err := decodeInto(dec, &start, &v); err != nil {
			return err
		}
		if err := doc.claim(name, v.UUID); err != nil {
			return err
		}
		doc.namespaces = append(doc.namespaces, &v)
		doc.namespaceBy[v.UUID] = &v
	case vdDescribed, vdEnumerated, vdCatalog:
		var v xValueDomain
		if err := decodeInto(dec, &start, &v); err != nil {
			return err
		}
		if err := doc.claim(name, v.UUID); err != nil {
			return err
		}
		doc.valueDomains[v.UUID] = &valueDomain{kind: name, raw: v}
	case "permissibleValue":
		var v xPermissibleValue
		if err := decodeInto(dec, &start, &v); err != nil {
			return err
		}
		if err := doc.claim(name, v.UUID); err != nil {
			return err
		}
		doc.values = append(doc.values, v)
	case elDataElement, elGroup, elRecord:
		var v xElement
		if err := decodeInto(dec, &start, &v); err != nil {
			return err
		}
		if err := doc.claim(name, v.UUID); err != nil {
			return err
		}
		doc.elements[v.UUID] = &element{kind: name, raw: v}
	case "scopedIdentifier":
		var v xScopedIdentifier
		if err := decodeInto(dec, &start, &v); err != nil {
			return err
		}
		if err := doc.claim(name, v.UUID); err != nil {
			return err
		}
		s := &scoped{raw: v, line: line}
		doc.scoped = append(doc.scoped, s)
		doc.scopedBy[v.UUID] = s
	default:
		return dec.Skip()
	}
	return nil
}

// trimmer is an x* type that can drop its layout whitespace.
type trimmer interface{ trim() }

// decodeInto decodes one element and trims its text: exports written by hand
// or re-indented carry layout whitespace that is never meant as content.
func decodeInto(dec *xml.Decoder, start *xml.StartElement, v trimmer) error {
	if err := dec.DecodeElement(v, start); err != nil {
		return fmt.Errorf("<%s>: %w", start.Name.Local, err)
	}
	v.trim()
	return nil
}

// claim records a child's uuid, which everything else refers to it by.
func (doc *document) claim(name, uuid string) error {
	if uuid == "" {
		return fmt.Errorf("<%s> without a uuid", name)
	}
	if prev, dup := doc.seen[uuid]; dup {
		return fmt.Errorf("<%s> uuid %q is already used by a <%s>", name, uuid, prev)
	}
	doc.seen[uuid] = name
	return nil
}

// attachValues gives each enumerated value domain its permissible values, in
// file order; it runs at the end of a document because values may precede
// their domain.
func (doc *document) attachValues() error {
	for _, pv := range doc.values {
		vd, ok := doc.valueDomains[pv.ValueDomain]
		if !ok {
			return fmt.Errorf("permissibleValue %q: value domain %q not found", pv.UUID, pv.ValueDomain)
		}
		if vd.kind != vdEnumerated {
			return fmt.Errorf("permissibleValue %q: value domain %q is a %s, not an %s", pv.UUID, pv.ValueDomain, vd.kind, vdEnumerated)
		}
		vd.values = append(vd.values, pv)
	}
	doc.values = nil
	return nil
}
