// Package build makes the gateway's OpenAPI 3 document out of its two
// sources: the OpenAPI 2 document protoc-gen-openapiv2 writes from the
// protos' HTTP rules (proto/openapi/fris.swagger.json) and the hand-written
// part (gateway/internal/apidoc/api.yaml) for the paths without a rule and
// for what the generator cannot know (error statuses, headers, forms).
//
// It runs at generate time (`make proto`, `make apidoc`), never in the
// gateway: the gateway embeds the result, and a unit test fails when the
// committed result differs from what Build makes of the sources.
package build

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi2"
	"github.com/getkin/kin-openapi/openapi2conv"
	"github.com/getkin/kin-openapi/openapi3"
	"go.yaml.in/yaml/v4"
)

// Build merges the generated OpenAPI 2 document and the written OpenAPI 3
// YAML into one validated OpenAPI 3 document, as indented JSON.
func Build(generated, written []byte) ([]byte, error) {
	gen, err := fromSwagger(generated)
	if err != nil {
		return nil, fmt.Errorf("generated document: %w", err)
	}
	doc, err := parseWritten(written)
	if err != nil {
		return nil, fmt.Errorf("written document: %w", err)
	}
	if err := merge(doc, gen); err != nil {
		return nil, err
	}
	addConnectorPaths(doc)
	addCommonResponses(doc)
	return finish(doc)
}

func fromSwagger(b []byte) (*openapi3.T, error) {
	var d2 openapi2.T
	if err := json.Unmarshal(b, &d2); err != nil {
		return nil, err
	}
	d3, err := openapi2conv.ToV3(&d2)
	if err != nil {
		return nil, err
	}
	// Back through JSON so that every $ref is a plain string, as in the
	// written part, and nothing points into the generated document.
	j, err := json.Marshal(d3)
	if err != nil {
		return nil, err
	}
	var out openapi3.T
	if err := json.Unmarshal(j, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// parseWritten reads YAML without resolving references: the written part
// refers to schemas that only the generated part defines.
func parseWritten(b []byte) (*openapi3.T, error) {
	var v any
	if err := yaml.Unmarshal(b, &v); err != nil {
		return nil, err
	}
	j, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out openapi3.T
	dec := json.NewDecoder(bytes.NewReader(j))
	if err := dec.Decode(&out); err != nil {
		return nil, err
	}
	return &out, nil
}

// wireFixes are where the generator's names differ from the wire. The
// gateway marshals proto field names (UseProtoNames), which the generator
// follows; json_name aliases, which protojson also accepts on input, it
// cannot see.
var wireFixes = map[string]map[string]string{
	// key_id_alias [json_name = "key_id"]: the Samply auth client sends key_id.
	"SignRequestRequest": {"key_id_alias": "key_id"},
}

// ignoredParams are request fields the generator offers as query
// parameters that the public API ignores, by operation id.
var ignoredParams = map[string][]string{
	// The author is the token's subject; only the admin API sets it.
	"ResearcherService_CreateInquiry": {"author"},
}

// merge adds gen's paths and schemas to doc. An operation the written part
// also names takes its texts, extra parameters, request content types and
// non-200 responses from there; its 200 schema stays the generated one.
func merge(doc, gen *openapi3.T) error {
	if doc.Components == nil {
		doc.Components = &openapi3.Components{}
	}
	if doc.Components.Schemas == nil {
		doc.Components.Schemas = openapi3.Schemas{}
	}
	for name, s := range gen.Components.Schemas {
		if _, dup := doc.Components.Schemas[name]; dup {
			return fmt.Errorf("schema %s is both generated and written", name)
		}
		if fix, ok := wireFixes[name]; ok {
			for from, to := range fix {
				if p, ok := s.Value.Properties[from]; ok {
					delete(s.Value.Properties, from)
					s.Value.Properties[to] = p
				}
				if i := slices.Index(s.Value.Required, from); i >= 0 {
					s.Value.Required[i] = to
				}
			}
		}
		doc.Components.Schemas[name] = s
	}
	requestSchemas := map[string]bool{}
	if doc.Paths == nil {
		doc.Paths = openapi3.NewPaths()
	}
	for path, gitem := range gen.Paths.Map() {
		witem := doc.Paths.Value(path)
		if witem == nil {
			witem = &openapi3.PathItem{}
			doc.Paths.Set(path, witem)
		}
		for method, gop := range gitem.Operations() {
			fixGenerated(gop)
			collectRefs(gop.RequestBody, requestSchemas)
			wop := witem.GetOperation(method)
			if wop == nil {
				witem.SetOperation(method, gop)
				continue
			}
			overlay(gop, wop)
			witem.SetOperation(method, gop)
		}
	}
	// Every field of a response is present on the wire (EmitUnpopulated),
	// which the generator says by listing it as required; a request may
	// leave any out (the service says which it needs).
	expandRefs(doc.Components.Schemas, requestSchemas)
	for name := range requestSchemas {
		if s := doc.Components.Schemas[name]; s != nil && s.Value != nil {
			s.Value.Required = nil
		}
	}
	for _, s := range doc.Components.Schemas {
		nullableMessages(s, doc.Components.Schemas)
	}
	// Tags without operations (the admin services) are left out.
	used := map[string]bool{}
	for _, item := range doc.Paths.Map() {
		for _, op := range item.Operations() {
			for _, t := range op.Tags {
				used[t] = true
			}
		}
	}
	doc.Tags = slices.DeleteFunc(doc.Tags, func(t *openapi3.Tag) bool { return !used[t.Name] })
	return nil
}

// fixGenerated corrects what the generator says of every operation: query
// parameters are optional (proto3 semantics made them required), ignored
// ones go, and the generator's placeholder descriptions go.
func fixGenerated(op *openapi3.Operation) {
	op.Parameters = slices.DeleteFunc(op.Parameters, func(p *openapi3.ParameterRef) bool {
		return slices.Contains(ignoredParams[op.OperationID], p.Value.Name)
	})
	for _, p := range op.Parameters {
		if p.Value.In == openapi3.ParameterInQuery {
			p.Value.Required = false
			if p.Value.Schema != nil && p.Value.Schema.Value != nil {
				p.Value.Schema.Value.Default = nil
			}
		}
	}
	if op.RequestBody != nil && op.RequestBody.Value != nil {
		op.RequestBody.Value.Required = false
	}
	// A response_body rule answers an array; the generator leaves the
	// field's name as "required" on it, which means nothing there.
	for _, r := range op.Responses.Map() {
		for _, mt := range r.Value.Content {
			if s := mt.Schema; s != nil && s.Value != nil && s.Value.Type.Is(openapi3.TypeArray) {
				s.Value.Required = nil
			}
		}
	}
	// The generator writes the gRPC service name as the tag; the written
	// part names the tags readers see.
	op.Tags = nil
}

func overlay(gop, wop *openapi3.Operation) {
	gop.Summary, gop.Description = wop.Summary, wop.Description
	gop.Tags, gop.Security, gop.Extensions = wop.Tags, wop.Security, wop.Extensions
	for _, wp := range wop.Parameters {
		i := slices.IndexFunc(gop.Parameters, func(p *openapi3.ParameterRef) bool {
			return p.Value.Name == wp.Value.Name && p.Value.In == wp.Value.In
		})
		if i < 0 {
			gop.Parameters = append(gop.Parameters, wp)
			continue
		}
		// The written text, the generated schema.
		gop.Parameters[i].Value.Description = wp.Value.Description
		gop.Parameters[i].Value.Required = wp.Value.Required
		if wp.Value.Schema != nil {
			gop.Parameters[i].Value.Schema = wp.Value.Schema
		}
	}
	if wop.RequestBody != nil {
		if gop.RequestBody == nil {
			gop.RequestBody = wop.RequestBody
		} else {
			gb, wb := gop.RequestBody.Value, wop.RequestBody.Value
			gb.Description = wb.Description
			for ct, mt := range wb.Content {
				if _, ok := gb.Content[ct]; !ok {
					gb.Content[ct] = mt
				}
			}
		}
	}
	for code, wr := range wop.Responses.Map() {
		gr := gop.Responses.Value(code)
		if gr == nil {
			gop.Responses.Set(code, wr)
			continue
		}
		gr.Value.Description = wr.Value.Description
		gr.Value.Headers = wr.Value.Headers
		for ct, mt := range wr.Value.Content {
			if _, ok := gr.Value.Content[ct]; !ok {
				gr.Value.Content[ct] = mt
			}
		}
	}
}

// collectRefs notes the schemas a request body names directly.
func collectRefs(body *openapi3.RequestBodyRef, into map[string]bool) {
	if body == nil || body.Value == nil {
		return
	}
	for _, mt := range body.Value.Content {
		if mt.Schema != nil {
			if name, ok := strings.CutPrefix(mt.Schema.Ref, "#/components/schemas/"); ok {
				into[name] = true
			}
		}
	}
}

// expandRefs adds every schema the named ones refer to, transitively.
func expandRefs(schemas openapi3.Schemas, names map[string]bool) {
	var walk func(s *openapi3.SchemaRef)
	walk = func(s *openapi3.SchemaRef) {
		if s == nil {
			return
		}
		if name, ok := strings.CutPrefix(s.Ref, "#/components/schemas/"); ok {
			if names[name] {
				return
			}
			names[name] = true
			walk(schemas[name])
			return
		}
		if s.Value == nil {
			return
		}
		for _, p := range s.Value.Properties {
			walk(p)
		}
		walk(s.Value.Items)
		for _, a := range s.Value.AllOf {
			walk(a)
		}
	}
	for name := range maps.Clone(names) {
		delete(names, name)
		walk(&openapi3.SchemaRef{Ref: "#/components/schemas/" + name})
	}
}

// nullableMessages marks the properties that protojson writes as null when
// unset: messages (a $ref to an object schema) and timestamps.
func nullableMessages(s *openapi3.SchemaRef, schemas openapi3.Schemas) {
	if s == nil || s.Value == nil || s.Ref != "" {
		return
	}
	isObject := func(ref string) bool {
		t := schemas[strings.TrimPrefix(ref, "#/components/schemas/")]
		return t != nil && t.Value != nil && t.Value.Type.Is(openapi3.TypeObject)
	}
	for name, p := range s.Value.Properties {
		switch {
		case p.Ref != "" && isObject(p.Ref):
			// A $ref cannot carry nullable beside it in OpenAPI 3.0.
			s.Value.Properties[name] = &openapi3.SchemaRef{Value: &openapi3.Schema{
				AllOf: openapi3.SchemaRefs{{Ref: p.Ref}}, Nullable: true,
			}}
		case p.Value != nil && p.Value.Format == "date-time":
			p.Value.Nullable = true
		}
	}
}

// spec is the path prefix group C's paths have in the spec; connectorTwin
// the prefix the deployed Java connector sends instead.
const (
	spec          = "/dktk/sites/{site}_teiler/{teiler}/"
	connectorTwin = "/dktk/sites/{site}/teiler/{teiler}/"
)

// addConnectorPaths repeats every group C path in the connector's form:
// the same operations under an operation id of their own.
func addConnectorPaths(doc *openapi3.T) {
	for path, item := range doc.Paths.Map() {
		rest, ok := strings.CutPrefix(path, spec)
		if !ok {
			continue
		}
		twin := *item
		for method, op := range item.Operations() {
			c := *op
			c.OperationID = op.OperationID + "Connector"
			c.Summary = op.Summary + " (connector's path form)"
			twin.SetOperation(method, &c)
		}
		doc.Paths.Set(connectorTwin+rest, &twin)
	}
}

// errorFormat is how the path's errors are written: JSON (groups A, B and
// the researchers' API), plain text (groups C and D's banks API, the
// operations endpoints) or, on the login page, HTML.
func errorFormat(path string) string {
	switch {
	case strings.HasPrefix(path, "/broker/rest/searchbroker/researcher/"):
		return "json"
	case strings.HasPrefix(path, "/dktk/"), strings.HasPrefix(path, "/broker/"),
		path == "/healthz", path == "/readyz", path == "/metrics":
		return "text"
	case strings.HasSuffix(path, "/authorize"):
		return "html"
	}
	return "json"
}

// commonStatuses are the answers every path can give (docs/interface.md,
// "Statuses every path can answer"); 404 and 405 of unknown paths and
// methods belong to no operation.
var commonStatuses = []int{400, 413, 500, 503, 504, 507}

// addCommonResponses adds to every operation the statuses it does not
// document itself, in its path's error format, and 304 to every GET.
func addCommonResponses(doc *openapi3.T) {
	for path, item := range doc.Paths.Map() {
		format := errorFormat(path)
		for method, op := range item.Operations() {
			if op.Responses == nil {
				op.Responses = openapi3.NewResponses()
			}
			for _, code := range commonStatuses {
				key := strconv.Itoa(code)
				if op.Responses.Value(key) != nil {
					continue
				}
				op.Responses.Set(key, &openapi3.ResponseRef{Ref: "#/components/responses/" + format + key})
			}
			if limited(op) && op.Responses.Value("429") == nil {
				op.Responses.Set("429", &openapi3.ResponseRef{Ref: "#/components/responses/" + format + "429"})
			}
			if method == http.MethodGet && op.Responses.Value("304") == nil {
				op.Responses.Set("304", &openapi3.ResponseRef{Ref: "#/components/responses/NotModified"})
			}
		}
	}
	if doc.Components.Responses == nil {
		doc.Components.Responses = openapi3.ResponseBodies{}
	}
	doc.Components.Responses["NotModified"] = &openapi3.ResponseRef{Value: openapi3.NewResponse().
		WithDescription("Not modified: the request's If-None-Match names the current ETag. No body.")}
	for _, format := range []string{"json", "text", "html"} {
		for _, code := range append(commonStatuses, http.StatusTooManyRequests) {
			desc := commonText[code]
			r := openapi3.NewResponse().WithDescription(desc)
			switch format {
			case "json":
				r.Content = openapi3.NewContentWithJSONSchemaRef(&openapi3.SchemaRef{Ref: "#/components/schemas/Error"})
			case "text":
				r.Content = openapi3.NewContentWithSchemaRef(&openapi3.SchemaRef{Ref: "#/components/schemas/TextError"}, []string{"text/plain"})
			case "html":
				// The login page answers HTML, but its group's 503 when no
				// auth service is configured is the JSON every group A path has.
				r.Content = openapi3.NewContentWithSchemaRef(&openapi3.SchemaRef{Ref: "#/components/schemas/HTMLPage"}, []string{"text/html"})
				r.Content["application/json"] = openapi3.NewMediaType().WithSchemaRef(&openapi3.SchemaRef{Ref: "#/components/schemas/Error"})
			}
			if code == http.StatusTooManyRequests {
				r.Headers = openapi3.Headers{"Retry-After": &openapi3.HeaderRef{Value: &openapi3.Header{Parameter: openapi3.Parameter{
					Description: "Whole seconds until the next attempt may be made.", Required: true,
					Schema: openapi3.NewIntegerSchema().WithMin(1).NewRef(),
				}}}}
			}
			doc.Components.Responses[format+strconv.Itoa(code)] = &openapi3.ResponseRef{Value: r}
		}
	}
}

// limited tells whether the operation checks a credential a client can
// guess, which the abuse limits answer with 429 (docs/security.md): every
// operation with client, site or bank credentials, and those the written
// part marks x-abuse-limited (the login form, bank registration).
func limited(op *openapi3.Operation) bool {
	if v, ok := op.Extensions["x-abuse-limited"].(bool); ok {
		return v
	}
	if op.Security == nil {
		return false
	}
	for _, req := range *op.Security {
		for _, scheme := range []string{"client", "site", "bank"} {
			if _, ok := req[scheme]; ok {
				return true
			}
		}
	}
	return false
}

var commonText = map[int]string{
	429: "Too many failed attempts of this account or from this address (abuse limits); the same answer whether or not the account exists.",
	400: "The path or query is not valid UTF-8 or holds a NUL byte, a path segment is longer than -max-path-segment (512 bytes), or the request is malformed.",
	413: "The body is larger than -max-body (10 MiB). Plain text when the declared Content-Length is already too large.",
	500: "A fault of the server; the logs have it under the request id.",
	503: "The service behind the path is not configured, cannot be reached, or cannot reach its store.",
	504: "The service did not answer within -upstream-timeout (30 s).",
	507: "The service's store is full.",
}

// finish resolves every reference, validates the whole document and
// writes it as indented JSON with sorted keys (stable diffs).
func finish(doc *openapi3.T) ([]byte, error) {
	j, err := json.Marshal(doc)
	if err != nil {
		return nil, err
	}
	if _, err := Load(j); err != nil {
		return nil, err
	}
	var v any
	if err := json.Unmarshal(j, &v); err != nil {
		return nil, err
	}
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// Load parses and validates an OpenAPI 3 document, references resolved.
func Load(b []byte) (*openapi3.T, error) {
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(b)
	if err != nil {
		return nil, err
	}
	if err := doc.Validate(context.Background()); err != nil {
		return nil, fmt.Errorf("invalid OpenAPI document: %w", err)
	}
	if doc.Paths.Len() == 0 {
		return nil, errors.New("the document has no paths")
	}
	return doc, nil
}
