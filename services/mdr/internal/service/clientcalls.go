package service

import (
	"context"

	"fris.dev/pkg/inputlimit"
	mdrv1 "fris.dev/proto/mdr/v1"
	"fris.dev/services/mdr/internal/registry"
)

// The methods in this file serve the calls common-mdrclient makes beyond
// the spec's paths (docs/interface.md, "Registry client extras").

func (p Public) GetDataElementGroupSlots(ctx context.Context, r *mdrv1.UrnRequest) (*mdrv1.Slots, error) {
	if err := inputlimit.Check(inputlimit.F("urn", r.GetUrn(), inputlimit.ID)); err != nil {
		return nil, p.err(ctx, err)
	}
	v, _ := caller(ctx)
	out, err := p.index(ctx).GroupSlots(v, r.GetUrn())
	if err != nil {
		return nil, p.err(ctx, err)
	}
	return &mdrv1.Slots{Slots: out}, nil
}

func (p Public) GetUserMembers(ctx context.Context, r *mdrv1.UserMembersRequest) (*mdrv1.ResultList, error) {
	v, lo := caller(ctx)
	out, err := p.index(ctx).UserMembers(v, page(r.GetOffset(), r.GetLimit()), lo)
	return out, p.err(ctx, err)
}

func (p Public) SearchLocal(ctx context.Context, r *mdrv1.LocalSearchRequest) (*mdrv1.ResultList, error) {
	if err := inputlimit.Check(
		inputlimit.F("query", r.GetQuery(), inputlimit.Param),
		inputlimit.F("status", r.GetStatus(), inputlimit.Param),
	); err != nil {
		return nil, p.err(ctx, err)
	}
	if err := inputlimit.Each("type", r.GetType(), inputlimit.Param); err != nil {
		return nil, p.err(ctx, err)
	}
	status, err := registry.ParseStatus(r.GetStatus())
	if err != nil {
		return nil, p.err(ctx, err)
	}
	kinds, err := registry.ParseKinds(r.GetType())
	if err != nil {
		return nil, p.err(ctx, err)
	}
	v, lo := caller(ctx)
	out, err := p.index(ctx).SearchLocal(v, r.GetQuery(), status, kinds, page(r.GetOffset(), r.GetLimit()), lo)
	return out, p.err(ctx, err)
}

func (p Public) GetRepresentations(ctx context.Context, r *mdrv1.RepresentationsRequest) (*mdrv1.ResultList, error) {
	if err := inputlimit.Check(inputlimit.F("urn", r.GetUrn(), inputlimit.ID)); err != nil {
		return nil, p.err(ctx, err)
	}
	v, lo := caller(ctx)
	out, err := p.index(ctx).Representations(v, r.GetUrn(), lo)
	return out, p.err(ctx, err)
}

func (p Public) GetDataElementCatalogue(ctx context.Context, r *mdrv1.UrnRequest) (*mdrv1.Catalogue, error) {
	if err := inputlimit.Check(inputlimit.F("urn", r.GetUrn(), inputlimit.ID)); err != nil {
		return nil, p.err(ctx, err)
	}
	v, lo := caller(ctx)
	out, err := p.index(ctx).Catalogue(v, r.GetUrn(), lo)
	return out, p.err(ctx, err)
}

func (p Public) GetCatalogueCodes(ctx context.Context, r *mdrv1.UrnRequest) (*mdrv1.Catalogue, error) {
	if err := inputlimit.Check(inputlimit.F("urn", r.GetUrn(), inputlimit.ID)); err != nil {
		return nil, p.err(ctx, err)
	}
	v, lo := caller(ctx)
	out, err := p.index(ctx).CatalogueCodes(v, r.GetUrn(), lo)
	return out, p.err(ctx, err)
}
