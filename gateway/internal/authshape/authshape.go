// Package authshape holds the answer shapes of group A (the identity
// provider): which JSON names each answer carries. The auth service answers
// with every name (the spec's and the Samply auth client's); a deployment
// whose clients read strictly, failing on any name they do not know, picks
// the names its clients read (-auth-answers, docs/decisions.md, "Answer
// shapes").
package authshape

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"

	authv1 "fris.dev/proto/auth/v1"
)

// Shape is a set of names for group A's answers.
type Shape string

const (
	// Both is every name: the spec's and auth-dto's side by side, and the
	// OAuth 2.0 / OpenID Connect names standard libraries read. The default.
	Both Shape = "both"
	// Spec is the spec's tables' names only: for clients written to the
	// spec whose JSON readers refuse unknown names.
	Spec Shape = "spec"
	// Samply is the names of the Samply auth client's DTOs (auth-dto 5.x)
	// only, with its list envelopes: for applications whose JAX-RS JSON
	// provider is Jackson with its defaults (unknown properties fail).
	Samply Shape = "samply"
)

// Parse reads a shape's name.
func Parse(s string) (Shape, error) {
	switch sh := Shape(s); sh {
	case Both, Spec, Samply:
		return sh, nil
	}
	return "", fmt.Errorf("%q is not an answer shape: spec, samply or both", s)
}

// keep lists, per answer, the names a shape sends, in the order sent; an
// answer or shape not listed is sent as the service wrote it.
var keep = map[Shape]map[string][]string{
	Spec: {
		"SignRequestResponse": {"code", "expirationDate", "algoritm"},
		"RegisterResponse":    {"userId", "keyId"},
		"TokenResponse":       {"access_token", "id_token", "refresh_token"},
		"TokenInfo":           {"expirationDate", "subject", "scope", "nonce", "notBeofre", "issuer"},
		"UserInfo":            {"real_name", "contact_information", "locality", "email", "email_verified"},
	},
	// auth-dto's SignRequestDto, RegistrationDto, AccessTokenDto (which
	// also ignores unknown names), TokenInfoDto and UserDto; the names are
	// the DTOs' @XmlElement names where they have one, which Jersey's
	// Jackson provider honours.
	Samply: {
		"SignRequestResponse": {"code", "exp", "algorithm"},
		"RegisterResponse":    {"user_id", "key_id"},
		"TokenResponse":       {"access_token", "id_token", "refresh_token", "token_type", "expires_in"},
		"TokenInfo":           {"expirationDate", "subject", "scope", "jti", "notBefore", "issuedAt", "issuer"},
		"UserInfo":            {"id", "name", "email", "email_verified", "contact_information", "locations"},
	},
}

// Marshaler is grpc-gateway's marshaler for group A's routes: it renders
// with the wrapped marshaler, then keeps the shape's names. Answers that
// are not group A's go through unchanged.
type Marshaler struct {
	runtime.Marshaler
	Shape Shape
}

// Marshal renders v, one answer (or, for routes with a response_body, the
// list it names) in m's shape.
func (m Marshaler) Marshal(v any) ([]byte, error) {
	b, err := m.Marshaler.Marshal(v)
	if err != nil || m.Shape == Both || m.Shape == "" {
		return b, err
	}
	switch v.(type) {
	case *authv1.SignRequestResponse:
		return m.object("SignRequestResponse", b)
	case *authv1.RegisterResponse:
		return m.object("RegisterResponse", b)
	case *authv1.TokenResponse:
		return m.object("TokenResponse", b)
	case *authv1.TokenInfo:
		return m.object("TokenInfo", b)
	case *authv1.UserInfo:
		return m.object("UserInfo", b)
	case []*authv1.UserInfo:
		// users/search: the spec's array; auth-dto's UserListDto {users}.
		out, err := m.list("UserInfo", b)
		if err != nil || m.Shape != Samply {
			return out, err
		}
		return envelope("users", out)
	case []*authv1.Client:
		// /clients: the spec's array; auth-dto's ClientListDto {clients},
		// whose ClientDescriptionDto has the spec's names.
		if m.Shape == Samply {
			return envelope("clients", b)
		}
	}
	return b, nil
}

// member is one name of a JSON object and its value as written.
type member struct {
	name  string
	value json.RawMessage
}

// members reads a JSON object's members in order.
func members(b []byte) ([]member, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, fmt.Errorf("authshape: not a JSON object: %s", b)
	}
	var out []member
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, err
		}
		out = append(out, member{name: t.(string), value: raw})
	}
	return out, nil
}

// object keeps the names of answer's shape in the object b.
func (m Marshaler) object(answer string, b []byte) ([]byte, error) {
	names, ok := keep[m.Shape][answer]
	if !ok {
		return b, nil
	}
	ms, err := members(b)
	if err != nil {
		return nil, err
	}
	have := make(map[string]json.RawMessage, len(ms))
	for _, mb := range ms {
		have[mb.name] = mb.value
	}
	if answer == "UserInfo" && m.Shape == Samply {
		if loc := locations(have["locality"]); loc != nil {
			have["locations"] = loc
		}
	}
	var out bytes.Buffer
	out.WriteByte('{')
	for _, n := range names {
		v, ok := have[n]
		if !ok {
			continue
		}
		if out.Len() > 1 {
			out.WriteByte(',')
		}
		name, _ := json.Marshal(n)
		out.Write(name)
		out.WriteByte(':')
		out.Write(v)
	}
	out.WriteByte('}')
	return out.Bytes(), nil
}

// locations is UserDto's list of LocationDto for the spec's one locality:
// the locality when the user has one, else nil (no list at all).
func locations(locality json.RawMessage) json.RawMessage {
	var l struct {
		ID          string `json:"id"`
		Name        string `json:"name"`
		Description string `json:"description"`
	}
	if len(locality) == 0 || json.Unmarshal(locality, &l) != nil || l.ID == "" {
		return nil
	}
	b, _ := json.Marshal([]any{l})
	return b
}

// list applies object to every element of the JSON array b.
func (m Marshaler) list(answer string, b []byte) ([]byte, error) {
	var elems []json.RawMessage
	if err := json.Unmarshal(b, &elems); err != nil {
		return nil, fmt.Errorf("authshape: not a JSON array: %w", err)
	}
	out := make([]json.RawMessage, len(elems))
	for i, e := range elems {
		o, err := m.object(answer, e)
		if err != nil {
			return nil, err
		}
		out[i] = o
	}
	return json.Marshal(out)
}

// envelope wraps the JSON value b as {name: b}.
func envelope(name string, b []byte) ([]byte, error) {
	return json.Marshal(map[string]json.RawMessage{name: b})
}
