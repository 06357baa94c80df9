// Package demo is the inquiry `make run` seeds: a released inquiry for the
// demo sites with a small expose PDF drawn with fpdf.
package demo

import (
	"bytes"
	"time"

	"github.com/go-pdf/fpdf"

	brokerv1 "fris.dev/proto/broker/v1"
)

// Label identifies the demo inquiry, so seeding finds it again.
const Label = "FRIS demo inquiry: adult patients with lung cancer"

// Query asks for donors aged 18-99 with an ICD-10 lung cancer diagnosis and
// a diagnosis date, in data elements of the demo registry (mdr16: donor age
// 14, diagnosis ICD-10 27, date of diagnosis 26).
const Query = `<Query xmlns="http://schema.samply.de/common/Query" xmlns:a="http://schema.samply.de/common/Attribute" xmlns:m="http://schema.samply.de/common/MultivalueAttribute" xmlns:r="http://schema.samply.de/common/RangeAttribute" xmlns:k="http://schema.samply.de/common/MdrKey" xmlns:v="http://schema.samply.de/common/Value">
  <Where>
    <And>
      <Between><r:RangeAttribute><k:MdrKey>urn:mdr16:dataelement:14:1</k:MdrKey><v:LowerBound>18</v:LowerBound><v:UpperBound>99</v:UpperBound></r:RangeAttribute></Between>
      <In><m:MultivalueAttribute><k:MdrKey>urn:mdr16:dataelement:27:1</k:MdrKey><v:Value>C34.0</v:Value><v:Value>C34.1</v:Value><v:Value>C34.9</v:Value></m:MultivalueAttribute></In>
      <IsNotNull><k:MdrKey>urn:mdr16:dataelement:26:1</k:MdrKey></IsNotNull>
    </And>
  </Where>
</Query>`

// Content is the demo inquiry for the given sites.
func Content(sites []string) *brokerv1.InquiryContent {
	return &brokerv1.InquiryContent{
		Label:       Label,
		Description: "How many adult patients with a lung cancer diagnosis (ICD-10 C34) does your site hold? A feasibility count for a planned study.",
		Query:       Query,
		Contact: &brokerv1.Contact{
			Title: "Dr.", Firstname: "Demo", Lastname: "Researcher", Email: "researcher@fris.example",
			Phone: "+49 30 000000", Organization: "FRIS demo network",
		},
		SearchFor:      []string{"Patienten"},
		TargetSites:    sites,
		ExposePdf:      ExposePDF(),
		ExposeFilename: "fris-demo-expose.pdf",
	}
}

// ExposePDF draws the demo expose: one page with the study outline. The
// dates inside are fixed and the catalog sorted (fpdf otherwise writes its
// fonts in map order), so the same bytes come out every time.
func ExposePDF() []byte {
	pdf := fpdf.New("P", "mm", "A4", "")
	pdf.SetCatalogSort(true)
	when := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	pdf.SetCreationDate(when)
	pdf.SetModificationDate(when)
	pdf.SetTitle("FRIS demo expose", true)
	pdf.SetAuthor("Demo Researcher", true)
	pdf.AddPage()
	pdf.SetFont("Helvetica", "B", 18)
	pdf.Cell(0, 12, "Expose: lung cancer feasibility study")
	pdf.Ln(16)
	pdf.SetFont("Helvetica", "", 11)
	for _, p := range []string{
		"Question: how many adult patients (18 to 99 years) with a diagnosis of ICD-10 C34 (malignant neoplasm of bronchus and lung) are documented at your site?",
		"Purpose: feasibility of a multi-centre observational study. Only counts are asked for; no patient data leaves your site.",
		"Contact: Dr. Demo Researcher, FRIS demo network, researcher@fris.example",
	} {
		pdf.MultiCell(0, 6, p, "", "L", false)
		pdf.Ln(4)
	}
	var b bytes.Buffer
	if err := pdf.Output(&b); err != nil {
		// fpdf fails only on bad input; the input above is fixed.
		panic("demo expose: " + err.Error())
	}
	return b.Bytes()
}
