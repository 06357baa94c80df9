package patient

import "errors"

// The CCP patient model as the parser builds it, and what the upload
// service reads off a parsed document: counts and the values to check.

// NSBase is the namespace prefix of every element: NSBase + "Patient" etc.
const NSBase = "http://schema.samply.de/ccp/"

// Limits bound one document; zero fields take the defaults.
type Limits struct {
	MaxBytes int64 // default 10 MiB
	MaxDepth int   // default 32
}

// ErrTooLarge: the document has more than Limits.MaxBytes bytes.
var ErrTooLarge = errors.New("patient document too large")

// InvalidError is a document that is not a patient document; Reason says
// why, in one line for the client.
type InvalidError struct{ Reason string }

func (e *InvalidError) Error() string { return e.Reason }

// Attribute is one data element's value, or the bounds of a range.
type Attribute struct {
	MdrKey string
	Value  string
	// HasValue tells an empty Value from none (bounds only).
	HasValue bool
	// Nil is a Value marked xsi:nil="true": the source had no value.
	Nil                    bool
	LowerBound, UpperBound *string
}

// Ref links an entity to others by their ids.
type Ref struct {
	EntityIDs []string
}

// Entity is what every element of the model has: Patient, Case, Sample and
// Container.
type Entity struct {
	ID         string
	Attributes []Attribute
	Containers []Container
	Refs       []Ref
}

// Container groups data inside an entity (a tumour, a therapy, a box of
// tubes) and may nest.
type Container struct {
	Entity
	Designation string
}

// Sample is one biosample.
type Sample struct{ Entity }

// Case is one episode of care.
type Case struct{ Entity }

// Patient is a parsed document.
type Patient struct {
	Entity
	DKTKID, CentraxxID, IDType string
	Cases                      []Case
	Samples                    []Sample
}

// Counts are the numbers of elements of each kind anywhere in a document.
type Counts struct {
	Cases, Samples, Containers, Attributes, Refs int
}

// Counts counts the patient's elements.
func (p *Patient) Counts() Counts {
	var n Counts
	var entity func(e *Entity)
	entity = func(e *Entity) {
		n.Attributes += len(e.Attributes)
		n.Refs += len(e.Refs)
		n.Containers += len(e.Containers)
		for i := range e.Containers {
			entity(&e.Containers[i].Entity)
		}
	}
	entity(&p.Entity)
	n.Cases, n.Samples = len(p.Cases), len(p.Samples)
	for i := range p.Cases {
		entity(&p.Cases[i].Entity)
	}
	for i := range p.Samples {
		entity(&p.Samples[i].Entity)
	}
	return n
}

// Value is one value to check against the registry. Where names its
// place for people (`case "c1"`); Kind is Value, LowerBound or UpperBound.
type Value struct {
	Where, MdrKey, Kind, Text string
}

// Values lists every value and bound to check, in document order: each
// entity's own attributes, then its containers', depth first; the
// Patient, then its cases, then its samples. A nil or empty value is left
// out: it says the source has no value, which is not a wrong one, and a
// registry would refuse "" for most types and so refuse real data.
func (p *Patient) Values() []Value {
	var out []Value
	add := func(where, key, kind, text string) {
		if text != "" {
			out = append(out, Value{Where: where, MdrKey: key, Kind: kind, Text: text})
		}
	}
	var entity func(where string, e *Entity)
	entity = func(where string, e *Entity) {
		for _, a := range e.Attributes {
			if a.HasValue && !a.Nil {
				add(where, a.MdrKey, "Value", a.Value)
			}
			if a.LowerBound != nil {
				add(where, a.MdrKey, "LowerBound", *a.LowerBound)
			}
			if a.UpperBound != nil {
				add(where, a.MdrKey, "UpperBound", *a.UpperBound)
			}
		}
		for i := range e.Containers {
			entity("container"+e.Containers[i].label(), &e.Containers[i].Entity)
		}
	}
	entity("patient "+quote(p.ID), &p.Entity)
	for i := range p.Cases {
		entity("case "+quote(p.Cases[i].ID), &p.Cases[i].Entity)
	}
	for i := range p.Samples {
		entity("sample "+quote(p.Samples[i].ID), &p.Samples[i].Entity)
	}
	return out
}
