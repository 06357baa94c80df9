package service

import (
	"context"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"fris.dev/pkg/identity"
	mdrv1 "fris.dev/proto/mdr/v1"
)

// clientRegistry is the demo with a private namespace holding a
// catalogue-valued data element and a group with slots.
func clientRegistry(t *testing.T) *mdrv1.Registry {
	reg := demo(t)
	reg.Namespaces = append(reg.Namespaces, &mdrv1.NamespaceDef{
		Name: "clinic", Private: true, Members: []string{"urn:clinic:dataelementgroup:1:1"},
		Elements: []*mdrv1.Element{
			{Urn: "urn:clinic:dataelement:1:1", Status: "RELEASED",
				Designations: []*mdrv1.Designation{{Lang: "de", Designation: "Diagnose"}, {Lang: "en", Designation: "Diagnosis"}},
				Validation: &mdrv1.Validation{ValueDomainType: "CATALOG", Datatype: "CATALOG", PermissibleValues: []*mdrv1.PermissibleValue{
					{Value: "C00", Meanings: []*mdrv1.Designation{{Lang: "de", Designation: "Lippe"}, {Lang: "en", Designation: "Lip"}}},
				}}},
			{Urn: "urn:clinic:dataelementgroup:1:1", Members: []string{"urn:clinic:dataelement:1:1"},
				Designations: []*mdrv1.Designation{{Lang: "de", Designation: "Tumor"}},
				Slots:        []*mdrv1.Slot{{SlotName: "fhir", SlotValue: "Condition"}}},
		},
	})
	return reg
}

func TestClientCalls(t *testing.T) {
	ctx := context.Background()
	svc, err := New(ctx, newStore(t), quiet(), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	pub, adm := serve(t, svc)
	if _, err := adm.Import(ctx, &mdrv1.ImportRequest{Registry: clientRegistry(t)}); err != nil {
		t.Fatal(err)
	}
	id := identity.Identity{Subject: "7", Scopes: []string{"mdr:clinic"}}
	granted := metadata.NewOutgoingContext(ctx, metadata.Pairs(append(id.Pairs(), "accept-language", "en")...))
	wantCode := func(t *testing.T, err error, want codes.Code) {
		t.Helper()
		if status.Code(err) != want {
			t.Fatalf("error %v, want %v", err, want)
		}
	}

	t.Run("GroupSlots", func(t *testing.T) {
		_, err := pub.GetDataElementGroupSlots(ctx, &mdrv1.UrnRequest{Urn: "urn:clinic:dataelementgroup:1:1"})
		wantCode(t, err, codes.NotFound)
		res, err := pub.GetDataElementGroupSlots(granted, &mdrv1.UrnRequest{Urn: "urn:clinic:dataelementgroup:1:1"})
		if err != nil || len(res.GetSlots()) != 1 || res.GetSlots()[0].GetSlotValue() != "Condition" {
			t.Fatalf("slots = %v, %v", res, err)
		}
	})

	t.Run("UserMembers", func(t *testing.T) {
		anon, err := pub.GetUserMembers(ctx, &mdrv1.UserMembersRequest{})
		if err != nil || anon.GetTotalcount() != 6 {
			t.Fatalf("anonymous = %v, %v", anon, err)
		}
		all, err := pub.GetUserMembers(granted, &mdrv1.UserMembersRequest{Limit: 1})
		if err != nil || all.GetTotalcount() != 7 || len(all.GetResults()) != 1 || all.GetResults()[0].GetId() != "urn:clinic:dataelementgroup:1:1" {
			t.Fatalf("granted = %v, %v", all, err)
		}
		_, err = pub.GetUserMembers(ctx, &mdrv1.UserMembersRequest{Offset: -1})
		wantCode(t, err, codes.InvalidArgument)
	})

	t.Run("SearchLocal", func(t *testing.T) {
		res, err := pub.SearchLocal(granted, &mdrv1.LocalSearchRequest{Query: "diagnos", Status: "released", Type: []string{"[dataelement, dataelementgroup]"}})
		if err != nil {
			t.Fatal(err)
		}
		var found bool
		for _, r := range res.GetResults() {
			found = found || r.GetId() == "urn:clinic:dataelement:1:1"
			if r.GetIdentification().GetStatus() != "RELEASED" {
				t.Errorf("%s has status %q", r.GetId(), r.GetIdentification().GetStatus())
			}
		}
		if !found {
			t.Fatalf("granted search lacks the private element: %v", res)
		}
		long := strings.Repeat("x", 513)
		for _, r := range []*mdrv1.LocalSearchRequest{
			{},
			{Query: long},
			{Query: "x", Status: long},
			{Query: "x", Type: []string{long}},
			{Query: "x", Status: "gone"},
			{Query: "x", Type: []string{"catalog"}},
		} {
			_, err := pub.SearchLocal(ctx, r)
			wantCode(t, err, codes.InvalidArgument)
		}
	})

	t.Run("Representations", func(t *testing.T) {
		res, err := pub.GetRepresentations(granted, &mdrv1.RepresentationsRequest{Urn: "urn:clinic:dataelement:1:latest"})
		if err != nil || len(res.GetResults()) != 1 || res.GetResults()[0].GetId() != "urn:clinic:dataelement:1:1" {
			t.Fatalf("representations = %v, %v", res, err)
		}
		_, err = pub.GetRepresentations(ctx, &mdrv1.RepresentationsRequest{Urn: "urn:clinic:dataelement:1:1"})
		wantCode(t, err, codes.NotFound)
		_, err = pub.GetRepresentations(ctx, &mdrv1.RepresentationsRequest{Urn: strings.Repeat("u", 257)})
		wantCode(t, err, codes.InvalidArgument)
	})

	t.Run("Catalogue", func(t *testing.T) {
		c, err := pub.GetDataElementCatalogue(granted, &mdrv1.UrnRequest{Urn: "urn:clinic:dataelement:1:1"})
		if err != nil || c.GetRoot().GetIdentification().GetUrn() != "urn:clinic:catalog:1:1" || len(c.GetCodes()) != 1 {
			t.Fatalf("catalogue = %v, %v", c, err)
		}
		if d := c.GetCodes()[0].GetDesignations()[0]; d.GetDesignation() != "Lip" || d.GetLanguage() != "en" {
			t.Fatalf("Accept-Language en: first meaning %v", d)
		}
		same, err := pub.GetCatalogueCodes(granted, &mdrv1.UrnRequest{Urn: "urn:clinic:catalog:1:1"})
		if err != nil || same.GetCodes()[0].GetCode() != "C00" {
			t.Fatalf("catalogue by its URN = %v, %v", same, err)
		}
		_, err = pub.GetCatalogueCodes(ctx, &mdrv1.UrnRequest{Urn: "urn:clinic:catalog:1:1"})
		wantCode(t, err, codes.NotFound)
		_, err = pub.GetDataElementCatalogue(ctx, &mdrv1.UrnRequest{Urn: "urn:mdr16:dataelement:23:1"})
		wantCode(t, err, codes.NotFound)
		for _, bad := range []string{strings.Repeat("u", 257), "urn:mdr16:catalog:x:1"} {
			_, err = pub.GetCatalogueCodes(ctx, &mdrv1.UrnRequest{Urn: bad})
			wantCode(t, err, codes.InvalidArgument)
			_, err = pub.GetDataElementCatalogue(ctx, &mdrv1.UrnRequest{Urn: bad})
			wantCode(t, err, codes.InvalidArgument)
		}
	})
}
