// Package protobody hands grpc-gateway a request message the gateway has
// already built (an OAuth form, client_secret_basic credentials moved into
// the request), so that the message is not rendered as JSON only for
// grpc-gateway's decoder to parse it again: on the token endpoint that
// round trip was a tenth of the gateway's CPU per refresh.
package protobody

import (
	"bytes"
	"fmt"
	"io"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// Body is a request body holding a message. The gateway's marshaler hands
// it to grpc-gateway as the route's decoder (Decoder); anything else that
// reads it gets the message as JSON, as a rewritten body used to be.
type Body struct {
	msg  proto.Message
	json *bytes.Reader // rendered on the first Read
	err  error
	done bool // Decode copied the message: nothing is left to read
}

// New is a body holding msg, which the caller no longer changes.
func New(msg proto.Message) *Body { return &Body{msg: msg} }

// Decoder is r as the decoder of the message it holds, or nil when r is
// not a Body.
func Decoder(r io.Reader) *Body {
	b, _ := r.(*Body)
	return b
}

// Decode copies the message into v, the route's request message. A route
// whose message is of another type reads the message's JSON instead, as
// it would have read the rewritten body.
func (b *Body) Decode(v any) error {
	m, ok := v.(proto.Message)
	if !ok || m.ProtoReflect().Descriptor().FullName() != b.msg.ProtoReflect().Descriptor().FullName() {
		if err := b.render(); err != nil {
			return err
		}
		raw, _ := io.ReadAll(b.json)
		b.done = true
		if !ok {
			return fmt.Errorf("protobody: cannot decode a request into %T", v)
		}
		return protojson.UnmarshalOptions{DiscardUnknown: true}.Unmarshal(raw, m)
	}
	proto.Reset(m)
	proto.Merge(m, b.msg)
	b.done = true
	return nil
}

// Read reads the message as JSON (proto field names), or nothing once
// Decode has taken it.
func (b *Body) Read(p []byte) (int, error) {
	if b.done {
		return 0, io.EOF
	}
	if err := b.render(); err != nil {
		return 0, err
	}
	return b.json.Read(p)
}

func (b *Body) render() error {
	if b.json == nil && b.err == nil {
		raw, err := protojson.MarshalOptions{UseProtoNames: true}.Marshal(b.msg)
		b.json, b.err = bytes.NewReader(raw), err
	}
	return b.err
}

// Close implements io.Closer; there is nothing to release.
func (b *Body) Close() error { return nil }
