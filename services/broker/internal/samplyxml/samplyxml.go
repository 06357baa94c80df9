// Package samplyxml writes the documents the sites' connectors read from the
// broker, in the shapes of the Samply share schemas: the inquiry list
// (Inquiries/Inquiry/{Id,Revision}, no namespace), and in the namespace
// http://schema.samply.de/common/Inquiry the whole Inquiry (attributes id
// and revision; Query, ExposeURL, Author, Label, Description, SearchFor),
// Contact (title, firstname, lastname, phone, email, organization) and Info
// (Label, Description, Revision). The Query inside an Inquiry keeps its own
// namespace (see package query).
package samplyxml

import (
	"encoding/xml"
	"strconv"
	"strings"

	brokerv1 "fris.dev/proto/broker/v1"
)

// NSInquiry is the namespace of Inquiry, Contact and Info.
const NSInquiry = "http://schema.samply.de/common/Inquiry"

const header = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>` + "\n"

// Ref is one entry of the inquiry list.
type Ref struct {
	ID       string
	Revision int32
}

// List renders the inquiry list.
func List(refs []Ref) []byte {
	var b strings.Builder
	b.WriteString(header)
	if len(refs) == 0 {
		b.WriteString("<Inquiries/>")
		return []byte(b.String())
	}
	b.WriteString("<Inquiries>")
	for _, r := range refs {
		b.WriteString("<Inquiry>")
		elem(&b, "Id", r.ID)
		elem(&b, "Revision", strconv.Itoa(int(r.Revision)))
		b.WriteString("</Inquiry>")
	}
	b.WriteString("</Inquiries>")
	return []byte(b.String())
}

// Inquiry renders the whole inquiry; query is its normalised Query element
// and exposeURL where its expose is served ("" when it has none).
func Inquiry(in *brokerv1.Inquiry, query, exposeURL string) []byte {
	var b strings.Builder
	b.WriteString(header)
	b.WriteString(`<Inquiry xmlns="` + NSInquiry + `" id="`)
	escape(&b, in.GetId())
	b.WriteString(`" revision="` + strconv.Itoa(int(in.GetRevision())) + `">`)
	b.WriteString(query)
	elem(&b, "ExposeURL", exposeURL)
	b.WriteString("<Author>")
	contactFields(&b, in.GetContact())
	b.WriteString("</Author>")
	elem(&b, "Label", in.GetLabel())
	elem(&b, "Description", in.GetDescription())
	for _, s := range in.GetSearchFor() {
		elem(&b, "SearchFor", s)
	}
	b.WriteString("</Inquiry>")
	return []byte(b.String())
}

// Query renders the query document alone.
func Query(query string) []byte {
	return []byte(header + query)
}

// Contact renders the inquiry's contact.
func Contact(c *brokerv1.Contact) []byte {
	var b strings.Builder
	b.WriteString(header)
	b.WriteString(`<Contact xmlns="` + NSInquiry + `">`)
	contactFields(&b, c)
	b.WriteString("</Contact>")
	return []byte(b.String())
}

// Info renders label, description and revision.
func Info(in *brokerv1.Inquiry) []byte {
	var b strings.Builder
	b.WriteString(header)
	b.WriteString(`<Info xmlns="` + NSInquiry + `">`)
	elem(&b, "Label", in.GetLabel())
	elem(&b, "Description", in.GetDescription())
	elem(&b, "Revision", strconv.Itoa(int(in.GetRevision())))
	b.WriteString("</Info>")
	return []byte(b.String())
}

// contactFields writes the schema's sequence; lastname is required there,
// the others are left out when empty.
func contactFields(b *strings.Builder, c *brokerv1.Contact) {
	opt := func(name, v string) {
		if v != "" {
			elem(b, name, v)
		}
	}
	opt("title", c.GetTitle())
	opt("firstname", c.GetFirstname())
	elem(b, "lastname", c.GetLastname())
	opt("phone", c.GetPhone())
	opt("email", c.GetEmail())
	opt("organization", c.GetOrganization())
}

func elem(b *strings.Builder, name, text string) {
	b.WriteString("<" + name + ">")
	escape(b, text)
	b.WriteString("</" + name + ">")
}

func escape(b *strings.Builder, s string) { _ = xml.EscapeText(b, []byte(s)) }
