package build

import (
	"encoding/json"
	"strings"
	"testing"
)

// swagger is a generated document as protoc-gen-openapiv2 writes it: one
// RPC with a request body, a query parameter it marks required (proto3
// semantics), an alias field and a message-typed field.
const swagger = `{
  "swagger": "2.0",
  "info": {"title": "x", "version": "1"},
  "consumes": ["application/json"], "produces": ["application/json"],
  "paths": {
    "/oauth2/sign_request": {"post": {
      "operationId": "AuthService_SignRequest",
      "parameters": [
        {"name": "body", "in": "body", "required": true, "schema": {"$ref": "#/definitions/SignRequestRequest"}},
        {"name": "hint", "in": "query", "required": true, "type": "string"}
      ],
      "responses": {"200": {"description": "A successful response.", "schema": {"$ref": "#/definitions/Answer"}}},
      "tags": ["AuthService"]
    }}
  },
  "definitions": {
    "SignRequestRequest": {"type": "object", "properties": {"keyId": {"type": "integer"}, "key_id_alias": {"type": "integer"}}, "required": ["keyId", "key_id_alias"]},
    "Locality": {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]},
    "Answer": {"type": "object", "properties": {"code": {"type": "string"}, "locality": {"$ref": "#/definitions/Locality"}, "at": {"type": "string", "format": "date-time"}}, "required": ["code", "locality", "at"]}
  }
}`

// written overlays the generated operation and adds a path of its own.
const written = `
openapi: 3.0.3
info: {title: t, version: "1"}
tags: [{name: a}]
paths:
  /oauth2/sign_request:
    post:
      operationId: AuthService_SignRequest
      tags: [a]
      summary: A code to sign
      responses:
        "200":
          description: The code.
          content:
            application/json:
              schema: {type: string}
        "404":
          description: No such key.
          content:
            application/json:
              schema: {$ref: "#/components/schemas/Error"}
  /dktk/sites/{site}_teiler/{teiler}/uploadStats:
    parameters:
      - {name: site, in: path, required: true, schema: {type: string}}
      - {name: teiler, in: path, required: true, schema: {type: string}}
    get:
      operationId: GetUploadStats
      tags: [a]
      summary: Stats
      responses:
        "200":
          description: The stats.
          content:
            application/xml:
              schema: {type: string}
components:
  schemas:
    Error: {type: object, properties: {error: {type: string}}}
    TextError: {type: string}
    HTMLPage: {type: string}
`

func build(t *testing.T, generated, written string) map[string]any {
	t.Helper()
	b, err := Build([]byte(generated), []byte(written))
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

// at walks decoded JSON by keys.
func at(t *testing.T, v any, keys ...string) any {
	t.Helper()
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			t.Fatalf("at %v: %T is not an object", keys, v)
		}
		if v, ok = m[k]; !ok {
			t.Fatalf("at %v: no %q", keys, k)
		}
	}
	return v
}

func TestBuild(t *testing.T) {
	doc := build(t, swagger, written)
	op := []string{"paths", "/oauth2/sign_request", "post"}
	// The written text, the generated 200 schema.
	if got := at(t, doc, append(op, "summary")...); got != "A code to sign" {
		t.Errorf("summary %v", got)
	}
	if got := at(t, doc, append(op, "responses", "200", "description")...); got != "The code." {
		t.Errorf("200 description %v", got)
	}
	if got := at(t, doc, append(op, "responses", "200", "content", "application/json", "schema", "$ref")...); got != "#/components/schemas/Answer" {
		t.Errorf("200 schema %v, want the generated one", got)
	}
	if at(t, doc, append(op, "responses", "404")...) == nil {
		t.Error("the written 404 is missing")
	}
	// Common statuses in the group's format, 304 only on GET.
	if got := at(t, doc, append(op, "responses", "503", "$ref")...); got != "#/components/responses/json503" {
		t.Errorf("503 %v", got)
	}
	if _, ok := at(t, doc, append(op, "responses")...).(map[string]any)["304"]; ok {
		t.Error("a POST documents 304")
	}
	stats := []string{"paths", "/dktk/sites/{site}_teiler/{teiler}/uploadStats", "get", "responses"}
	if got := at(t, doc, append(stats, "503", "$ref")...); got != "#/components/responses/text503" {
		t.Errorf("group C's 503 %v, want plain text", got)
	}
	if at(t, doc, append(stats, "304")...) == nil {
		t.Error("a GET lacks 304")
	}
	// The connector's twin, under an operation id of its own.
	if got := at(t, doc, "paths", "/dktk/sites/{site}/teiler/{teiler}/uploadStats", "get", "operationId"); got != "GetUploadStatsConnector" {
		t.Errorf("twin operation id %v", got)
	}
	// The query parameter is optional after all.
	params := at(t, doc, append(op, "parameters")...).([]any)
	if len(params) != 1 || params[0].(map[string]any)["required"] == true {
		t.Errorf("parameters %v", params)
	}
	// Request schemas require nothing and use wire names; response schemas
	// list every field, messages and timestamps nullable.
	req := at(t, doc, "components", "schemas", "SignRequestRequest").(map[string]any)
	if _, ok := req["required"]; ok {
		t.Errorf("request schema still requires %v", req["required"])
	}
	if _, ok := at(t, req, "properties").(map[string]any)["key_id"]; !ok {
		t.Error("key_id_alias was not renamed key_id")
	}
	ans := at(t, doc, "components", "schemas", "Answer")
	if len(at(t, ans, "required").([]any)) != 3 {
		t.Errorf("response schema requires %v", at(t, ans, "required"))
	}
	if at(t, ans, "properties", "locality", "nullable") != true || at(t, ans, "properties", "at", "nullable") != true {
		t.Errorf("message or timestamp not nullable: %v", at(t, ans, "properties"))
	}
	// The generator's service tag is gone, the written one stays.
	if tags := at(t, doc, "tags").([]any); len(tags) != 1 {
		t.Errorf("tags %v", tags)
	}
}

func TestBuildRefuses(t *testing.T) {
	for name, tc := range map[string]struct{ generated, written, want string }{
		"schema defined twice": {swagger, written + "    Answer: {type: object}\n", "both generated and written"},
		"dangling reference":   {swagger, strings.Replace(written, "#/components/schemas/Error", "#/components/schemas/Nope", 1), "Nope"},
		"broken YAML":          {swagger, written + "\n  : :\n", "written document"},
		"broken generated":     {"{", written, "generated document"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Build([]byte(tc.generated), []byte(tc.written))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want one naming %q", err, tc.want)
			}
		})
	}
}
