// Package monitoring holds what connectors exchange with the broker for the
// network's monitoring: the status report they send (a JSON list of items)
// and the reference query they run to measure themselves.
package monitoring

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Limits on one report. A connector sends about a dozen short items; the
// bounds keep a misbehaving one from filling the store.
const (
	MaxBytes      = 64 << 10
	MaxItems      = 200
	MaxFieldBytes = 4 << 10
)

// Item is one line of a report.
type Item struct {
	ParameterName string `json:"parameter_name"`
	StatusText    string `json:"status_text"`
	ExitStatus    string `json:"exit_status"`
}

// wireItem accepts both spellings connectors have used: Gson's default
// field names (parameterName) and, in later versions, lower case with
// underscores (parameter_name).
type wireItem struct {
	ParameterName  *string `json:"parameter_name"`
	ParameterName2 *string `json:"parameterName"`
	StatusText     *string `json:"status_text"`
	StatusText2    *string `json:"statusText"`
	ExitStatus     *string `json:"exit_status"`
	ExitStatus2    *string `json:"exitStatus"`
}

func first(a, b *string) string {
	if a != nil {
		return *a
	}
	if b != nil {
		return *b
	}
	return ""
}

// Parse reads a report: a JSON array of objects whose fields are strings
// (or absent/null). Unknown fields are ignored, as connectors add some.
func Parse(body []byte) ([]Item, error) {
	if len(body) > MaxBytes {
		return nil, fmt.Errorf("the report is larger than %d bytes", MaxBytes)
	}
	if !utf8.Valid(body) {
		// The connector declares application/json but encodes its report
		// with Apache's default charset, ISO-8859-1. Every byte string is
		// valid Latin-1, so this never fails.
		body = latin1(body)
	}
	b := bytes.TrimSpace(body)
	if len(b) == 0 || b[0] != '[' {
		return nil, errors.New("the report must be a JSON array of status items")
	}
	var raw []wireItem
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("the report is not a JSON array of status items: %v", err)
	}
	if dec.More() {
		return nil, errors.New("the report has data after its JSON array")
	}
	if len(raw) > MaxItems {
		return nil, fmt.Errorf("the report has more than %d items", MaxItems)
	}
	out := make([]Item, 0, len(raw))
	for i, w := range raw {
		it := Item{
			ParameterName: strings.TrimSpace(first(w.ParameterName, w.ParameterName2)),
			StatusText:    first(w.StatusText, w.StatusText2),
			ExitStatus:    strings.TrimSpace(first(w.ExitStatus, w.ExitStatus2)),
		}
		if it.ParameterName == "" {
			return nil, fmt.Errorf("item %d has no parameter_name", i)
		}
		if len(it.ParameterName) > MaxFieldBytes || len(it.StatusText) > MaxFieldBytes || len(it.ExitStatus) > MaxFieldBytes {
			return nil, fmt.Errorf("item %d has a field longer than %d bytes", i, MaxFieldBytes)
		}
		out = append(out, it)
	}
	return out, nil
}

func latin1(b []byte) []byte {
	out := make([]byte, 0, len(b)+len(b)/4)
	for _, c := range b {
		out = utf8.AppendRune(out, rune(c))
	}
	return out
}

// ReferenceQuery is the query connectors run to report how long a search
// takes and what it counts: female donors, in the demo registry's gender
// element. It is in the broker's normal form (see package query).
const ReferenceQuery = `<Query xmlns="http://schema.samply.de/common/Query" xmlns:a="http://schema.samply.de/common/Attribute" xmlns:m="http://schema.samply.de/common/MultivalueAttribute" xmlns:r="http://schema.samply.de/common/RangeAttribute" xmlns:k="http://schema.samply.de/common/MdrKey" xmlns:v="http://schema.samply.de/common/Value"><Where><And><Or><Eq><a:Attribute><k:MdrKey>urn:mdr16:dataelement:23:1</k:MdrKey><v:Value>female</v:Value></a:Attribute></Eq></Or></And></Where></Query>`

// ReferenceCQL is the same question for connectors that speak CQL.
const ReferenceCQL = "library Retrieve\n" +
	"using FHIR version '4.0.0'\n" +
	"include FHIRHelpers version '4.0.0'\n" +
	"context Patient\n" +
	"define InInitialPopulation:\n" +
	"    Patient.gender = 'female'"
