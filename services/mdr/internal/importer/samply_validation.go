package importer

import (
	"fmt"

	mdrv1 "fris.dev/proto/mdr/v1"
)

// Validation.value_domain_type values, as the Samply REST API names them.
const (
	typeDescribed  = "DESCRIBED"
	typeEnumerated = "ENUMERATED"
	typeCatalog    = "CATALOG"
	validationNone = "NONE"
)

// validation describes a data element's value domain; meanings[i] are the
// designations of the domain's i-th permissible value.
func validation(vd *valueDomain, meanings [][]*mdrv1.Designation) (*mdrv1.Validation, error) {
	maxChars := "0" // Samply's "no limit", also what an absent field means
	if vd.raw.MaxCharacters != "" {
		var err error
		if maxChars, err = number("maxCharacters", vd.raw.MaxCharacters); err != nil {
			return nil, fmt.Errorf("value domain %q: %w", vd.raw.UUID, err)
		}
	}
	v := &mdrv1.Validation{
		MaximumCharacterQuantity: maxChars,
		UnitOfMeasure:            vd.raw.UnitOfMeasure,
		ValidationType:           validationNone,
	}
	switch vd.kind {
	case vdDescribed:
		v.ValueDomainType = typeDescribed
		v.Datatype = vd.raw.Datatype
		v.Format = vd.raw.Format
		v.Description = vd.raw.Description
		v.ValidationData = vd.raw.ValidationData
		if vd.raw.ValidationType != "" {
			v.ValidationType = vd.raw.ValidationType
		}
	case vdEnumerated:
		v.ValueDomainType = typeEnumerated
		v.Datatype = "enumerated"
		v.Format = "enumerated"
		for i, pv := range vd.values {
			v.PermissibleValues = append(v.PermissibleValues, &mdrv1.PermissibleValue{Value: pv.Value, Meanings: meanings[i]})
			v.Meanings = append(v.Meanings, meanings[i]...)
		}
	case vdCatalog:
		v.ValueDomainType = typeCatalog
		v.Datatype = typeCatalog
		v.Format = vd.raw.Format
	}
	return v, nil
}
