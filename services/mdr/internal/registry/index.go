// Package registry holds the registry's read model: an immutable index built
// from the stored namespaces, answering every public query without touching
// the store.
package registry

import (
	"errors"
	"sort"
	"strings"

	"google.golang.org/protobuf/proto"

	"fris.dev/pkg/kv"
	"fris.dev/pkg/rpcerr"
	mdrv1 "fris.dev/proto/mdr/v1"
	"fris.dev/services/mdr/internal/rules"
)

// Errors the index answers with: the shared sentinels, so rpcerr maps them.
var (
	ErrNotFound = kv.ErrNotFound
	ErrInvalid  = rpcerr.ErrInvalid
)

// Viewer says which private namespaces a caller may see.
type Viewer interface {
	CanSee(namespace string) bool
}

// Anonymous sees public namespaces only.
type Anonymous struct{}

func (Anonymous) CanSee(string) bool { return false }

// Index is an immutable snapshot of the registry. Messages it returns are
// shared between requests and must not be modified.
type Index struct {
	Generation int64
	namespaces []*nsEntry // sorted by name
	byName     map[string]*nsEntry
	byURN      map[string]*item
	latest     map[string]*item // family -> newest version
}

type nsEntry struct {
	def     *mdrv1.NamespaceDef // without elements
	api     *mdrv1.Namespace
	members []*item // root members
	search  []*item // newest version of each item, in stored order
}

type item struct {
	urn     URN
	ns      *nsEntry
	el      *mdrv1.Element
	member  *mdrv1.Member
	members []*item
	rule    *rules.Rule
	text    string // lower-cased designations and definitions, for search
	element *mdrv1.DataElement
}

// Build indexes the stored namespaces. It fails when references dangle or
// validations cannot be compiled, so Validate can use it on imports.
func Build(gen int64, defs []*mdrv1.NamespaceDef) (*Index, error) {
	ix := &Index{Generation: gen, byName: map[string]*nsEntry{}, byURN: map[string]*item{}, latest: map[string]*item{}}
	for _, d := range defs {
		if !validNamespace(d.GetName()) {
			return nil, rpcerr.New(ErrInvalid, "namespace name %q: use 1-64 letters, digits, -, _ or .", d.GetName())
		}
		if _, dup := ix.byName[d.GetName()]; dup {
			return nil, rpcerr.New(ErrInvalid, "namespace %q twice", d.GetName())
		}
		meta := proto.Clone(d).(*mdrv1.NamespaceDef)
		meta.Elements = nil
		ns := &nsEntry{def: meta, api: &mdrv1.Namespace{Name: d.GetName(), Writeable: d.GetWriteable(), Designations: withLanguage(d.GetDesignations())}}
		ix.byName[d.GetName()] = ns
		ix.namespaces = append(ix.namespaces, ns)
		for _, el := range d.GetElements() {
			u, err := ParseURN(el.GetUrn())
			if err != nil {
				return nil, rpcerr.New(ErrInvalid, "element %q: %v", el.GetUrn(), err)
			}
			if u.Version == 0 {
				return nil, rpcerr.New(ErrInvalid, "element %q: stored URNs need a concrete version", el.GetUrn())
			}
			if u.Namespace != d.GetName() {
				return nil, rpcerr.New(ErrInvalid, "element %q is not in namespace %q", el.GetUrn(), d.GetName())
			}
			key := u.String()
			if _, dup := ix.byURN[key]; dup {
				return nil, rpcerr.New(ErrInvalid, "element %q twice", key)
			}
			it := &item{urn: u, ns: ns, el: el}
			ds := withLanguage(el.GetDesignations())
			it.member = &mdrv1.Member{Id: key, Type: MemberType(u.Kind), Designations: ds}
			if u.Kind == KindDataElement {
				v := el.GetValidation()
				if v == nil {
					v = &mdrv1.Validation{ValueDomainType: "DESCRIBED", Datatype: "STRING", ValidationType: "NONE"}
				}
				v = normalizeValidation(v)
				if it.rule, err = rules.Compile(v); err != nil {
					return nil, rpcerr.New(ErrInvalid, "element %q: %v", key, err)
				}
				it.element = &mdrv1.DataElement{
					Designations:   ds,
					Validation:     v,
					Slots:          el.GetSlots(),
					Identification: &mdrv1.Identification{Urn: key},
				}
			} else if el.GetValidation() != nil {
				return nil, rpcerr.New(ErrInvalid, "%s %q cannot have a validation", u.Kind, key)
			}
			var sb strings.Builder
			for _, x := range ds {
				sb.WriteString(strings.ToLower(x.GetDesignation()))
				sb.WriteByte(0)
				sb.WriteString(strings.ToLower(x.GetDefinition()))
				sb.WriteByte(0)
			}
			it.text = sb.String()
			ix.byURN[key] = it
			if cur, ok := ix.latest[u.family()]; !ok || cur.urn.Version < u.Version {
				ix.latest[u.family()] = it
			}
		}
	}
	// Second pass: resolve members now that every item is known, in stored
	// order so the first error reported is always the same one.
	var ordered []*item
	for _, d := range defs {
		for _, el := range d.GetElements() {
			ordered = append(ordered, ix.byURN[mustCanon(el.GetUrn())])
		}
	}
	for _, it := range ordered {
		if it.urn.Kind == KindDataElement {
			if len(it.el.GetMembers()) > 0 {
				return nil, rpcerr.New(ErrInvalid, "data element %q cannot have members", it.urn)
			}
			continue
		}
		for _, m := range it.el.GetMembers() {
			mi, err := ix.resolveStored(m)
			if err != nil {
				return nil, rpcerr.New(ErrInvalid, "member %q of %q: %v", m, it.urn, err)
			}
			if it.urn.Kind == KindRecord && mi.urn.Kind != KindDataElement {
				return nil, rpcerr.New(ErrInvalid, "record %q may only have data elements, not %q", it.urn, m)
			}
			it.members = append(it.members, mi)
		}
	}
	for _, ns := range ix.namespaces {
		for _, m := range ns.def.GetMembers() {
			mi, err := ix.resolveStored(m)
			if err != nil {
				return nil, rpcerr.New(ErrInvalid, "root member %q of namespace %q: %v", m, ns.def.GetName(), err)
			}
			if mi.ns != ns {
				return nil, rpcerr.New(ErrInvalid, "root member %q is not in namespace %q", m, ns.def.GetName())
			}
			ns.members = append(ns.members, mi)
		}
	}
	// Search lists the newest version of each item, in stored order.
	for _, d := range defs {
		ns := ix.byName[d.GetName()]
		for _, el := range d.GetElements() {
			it := ix.byURN[mustCanon(el.GetUrn())]
			if ix.latest[it.urn.family()] == it {
				ns.search = append(ns.search, it)
			}
		}
	}
	sort.Slice(ix.namespaces, func(i, j int) bool { return ix.namespaces[i].def.GetName() < ix.namespaces[j].def.GetName() })
	return ix, nil
}

func mustCanon(s string) string {
	u, _ := ParseURN(s)
	return u.String()
}

func (ix *Index) resolveStored(s string) (*item, error) {
	u, err := ParseURN(s)
	if err != nil {
		return nil, err
	}
	it := ix.find(u)
	if it == nil {
		return nil, errors.New("no such element")
	}
	return it, nil
}

func (ix *Index) find(u URN) *item {
	if u.Version == 0 {
		return ix.latest[u.family()]
	}
	return ix.byURN[u.String()]
}

// withLanguage fills `language` from `lang` (and back), so both names carry
// the code whichever one an import used.
func withLanguage(ds []*mdrv1.Designation) []*mdrv1.Designation {
	out := make([]*mdrv1.Designation, len(ds))
	for i, d := range ds {
		c := proto.Clone(d).(*mdrv1.Designation)
		if c.Lang == "" {
			c.Lang = c.Language
		}
		c.Language = c.Lang
		out[i] = c
	}
	return out
}

func normalizeValidation(v *mdrv1.Validation) *mdrv1.Validation {
	c := proto.Clone(v).(*mdrv1.Validation)
	c.Meanings = withLanguage(c.Meanings)
	c.ErrorMessages = withLanguage(c.ErrorMessages)
	for _, pv := range c.PermissibleValues {
		pv.Meanings = withLanguage(pv.Meanings)
	}
	if c.ValidationType == "" {
		c.ValidationType = "NONE"
	}
	// Real clients read permissible_values, the spec reads meanings: keep both
	// filled whichever one an import carried.
	if len(c.Meanings) == 0 {
		for _, pv := range c.PermissibleValues {
			c.Meanings = append(c.Meanings, pv.Meanings...)
		}
	}
	return c
}
