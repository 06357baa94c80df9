package importer

import (
	"fmt"
	"io"
	"maps"

	mdrv1 "fris.dev/proto/mdr/v1"
)

// ParseSamplyXML reads a Samply MDR XML export, or several concatenated ones,
// and returns its namespaces with all references resolved. Namespaces of the
// same name are merged; where exports define the same URN, the later wins.
func ParseSamplyXML(r io.Reader) (*mdrv1.Registry, error) {
	return parseSamplyXML(r, MaxInputBytes)
}

func parseSamplyXML(r io.Reader, limit int64) (*mdrv1.Registry, error) {
	lr := &io.LimitedReader{R: r, N: limit + 1}
	docs, err := decodeDocuments(lr)
	// A cut-off input usually fails to parse too; the size is the real cause.
	if lr.N <= 0 {
		return nil, tooLarge(limit)
	}
	if err != nil {
		return nil, fmt.Errorf("importer: samply XML: %w", err)
	}
	reg, err := buildRegistry(docs)
	if err != nil {
		return nil, fmt.Errorf("importer: samply XML: %w", err)
	}
	return reg, nil
}

// buildRegistry resolves every document's references and merges the results.
func buildRegistry(docs []*document) (*mdrv1.Registry, error) {
	// All URNs are needed before any element is built: a <sub> may point into
	// another document, and the same scoped identifier uuid can carry
	// different identifiers in different exports, so a document's own URNs
	// take precedence and otherwise the latest document's do.
	docURNs := make([]map[string]string, len(docs))
	anyURN := map[string]string{}
	for i, doc := range docs {
		urns, err := doc.urns()
		if err != nil {
			return nil, err
		}
		docURNs[i] = urns
		maps.Copy(anyURN, urns)
	}

	m := newMerger()
	budget := maxExpandedValues
	for i, doc := range docs {
		resolve := func(uuid string) (string, bool) {
			if urn, ok := docURNs[i][uuid]; ok {
				return urn, true
			}
			urn, ok := anyURN[uuid]
			return urn, ok
		}
		for _, ns := range doc.namespaces {
			m.namespace(ns.Name).def.Designations = designations(ns.Definitions)
		}
		for _, s := range doc.scoped {
			el, err := doc.element(s, docURNs[i][s.raw.UUID], resolve, &budget)
			if err != nil {
				return nil, fmt.Errorf("document %d, line %d: scopedIdentifier %q: %w", doc.index, s.line, s.raw.UUID, err)
			}
			m.namespace(doc.namespaceBy[s.raw.Namespace].Name).put(el)
		}
	}
	return m.registry(), nil
}

func designations(defs []xDefinition) []*mdrv1.Designation {
	var out []*mdrv1.Designation
	for _, d := range defs {
		out = append(out, designation(d))
	}
	return out
}

// designation sets lang only: the service fills language, its twin.
func designation(d xDefinition) *mdrv1.Designation {
	return &mdrv1.Designation{Lang: d.Lang, Designation: d.Designation, Definition: d.Definition}
}
