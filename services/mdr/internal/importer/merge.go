package importer

import mdrv1 "fris.dev/proto/mdr/v1"

// merger collects elements by namespace name, in first-appearance order, so
// that exports of one namespace from several registries become one.
type merger struct {
	names  []string
	byName map[string]*nsMerge
}

type nsMerge struct {
	def *mdrv1.NamespaceDef
	at  map[string]int // URN -> index in def.Elements
}

func newMerger() *merger {
	return &merger{byName: map[string]*nsMerge{}}
}

func (m *merger) namespace(name string) *nsMerge {
	n, ok := m.byName[name]
	if !ok {
		n = &nsMerge{def: &mdrv1.NamespaceDef{Name: name}, at: map[string]int{}}
		m.byName[name] = n
		m.names = append(m.names, name)
	}
	return n
}

// put adds an element; one seen before is replaced where it stood, so the
// order stays that of first appearance while the content is the latest.
func (n *nsMerge) put(el *mdrv1.Element) {
	if i, ok := n.at[el.Urn]; ok {
		n.def.Elements[i] = el
		return
	}
	n.at[el.Urn] = len(n.def.Elements)
	n.def.Elements = append(n.def.Elements, el)
}

// registry returns the merged namespaces with their root members: elements
// no other element of the namespace has as a member. Roots are computed
// only now because a later export may regroup elements.
func (m *merger) registry() *mdrv1.Registry {
	reg := &mdrv1.Registry{}
	for _, name := range m.names {
		def := m.byName[name].def
		isMember := map[string]bool{}
		for _, el := range def.Elements {
			for _, member := range el.Members {
				isMember[member] = true
			}
		}
		for _, el := range def.Elements {
			if !isMember[el.Urn] {
				def.Members = append(def.Members, el.Urn)
			}
		}
		reg.Namespaces = append(reg.Namespaces, def)
	}
	return reg
}
