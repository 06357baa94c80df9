package registry

import (
	"errors"
	"strings"

	"fris.dev/pkg/rpcerr"
	mdrv1 "fris.dev/proto/mdr/v1"
)

// Page is the optional offset/limit of member lists; Limit 0 means all.
type Page struct {
	Offset, Limit int
}

func (p Page) check() error {
	if p.Offset < 0 || p.Limit < 0 {
		return rpcerr.New(ErrInvalid, "offset and limit must not be negative")
	}
	return nil
}

func pageOf[T any](xs []T, p Page) []T {
	if p.Offset >= len(xs) {
		return nil
	}
	xs = xs[p.Offset:]
	if p.Limit > 0 && p.Limit < len(xs) {
		xs = xs[:p.Limit]
	}
	return xs
}

func (ix *Index) visibleNS(v Viewer, name string) (*nsEntry, error) {
	ns, ok := ix.byName[name]
	if !ok || (ns.def.GetPrivate() && !v.CanSee(name)) {
		return nil, rpcerr.New(ErrNotFound, "no namespace %q", name)
	}
	return ns, nil
}

// lookup resolves a URN of the wanted kind that the viewer may see. A URN of
// another kind is not found: there is no such data element (or group...).
func (ix *Index) lookup(v Viewer, raw, kind string) (*item, error) {
	u, err := ParseURN(raw)
	if err != nil {
		return nil, rpcerr.New(ErrInvalid, "%v", err)
	}
	if u.Kind != kind {
		return nil, rpcerr.New(ErrNotFound, "%s is not a %s", u, kind)
	}
	it := ix.find(u)
	if it == nil || (it.ns.def.GetPrivate() && !v.CanSee(u.Namespace)) {
		return nil, rpcerr.New(ErrNotFound, "no %s %s", kind, u)
	}
	return it, nil
}

// Namespaces lists the namespaces the viewer may see, by name.
func (ix *Index) Namespaces(v Viewer, lo LangOrder) []*mdrv1.Namespace {
	out := make([]*mdrv1.Namespace, 0, len(ix.namespaces))
	for _, ns := range ix.namespaces {
		if ns.def.GetPrivate() && !v.CanSee(ns.def.GetName()) {
			continue
		}
		out = append(out, withDesignations(ns.api, lo))
	}
	return out
}

func withDesignations(n *mdrv1.Namespace, lo LangOrder) *mdrv1.Namespace {
	if lo.IsZero() {
		return n
	}
	return &mdrv1.Namespace{Name: n.Name, Writeable: n.Writeable, Designations: lo.Sort(n.Designations)}
}

func members(items []*item, p Page, lo LangOrder) *mdrv1.MemberList {
	page := pageOf(items, p)
	out := &mdrv1.MemberList{Totalcount: int32(len(items)), Results: make([]*mdrv1.Member, len(page))}
	for i, it := range page {
		out.Results[i] = memberOf(it, lo)
	}
	return out
}

func memberOf(it *item, lo LangOrder) *mdrv1.Member {
	if lo.IsZero() {
		return it.member
	}
	return &mdrv1.Member{Id: it.member.Id, Type: it.member.Type, Designations: lo.Sort(it.member.Designations)}
}

// NamespaceMembers lists a namespace's root members in stored order.
func (ix *Index) NamespaceMembers(v Viewer, name string, p Page, lo LangOrder) (*mdrv1.MemberList, error) {
	if err := p.check(); err != nil {
		return nil, err
	}
	ns, err := ix.visibleNS(v, name)
	if err != nil {
		return nil, err
	}
	return members(ns.members, p, lo), nil
}

// Search finds the namespace's items (newest versions) whose designations or
// definitions contain query, ignoring case.
func (ix *Index) Search(v Viewer, name, query string, p Page, lo LangOrder) (*mdrv1.MemberList, error) {
	if err := p.check(); err != nil {
		return nil, err
	}
	q := strings.ToLower(strings.TrimSpace(query))
	if q == "" {
		return nil, rpcerr.New(ErrInvalid, "query is required")
	}
	ns, err := ix.visibleNS(v, name)
	if err != nil {
		return nil, err
	}
	var hits []*item
	for _, it := range ns.search {
		if strings.Contains(it.text, q) {
			hits = append(hits, it)
		}
	}
	return members(hits, p, lo), nil
}

// DataElement returns the whole data element.
func (ix *Index) DataElement(v Viewer, urn string, lo LangOrder) (*mdrv1.DataElement, error) {
	it, err := ix.lookup(v, urn, KindDataElement)
	if err != nil {
		return nil, err
	}
	if lo.IsZero() {
		return it.element, nil
	}
	e := it.element
	return &mdrv1.DataElement{Designations: lo.Sort(e.Designations), Validation: sortValidation(e.Validation, lo), Slots: e.Slots, Identification: e.Identification}, nil
}

func sortValidation(v *mdrv1.Validation, lo LangOrder) *mdrv1.Validation {
	if lo.IsZero() {
		return v
	}
	c := &mdrv1.Validation{
		ValueDomainType: v.ValueDomainType, Description: v.Description, Datatype: v.Datatype, Format: v.Format,
		MaximumCharacterQuantity: v.MaximumCharacterQuantity, UnitOfMeasure: v.UnitOfMeasure,
		ValidationType: v.ValidationType, ValidationData: v.ValidationData,
		Meanings: v.Meanings, ErrorMessages: lo.Sort(v.ErrorMessages),
	}
	// Meanings follow permissible values, a few per value: reordering across
	// values would break that pairing, so only each value's own list is sorted.
	for _, pv := range v.PermissibleValues {
		c.PermissibleValues = append(c.PermissibleValues, &mdrv1.PermissibleValue{Value: pv.Value, Meanings: lo.Sort(pv.Meanings)})
	}
	return c
}

// Labels returns the designations of an item of the given kind.
func (ix *Index) Labels(v Viewer, urn, kind string, lo LangOrder) ([]*mdrv1.Designation, error) {
	it, err := ix.lookup(v, urn, kind)
	if err != nil {
		return nil, err
	}
	return lo.Sort(it.member.Designations), nil
}

// Validation returns a data element's validation.
func (ix *Index) Validation(v Viewer, urn string, lo LangOrder) (*mdrv1.Validation, error) {
	it, err := ix.lookup(v, urn, KindDataElement)
	if err != nil {
		return nil, err
	}
	return sortValidation(it.element.Validation, lo), nil
}

// UiModel returns a data element's designations and validation.
func (ix *Index) UiModel(v Viewer, urn string, lo LangOrder) (*mdrv1.UiModel, error) {
	it, err := ix.lookup(v, urn, KindDataElement)
	if err != nil {
		return nil, err
	}
	return &mdrv1.UiModel{Designations: lo.Sort(it.element.Designations), Validation: sortValidation(it.element.Validation, lo)}, nil
}

// Slots returns a data element's slots.
func (ix *Index) Slots(v Viewer, urn string) ([]*mdrv1.Slot, error) {
	it, err := ix.lookup(v, urn, KindDataElement)
	if err != nil {
		return nil, err
	}
	return it.element.Slots, nil
}

// GroupMembers lists a data element group's members in stored order.
func (ix *Index) GroupMembers(v Viewer, urn string, p Page, lo LangOrder) (*mdrv1.MemberList, error) {
	if err := p.check(); err != nil {
		return nil, err
	}
	it, err := ix.lookup(v, urn, KindGroup)
	if err != nil {
		return nil, err
	}
	return members(visibleItems(v, it.members), p, lo), nil
}

// visibleItems drops the members the viewer may not see. Groups and records
// may hold members of other namespaces; a private one's must not show through
// a public group or record, neither in the list nor in totalcount or order.
func visibleItems(v Viewer, items []*item) []*item {
	out := make([]*item, 0, len(items))
	for _, it := range items {
		if !it.ns.def.GetPrivate() || v.CanSee(it.ns.def.GetName()) {
			out = append(out, it)
		}
	}
	return out
}

// RecordMembers lists a record's members with their 1-based order.
func (ix *Index) RecordMembers(v Viewer, urn string, p Page, lo LangOrder) ([]*mdrv1.RecordMember, error) {
	if err := p.check(); err != nil {
		return nil, err
	}
	it, err := ix.lookup(v, urn, KindRecord)
	if err != nil {
		return nil, err
	}
	out := []*mdrv1.RecordMember{}
	for i, m := range visibleItems(v, it.members) {
		if i < p.Offset || (p.Limit > 0 && len(out) >= p.Limit) {
			continue
		}
		out = append(out, &mdrv1.RecordMember{Id: m.member.Id, Type: m.member.Type, Designations: lo.Sort(m.member.Designations), Order: int32(i + 1)})
	}
	return out, nil
}

// CheckValue validates value against a data element's rules. Visibility does
// not apply: callers are services, not users.
func (ix *Index) CheckValue(urn, value string) (canonical string, err error) {
	it, err := ix.lookup(allSeeing{}, urn, KindDataElement)
	if err != nil {
		return "", err
	}
	return it.urn.String(), it.rule.Check(value)
}

type allSeeing struct{}

func (allSeeing) CanSee(string) bool { return true }

// NamespaceInfo is the operator's view of a namespace.
type NamespaceInfo struct {
	Name              string
	Private           bool
	Elements, Members int
}

// Infos lists every namespace, private ones included.
func (ix *Index) Infos() []NamespaceInfo {
	out := make([]NamespaceInfo, 0, len(ix.namespaces))
	counts := map[*nsEntry]int{}
	for _, it := range ix.byURN {
		counts[it.ns]++
	}
	for _, ns := range ix.namespaces {
		out = append(out, NamespaceInfo{Name: ns.def.GetName(), Private: ns.def.GetPrivate(), Elements: counts[ns], Members: len(ns.members)})
	}
	return out
}

// IsNotFound and IsInvalid classify the index's errors.
func IsNotFound(err error) bool { return errors.Is(err, ErrNotFound) }
func IsInvalid(err error) bool  { return errors.Is(err, ErrInvalid) }
