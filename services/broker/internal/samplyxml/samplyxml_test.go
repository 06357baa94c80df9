package samplyxml

import (
	"encoding/xml"
	"testing"

	brokerv1 "fris.dev/proto/broker/v1"
)

// The documents decode with the element names and namespaces the Samply
// schemas declare; the structs here are written from the schemas.
func TestDocumentsDecodeAsTheSchemasSay(t *testing.T) {
	in := &brokerv1.Inquiry{
		Id: "12", Revision: 3, Label: "Lung <cancer> & smoking", Description: "Cohort size",
		Contact:   &brokerv1.Contact{Title: "Dr.", Firstname: "Ada", Lastname: "Lovelace", Email: "ada@example.org", Organization: "Charité"},
		SearchFor: []string{"donors", "samples"},
	}
	const q = `<Query xmlns="http://schema.samply.de/common/Query"><Where/></Query>`

	var list struct {
		XMLName xml.Name `xml:"Inquiries"`
		Items   []struct {
			ID       string `xml:"Id"`
			Revision string `xml:"Revision"`
		} `xml:"Inquiry"`
	}
	if err := xml.Unmarshal(List([]Ref{{"1", 2}, {"5", 1}}), &list); err != nil {
		t.Fatal(err)
	}
	if list.XMLName.Space != "" || len(list.Items) != 2 || list.Items[1].ID != "5" || list.Items[0].Revision != "2" {
		t.Fatalf("list = %+v", list)
	}
	var empty struct {
		XMLName xml.Name   `xml:"Inquiries"`
		Items   []struct{} `xml:"Inquiry"`
	}
	if err := xml.Unmarshal(List(nil), &empty); err != nil || len(empty.Items) != 0 {
		t.Fatalf("empty list = %+v, %v", empty, err)
	}

	type contact struct {
		Title        string `xml:"http://schema.samply.de/common/Inquiry title"`
		Firstname    string `xml:"http://schema.samply.de/common/Inquiry firstname"`
		Lastname     string `xml:"http://schema.samply.de/common/Inquiry lastname"`
		Email        string `xml:"http://schema.samply.de/common/Inquiry email"`
		Organization string `xml:"http://schema.samply.de/common/Inquiry organization"`
	}
	var whole struct {
		XMLName  xml.Name `xml:"http://schema.samply.de/common/Inquiry Inquiry"`
		ID       string   `xml:"id,attr"`
		Revision string   `xml:"revision,attr"`
		Query    struct {
			XMLName xml.Name `xml:"http://schema.samply.de/common/Query Query"`
		}
		ExposeURL   string   `xml:"http://schema.samply.de/common/Inquiry ExposeURL"`
		Author      contact  `xml:"http://schema.samply.de/common/Inquiry Author"`
		Label       string   `xml:"http://schema.samply.de/common/Inquiry Label"`
		Description string   `xml:"http://schema.samply.de/common/Inquiry Description"`
		SearchFor   []string `xml:"http://schema.samply.de/common/Inquiry SearchFor"`
	}
	if err := xml.Unmarshal(Inquiry(in, q, "http://b/exposes/4"), &whole); err != nil {
		t.Fatal(err)
	}
	if whole.ID != "12" || whole.Revision != "3" || whole.ExposeURL != "http://b/exposes/4" || whole.Label != in.Label ||
		whole.Author.Lastname != "Lovelace" || whole.Author.Organization != "Charité" || len(whole.SearchFor) != 2 {
		t.Fatalf("inquiry = %+v", whole)
	}

	var c struct {
		XMLName xml.Name `xml:"http://schema.samply.de/common/Inquiry Contact"`
		contact
	}
	if err := xml.Unmarshal(Contact(in.Contact), &c); err != nil || c.Title != "Dr." || c.Lastname != "Lovelace" {
		t.Fatalf("contact = %+v, %v", c, err)
	}

	var info struct {
		XMLName     xml.Name `xml:"http://schema.samply.de/common/Inquiry Info"`
		Label       string   `xml:"http://schema.samply.de/common/Inquiry Label"`
		Description string   `xml:"http://schema.samply.de/common/Inquiry Description"`
		Revision    string   `xml:"http://schema.samply.de/common/Inquiry Revision"`
	}
	if err := xml.Unmarshal(Info(in), &info); err != nil || info.Label != in.Label || info.Revision != "3" {
		t.Fatalf("info = %+v, %v", info, err)
	}
}
