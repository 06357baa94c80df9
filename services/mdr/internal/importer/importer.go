// Package importer turns registry export files into the Registry message the
// MdrAdmin Import RPC takes. It understands two formats: Samply MDR XML
// exports (what existing registries produce) and FRIS JSON (the protojson form
// of Registry, what FRIS itself writes).
package importer

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"

	mdrv1 "fris.dev/proto/mdr/v1"
)

// MaxInputBytes bounds what a parser reads: exports are a few MB, and an
// import runs inside a server, so a runaway input must not exhaust memory.
const MaxInputBytes = 64 << 20

// Input formats reported by Detect.
const (
	FormatXML  = "xml"
	FormatJSON = "json"
)

// sniffBytes is how much of the input Parse looks at to pick a format; plenty
// for leading whitespace in real files.
const sniffBytes = 4096

const utf8BOM = "\xEF\xBB\xBF"

// Detect names the format of an input from its beginning: "xml" when the
// first non-space byte is '<', "json" when it is '{'. A UTF-8 byte order
// mark is ignored because editors on Windows like to add one.
func Detect(head []byte) (string, error) {
	head = bytes.TrimPrefix(head, []byte(utf8BOM))
	i := bytes.IndexFunc(head, func(r rune) bool { return !isXMLSpace(r) })
	if i < 0 {
		return "", errors.New("importer: input is empty")
	}
	switch head[i] {
	case '<':
		return FormatXML, nil
	case '{':
		return FormatJSON, nil
	default:
		return "", fmt.Errorf("importer: unrecognized input starting with %q: want '<' (Samply XML) or '{' (FRIS JSON)", head[i])
	}
}

// isXMLSpace reports the whitespace both XML and JSON allow between tokens.
func isXMLSpace(r rune) bool {
	return r == ' ' || r == '\t' || r == '\r' || r == '\n'
}

// Parse detects the input's format and parses it accordingly.
func Parse(r io.Reader) (*mdrv1.Registry, error) {
	br := bufio.NewReaderSize(r, sniffBytes)
	head, err := br.Peek(sniffBytes) // shorter inputs end in io.EOF
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("importer: reading input: %w", err)
	}
	format, err := Detect(head)
	if err != nil {
		if len(head) == sniffBytes {
			return nil, fmt.Errorf("importer: no XML or JSON in the first %d bytes", sniffBytes)
		}
		return nil, err
	}
	// Neither encoding/xml nor protojson accepts a byte order mark.
	if bytes.HasPrefix(head, []byte(utf8BOM)) {
		if _, err := br.Discard(len(utf8BOM)); err != nil {
			return nil, fmt.Errorf("importer: reading input: %w", err)
		}
	}
	if format == FormatXML {
		return ParseSamplyXML(br)
	}
	return ParseJSON(br)
}

// readLimited reads all of r, failing when it holds more than limit bytes.
func readLimited(r io.Reader, limit int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, fmt.Errorf("importer: reading input: %w", err)
	}
	if int64(len(data)) > limit {
		return nil, tooLarge(limit)
	}
	return data, nil
}

func tooLarge(limit int64) error {
	return fmt.Errorf("importer: input is larger than the limit of %d bytes", limit)
}
