package registry

import (
	"net/url"
	"strconv"
	"strings"

	"fris.dev/pkg/rpcerr"
	mdrv1 "fris.dev/proto/mdr/v1"
)

// The queries in this file answer the calls common-mdrclient makes beyond
// the spec's paths: the caller's root elements, a search over every
// namespace, a data element's representations and its catalogue.

// Statuses of an item, as the client's EnumIdentificationStatus names them.
const (
	StatusDraft    = "DRAFT"
	StatusReleased = "RELEASED"
	StatusOutdated = "OUTDATED"
)

// KindCatalog is the kind of a catalogue's URN; KindCode of a code's.
const (
	KindCatalog = "catalog"
	KindCode    = "code"
)

// valueDomainCatalog is the value_domain_type of a catalogue-valued data
// element.
const valueDomainCatalog = "CATALOG"

// maxKinds bounds the kinds one search may name: there are three.
const maxKinds = 16

// status is the item's stored status; an import that recorded none made
// the item to be used, so it counts as released.
func (it *item) status() string {
	switch s := strings.ToUpper(strings.TrimSpace(it.el.GetStatus())); s {
	case StatusDraft, StatusOutdated:
		return s
	}
	return StatusReleased
}

func resultOf(it *item, lo LangOrder) *mdrv1.Result {
	return &mdrv1.Result{
		Id:             it.member.Id,
		Type:           it.member.Type,
		Identification: &mdrv1.ItemIdentification{Urn: it.member.Id, Status: it.status()},
		Designations:   lo.Sort(it.member.Designations),
	}
}

func results(items []*item, p Page, lo LangOrder) *mdrv1.ResultList {
	page := pageOf(items, p)
	out := &mdrv1.ResultList{Totalcount: int32(len(items)), Results: make([]*mdrv1.Result, len(page))}
	for i, it := range page {
		out.Results[i] = resultOf(it, lo)
	}
	return out
}

// UserMembers lists the root members of every namespace the viewer may see,
// namespaces by name and each one's members in stored order. FRIS has no
// namespace owners: what a caller may see is what is its.
func (ix *Index) UserMembers(v Viewer, p Page, lo LangOrder) (*mdrv1.ResultList, error) {
	if err := p.check(); err != nil {
		return nil, err
	}
	var items []*item
	for _, ns := range ix.namespaces {
		if ns.def.GetPrivate() && !v.CanSee(ns.def.GetName()) {
			continue
		}
		items = append(items, ns.members...)
	}
	return results(items, p, lo), nil
}

// ParseStatus reads a search's status filter: draft, released or outdated
// in any case, or empty for all.
func ParseStatus(s string) (string, error) {
	switch u := strings.ToUpper(strings.TrimSpace(s)); u {
	case "", StatusDraft, StatusReleased, StatusOutdated:
		return u, nil
	}
	return "", rpcerr.New(ErrInvalid, "status %q: want draft, released or outdated", s)
}

// ParseKinds reads a search's type filter. Each value is a kind or a list
// of kinds: the client sends its list as one value, `[dataelement,
// dataelementgroup]`, which is how its HTTP library renders a Java list.
func ParseKinds(values []string) (map[string]bool, error) {
	kinds := map[string]bool{}
	n := 0
	for _, v := range values {
		v = strings.TrimSpace(v)
		v = strings.TrimSuffix(strings.TrimPrefix(v, "["), "]")
		for _, k := range strings.Split(v, ",") {
			k = strings.ToLower(strings.TrimSpace(k))
			if k == "" {
				continue
			}
			if n++; n > maxKinds {
				return nil, rpcerr.New(ErrInvalid, "type: at most %d values", maxKinds)
			}
			switch k {
			case KindDataElement, KindGroup, KindRecord:
				kinds[k] = true
			default:
				return nil, rpcerr.New(ErrInvalid, "type %q: want dataelement, dataelementgroup or record", k)
			}
		}
	}
	return kinds, nil
}

// SearchLocal searches every namespace the viewer may see, as Search does
// one: the newest version of each item whose designations or definitions
// contain query, namespaces by name. status (from ParseStatus) and kinds
// (from ParseKinds) narrow it when not empty.
func (ix *Index) SearchLocal(v Viewer, query, status string, kinds map[string]bool, p Page, lo LangOrder) (*mdrv1.ResultList, error) {
	if err := p.check(); err != nil {
		return nil, err
	}
	q := strings.ToLower(strings.TrimSpace(query))
	if q == "" {
		return nil, rpcerr.New(ErrInvalid, "query is required")
	}
	var hits []*item
	for _, ns := range ix.namespaces {
		if ns.def.GetPrivate() && !v.CanSee(ns.def.GetName()) {
			continue
		}
		for _, it := range ns.search {
			if (len(kinds) > 0 && !kinds[it.urn.Kind]) || (status != "" && it.status() != status) {
				continue
			}
			if strings.Contains(it.text, q) {
				hits = append(hits, it)
			}
		}
	}
	return results(hits, p, lo), nil
}

// Representations lists how a data element is represented in the caller's
// namespaces. FRIS keeps one record of each element, shared by every group
// and record that names it, so the element is its only representation.
func (ix *Index) Representations(v Viewer, urn string, lo LangOrder) (*mdrv1.ResultList, error) {
	if strings.TrimSpace(urn) == "" {
		return nil, rpcerr.New(ErrInvalid, "urn is required")
	}
	it, err := ix.lookup(v, urn, KindDataElement)
	if err != nil {
		return nil, err
	}
	return results([]*item{it}, Page{}, lo), nil
}

// Catalogue returns a catalogue-valued data element's catalogue. FRIS
// stores a catalogue as the element's permissible values, so the catalogue
// is built from them: one code per value, flat under the root, the
// catalogue's URN the element's with kind `catalog`.
func (ix *Index) Catalogue(v Viewer, urn string, lo LangOrder) (*mdrv1.Catalogue, error) {
	it, err := ix.lookup(v, urn, KindDataElement)
	if err != nil {
		return nil, err
	}
	return catalogueOf(it, lo)
}

// CatalogueCodes returns the catalogue a catalogue URN names, which is the
// catalogue of the data element with the same namespace, identifier and
// version.
func (ix *Index) CatalogueCodes(v Viewer, raw string, lo LangOrder) (*mdrv1.Catalogue, error) {
	s := raw
	if strings.Contains(s, "%") {
		d, err := url.PathUnescape(s)
		if err != nil {
			return nil, rpcerr.New(ErrInvalid, "%v: bad percent-encoding", ErrBadURN)
		}
		s = d
	}
	parts := strings.Split(s, ":")
	if len(parts) != 5 || parts[0] != "urn" || parts[2] != KindCatalog {
		return nil, rpcerr.New(ErrInvalid, "%v: want urn:<namespace>:catalog:<number>:<number>", ErrBadURN)
	}
	parts[2] = KindDataElement
	it, err := ix.lookup(v, strings.Join(parts, ":"), KindDataElement)
	if err != nil {
		if IsNotFound(err) {
			return nil, rpcerr.New(ErrNotFound, "no catalogue %s", s)
		}
		return nil, err
	}
	return catalogueOf(it, lo)
}

func catalogueOf(it *item, lo LangOrder) (*mdrv1.Catalogue, error) {
	val := it.element.GetValidation()
	if !strings.EqualFold(val.GetValueDomainType(), valueDomainCatalog) {
		return nil, rpcerr.New(ErrNotFound, "data element %s has no catalogue (its values are %s)", it.urn, strings.ToLower(val.GetValueDomainType()))
	}
	u, status := it.urn, it.status()
	catURN := URN{Namespace: u.Namespace, Kind: KindCatalog, Identifier: u.Identifier, Version: u.Version}.String()
	out := &mdrv1.Catalogue{
		Root: &mdrv1.CatalogueRoot{
			Identification: &mdrv1.ItemIdentification{Urn: catURN, Status: status},
			Designations:   lo.Sort(it.member.Designations),
			SubCodes:       []string{},
		},
		Codes: make([]*mdrv1.Code, 0, len(val.GetPermissibleValues())),
	}
	for i, pv := range val.GetPermissibleValues() {
		// A code's URN is the catalogue's identifier with the code's place
		// in it: unique, and the same for every import of the same values.
		codeURN := "urn:" + u.Namespace + ":" + KindCode + ":" + strconv.Itoa(u.Identifier) + "." + strconv.Itoa(i+1) + ":" + strconv.Itoa(u.Version)
		out.Root.SubCodes = append(out.Root.SubCodes, codeURN)
		out.Codes = append(out.Codes, &mdrv1.Code{
			Identification: &mdrv1.ItemIdentification{Urn: codeURN, Status: status},
			Designations:   lo.Sort(pv.GetMeanings()),
			SubCodes:       []string{},
			Code:           pv.GetValue(),
			IsValid:        true,
		})
	}
	return out, nil
}

// GroupSlots returns a data element group's slots.
func (ix *Index) GroupSlots(v Viewer, urn string) ([]*mdrv1.Slot, error) {
	it, err := ix.lookup(v, urn, KindGroup)
	if err != nil {
		return nil, err
	}
	return it.el.GetSlots(), nil
}
