// Package service implements the registry's gRPC APIs over the store and the
// in-memory read index.
package service

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/types/known/timestamppb"

	"fris.dev/pkg/identity"
	"fris.dev/pkg/inputlimit"
	"fris.dev/pkg/rpcerr"
	mdrv1 "fris.dev/proto/mdr/v1"
	"fris.dev/services/mdr/internal/registry"
	"fris.dev/services/mdr/internal/storage"
)

// Service owns the read index. The store is the truth; the index is rebuilt
// when the store's generation moves (an import here or on another replica).
type Service struct {
	store   storage.Store
	log     *slog.Logger
	refresh time.Duration

	ix        atomic.Pointer[registry.Index]
	checked   atomic.Int64 // unix nanos of the last generation check
	reloading sync.Mutex
}

// New loads the index from the store. refresh is how stale the index may get
// before a request checks the store's generation again.
func New(ctx context.Context, store storage.Store, log *slog.Logger, refresh time.Duration) (*Service, error) {
	s := &Service{store: store, log: log, refresh: refresh}
	if err := s.reload(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *Service) reload(ctx context.Context) error {
	gen, defs, err := s.store.Load(ctx)
	if err != nil {
		return fmt.Errorf("load registry: %w", err)
	}
	ix, err := registry.Build(gen, defs)
	if err != nil {
		return fmt.Errorf("index registry (generation %d): %w", gen, err)
	}
	s.ix.Store(ix)
	s.checked.Store(time.Now().UnixNano())
	s.log.Info("registry index built", "generation", gen, "namespaces", len(defs))
	return nil
}

// index returns the current index, refreshing it first when it may be stale.
// Only one request refreshes; the others keep answering from the old index.
func (s *Service) index(ctx context.Context) *registry.Index {
	ix := s.ix.Load()
	if time.Now().UnixNano()-s.checked.Load() < int64(s.refresh) || !s.reloading.TryLock() {
		return ix
	}
	defer s.reloading.Unlock()
	s.checked.Store(time.Now().UnixNano())
	gen, err := s.store.Generation(ctx)
	if err != nil {
		s.log.WarnContext(ctx, "registry generation check failed; serving the current index", "err", err)
		return ix
	}
	if gen != ix.Generation {
		if err := s.reload(ctx); err != nil {
			s.log.ErrorContext(ctx, "registry reload failed; serving the current index", "err", err)
		}
	}
	return s.ix.Load()
}

// Ready reports whether the store answers.
func (s *Service) Ready(ctx context.Context) error { return s.store.Ping(ctx) }

func (s *Service) err(ctx context.Context, err error) error { return rpcerr.From(ctx, s.log, err) }

// viewer sees public namespaces and the private ones its token's scopes
// name, as `mdr:<namespace>` or `mdr:*`.
type viewer struct{ id identity.Identity }

func (v viewer) CanSee(ns string) bool {
	return !v.id.Anonymous() && (v.id.HasScope("mdr:"+ns) || v.id.HasScope("mdr:*"))
}

func caller(ctx context.Context) (registry.Viewer, registry.LangOrder) {
	md, _ := metadata.FromIncomingContext(ctx)
	var lo registry.LangOrder
	if v := md.Get("accept-language"); len(v) > 0 {
		lo = registry.ParseAcceptLanguage(v[0])
	}
	return viewer{identity.FromIncoming(ctx)}, lo
}

func page(offset, limit int32) registry.Page {
	return registry.Page{Offset: int(offset), Limit: int(limit)}
}

// Public implements the public registry API.
type Public struct {
	mdrv1.UnimplementedMdrServiceServer
	*Service
}

func (p Public) ListNamespaces(ctx context.Context, _ *mdrv1.ListNamespacesRequest) (*mdrv1.ListNamespacesResponse, error) {
	v, lo := caller(ctx)
	return &mdrv1.ListNamespacesResponse{Namespaces: p.index(ctx).Namespaces(v, lo)}, nil
}

func (p Public) ListNamespaceMembers(ctx context.Context, r *mdrv1.NamespaceMembersRequest) (*mdrv1.MemberList, error) {
	if err := inputlimit.Check(inputlimit.F("namespace", r.GetNamespace(), inputlimit.ID)); err != nil {
		return nil, p.err(ctx, err)
	}
	v, lo := caller(ctx)
	out, err := p.index(ctx).NamespaceMembers(v, r.GetNamespace(), page(r.GetOffset(), r.GetLimit()), lo)
	return out, p.err(ctx, err)
}

func (p Public) SearchNamespace(ctx context.Context, r *mdrv1.SearchRequest) (*mdrv1.MemberList, error) {
	if err := inputlimit.Check(inputlimit.F("namespace", r.GetNamespace(), inputlimit.ID)); err != nil {
		return nil, p.err(ctx, err)
	}
	v, lo := caller(ctx)
	out, err := p.index(ctx).Search(v, r.GetNamespace(), r.GetQuery(), page(r.GetOffset(), r.GetLimit()), lo)
	return out, p.err(ctx, err)
}

func (p Public) GetDataElement(ctx context.Context, r *mdrv1.UrnRequest) (*mdrv1.DataElement, error) {
	if err := inputlimit.Check(inputlimit.F("urn", r.GetUrn(), inputlimit.ID)); err != nil {
		return nil, p.err(ctx, err)
	}
	v, lo := caller(ctx)
	out, err := p.index(ctx).DataElement(v, r.GetUrn(), lo)
	return out, p.err(ctx, err)
}

func (p Public) labels(ctx context.Context, urn, kind string) (*mdrv1.Labels, error) {
	v, lo := caller(ctx)
	ds, err := p.index(ctx).Labels(v, urn, kind, lo)
	if err != nil {
		return nil, p.err(ctx, err)
	}
	return &mdrv1.Labels{Designations: ds}, nil
}

func (p Public) GetDataElementLabels(ctx context.Context, r *mdrv1.UrnRequest) (*mdrv1.Labels, error) {
	if err := inputlimit.Check(inputlimit.F("urn", r.GetUrn(), inputlimit.ID)); err != nil {
		return nil, p.err(ctx, err)
	}
	return p.labels(ctx, r.GetUrn(), registry.KindDataElement)
}

func (p Public) GetDataElementGroupLabels(ctx context.Context, r *mdrv1.UrnRequest) (*mdrv1.Labels, error) {
	if err := inputlimit.Check(inputlimit.F("urn", r.GetUrn(), inputlimit.ID)); err != nil {
		return nil, p.err(ctx, err)
	}
	return p.labels(ctx, r.GetUrn(), registry.KindGroup)
}

func (p Public) GetRecordLabels(ctx context.Context, r *mdrv1.UrnRequest) (*mdrv1.Labels, error) {
	if err := inputlimit.Check(inputlimit.F("urn", r.GetUrn(), inputlimit.ID)); err != nil {
		return nil, p.err(ctx, err)
	}
	return p.labels(ctx, r.GetUrn(), registry.KindRecord)
}

func (p Public) GetDataElementValidations(ctx context.Context, r *mdrv1.UrnRequest) (*mdrv1.Validation, error) {
	if err := inputlimit.Check(inputlimit.F("urn", r.GetUrn(), inputlimit.ID)); err != nil {
		return nil, p.err(ctx, err)
	}
	v, lo := caller(ctx)
	out, err := p.index(ctx).Validation(v, r.GetUrn(), lo)
	return out, p.err(ctx, err)
}

func (p Public) GetDataElementUiModel(ctx context.Context, r *mdrv1.UrnRequest) (*mdrv1.UiModel, error) {
	if err := inputlimit.Check(inputlimit.F("urn", r.GetUrn(), inputlimit.ID)); err != nil {
		return nil, p.err(ctx, err)
	}
	v, lo := caller(ctx)
	out, err := p.index(ctx).UiModel(v, r.GetUrn(), lo)
	return out, p.err(ctx, err)
}

func (p Public) GetDataElementSlots(ctx context.Context, r *mdrv1.UrnRequest) (*mdrv1.Slots, error) {
	if err := inputlimit.Check(inputlimit.F("urn", r.GetUrn(), inputlimit.ID)); err != nil {
		return nil, p.err(ctx, err)
	}
	v, _ := caller(ctx)
	out, err := p.index(ctx).Slots(v, r.GetUrn())
	if err != nil {
		return nil, p.err(ctx, err)
	}
	return &mdrv1.Slots{Slots: out}, nil
}

func (p Public) GetDataElementGroupMembers(ctx context.Context, r *mdrv1.MembersRequest) (*mdrv1.MemberList, error) {
	if err := inputlimit.Check(inputlimit.F("urn", r.GetUrn(), inputlimit.ID)); err != nil {
		return nil, p.err(ctx, err)
	}
	v, lo := caller(ctx)
	out, err := p.index(ctx).GroupMembers(v, r.GetUrn(), page(r.GetOffset(), r.GetLimit()), lo)
	return out, p.err(ctx, err)
}

func (p Public) GetRecordMembers(ctx context.Context, r *mdrv1.MembersRequest) (*mdrv1.RecordMembers, error) {
	if err := inputlimit.Check(inputlimit.F("urn", r.GetUrn(), inputlimit.ID)); err != nil {
		return nil, p.err(ctx, err)
	}
	v, lo := caller(ctx)
	out, err := p.index(ctx).RecordMembers(v, r.GetUrn(), page(r.GetOffset(), r.GetLimit()), lo)
	if err != nil {
		return nil, p.err(ctx, err)
	}
	return &mdrv1.RecordMembers{Members: out}, nil
}

// maxChecks bounds one CheckValues call so a caller cannot pin the CPU.
const maxChecks = 10000

func (p Public) CheckValues(ctx context.Context, r *mdrv1.CheckValuesRequest) (*mdrv1.CheckValuesResponse, error) {
	if len(r.GetChecks()) > maxChecks {
		return nil, p.err(ctx, fmt.Errorf("%w: at most %d checks per call", rpcerr.ErrInvalid, maxChecks))
	}
	ix := p.index(ctx)
	out := &mdrv1.CheckValuesResponse{Verdicts: make([]*mdrv1.ValueVerdict, len(r.GetChecks()))}
	for i, c := range r.GetChecks() {
		vd := &mdrv1.ValueVerdict{Urn: c.GetUrn(), Value: c.GetValue(), Valid: true}
		if _, err := ix.CheckValue(c.GetUrn(), c.GetValue()); err != nil {
			vd.Valid, vd.Reason = false, err.Error()
		}
		out.Verdicts[i] = vd
	}
	return out, nil
}

// Admin implements the operator API.
type Admin struct {
	mdrv1.UnimplementedMdrAdminServer
	*Service
}

func (a Admin) Import(ctx context.Context, r *mdrv1.ImportRequest) (*mdrv1.ImportResponse, error) {
	reg := r.GetRegistry()
	if len(reg.GetNamespaces()) == 0 {
		return nil, a.err(ctx, fmt.Errorf("%w: the registry holds no namespace", rpcerr.ErrInvalid))
	}
	elements := 0
	for _, ns := range reg.GetNamespaces() {
		elements += len(ns.GetElements())
	}
	gen, err := a.store.Import(ctx, reg, func(all []*mdrv1.NamespaceDef) error {
		_, err := registry.Build(0, all)
		return err
	})
	if err != nil {
		return nil, a.err(ctx, err)
	}
	if err := a.reload(ctx); err != nil {
		return nil, a.err(ctx, err)
	}
	a.log.InfoContext(ctx, "registry imported", "namespaces", len(reg.GetNamespaces()), "elements", elements, "generation", gen)
	return &mdrv1.ImportResponse{Namespaces: int32(len(reg.GetNamespaces())), Elements: int32(elements), Generation: gen}, nil
}

func (a Admin) ListNamespaces(ctx context.Context, _ *mdrv1.AdminListNamespacesRequest) (*mdrv1.AdminListNamespacesResponse, error) {
	ix := a.index(ctx)
	out := &mdrv1.AdminListNamespacesResponse{Generation: ix.Generation}
	for _, n := range ix.Infos() {
		out.Namespaces = append(out.Namespaces, &mdrv1.NamespaceInfo{Name: n.Name, Private: n.Private, Elements: int32(n.Elements), Members: int32(n.Members)})
	}
	changed, err := a.store.LastChange(ctx)
	if err != nil {
		return nil, a.err(ctx, err)
	}
	if changed > 0 {
		out.LastChange = timestamppb.New(time.Unix(0, changed))
	}
	return out, nil
}

func (a Admin) DeleteNamespace(ctx context.Context, r *mdrv1.DeleteNamespaceRequest) (*mdrv1.DeleteNamespaceResponse, error) {
	// Deleting must not leave members elsewhere pointing into the namespace.
	if _, err := a.store.DeleteNamespace(ctx, r.GetName(), func(rest []*mdrv1.NamespaceDef) error {
		_, err := registry.Build(0, rest)
		return err
	}); err != nil {
		return nil, a.err(ctx, err)
	}
	if err := a.reload(ctx); err != nil {
		return nil, a.err(ctx, err)
	}
	return &mdrv1.DeleteNamespaceResponse{}, nil
}
