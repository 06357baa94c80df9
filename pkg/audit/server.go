package audit

import (
	"context"
	"errors"
	"log/slog"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/timestamppb"

	"fris.dev/pkg/rpcerr"
	auditv1 "fris.dev/proto/audit/v1"
)

// OperatorMethods are the AuditAdmin methods a service admits the gateway
// to for an operator's token (server.Service.Operator): the Explorer's
// audit and settings views.
var OperatorMethods = []string{auditv1.AuditAdmin_ListEvents_FullMethodName, auditv1.AuditAdmin_GetSettings_FullMethodName}

// Register adds the AuditAdmin service to s: the named service's stored
// events (nil: none kept) and its settings. Both are reads, so they are
// not audited themselves. The access table admits the operator's
// certificate to a service whose name ends in Admin (pkg/server), the
// gateway only to OperatorMethods for an operator.
func Register(s grpc.ServiceRegistrar, name string, events *Store, settings []Setting, log *slog.Logger) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	auditv1.RegisterAuditAdminServer(s, &server{name: name, events: events, settings: settings, log: log})
}

type server struct {
	auditv1.UnimplementedAuditAdminServer
	name     string
	events   *Store
	settings []Setting
	log      *slog.Logger
}

// maxFilter bounds the filter's strings: actors and actions are short.
const maxFilter = 256

func (s *server) ListEvents(ctx context.Context, r *auditv1.ListEventsRequest) (*auditv1.ListEventsResponse, error) {
	if len(r.GetActor()) > maxFilter || len(r.GetActionPrefix()) > maxFilter || len(r.GetPageToken()) > 64 {
		return nil, rpcerr.From(ctx, s.log, rpcerr.New(rpcerr.ErrInvalid, "actor, action_prefix and page_token are at most %d, %d and 64 bytes", maxFilter, maxFilter))
	}
	f := Filter{Actor: r.GetActor(), ActionPrefix: r.GetActionPrefix(), PageSize: int(r.GetPageSize()), After: r.GetPageToken()}
	switch r.GetOutcome() {
	case auditv1.Outcome_OUTCOME_OK:
		f.Outcome = OutcomeOK
	case auditv1.Outcome_OUTCOME_DENIED:
		f.Outcome = OutcomeDenied
	case auditv1.Outcome_OUTCOME_FAILED:
		f.Outcome = OutcomeFailed
	}
	f.Class = classNames[r.GetClass()]
	if r.GetSince() != nil {
		f.Since = r.GetSince().AsTime()
	}
	if r.GetUntil() != nil {
		f.Until = r.GetUntil().AsTime()
	}
	res := &auditv1.ListEventsResponse{}
	if s.events == nil {
		return res, nil
	}
	events, next, err := s.events.List(ctx, f)
	if errors.Is(err, ErrBadFilter) {
		return nil, rpcerr.From(ctx, s.log, rpcerr.New(rpcerr.ErrInvalid, "%s", err.Error()))
	}
	if err != nil {
		return nil, rpcerr.From(ctx, s.log, err)
	}
	res.NextPageToken = next
	for _, e := range events {
		res.Events = append(res.Events, s.proto(e))
	}
	return res, nil
}

// classNames are the classes as the API names them.
var classNames = map[auditv1.Class]string{
	auditv1.Class_CLASS_ADMIN: ClassAdmin, auditv1.Class_CLASS_SIGNED_IN: ClassSignedIn, auditv1.Class_CLASS_ANONYMOUS: ClassAnonymous,
}

func (s *server) proto(e Stored) *auditv1.AuditEvent {
	p := &auditv1.AuditEvent{
		Id: e.ID, Time: timestamppb.New(e.Time), Service: s.name, Action: e.Action, Actor: e.Actor, Client: e.Client,
		Target: e.Target, Reason: e.Reason, ClientAddr: e.ClientAddr, RequestId: e.RequestID, Count: int64(max(e.Count, 1)),
	}
	for c, name := range classNames {
		if name == e.Class && name != "" {
			p.Class = c
		}
	}
	if !e.Last.IsZero() {
		p.Last = timestamppb.New(e.Last)
	}
	switch e.Outcome {
	case OutcomeOK:
		p.Outcome = auditv1.Outcome_OUTCOME_OK
	case OutcomeDenied:
		p.Outcome = auditv1.Outcome_OUTCOME_DENIED
	default:
		p.Outcome = auditv1.Outcome_OUTCOME_FAILED
	}
	for _, a := range e.Attrs {
		p.Attrs = append(p.Attrs, &auditv1.Attr{Key: a.K, Value: a.V})
	}
	return p
}

func (s *server) GetSettings(context.Context, *auditv1.GetSettingsRequest) (*auditv1.GetSettingsResponse, error) {
	res := &auditv1.GetSettingsResponse{Service: s.name}
	for _, st := range s.settings {
		res.Settings = append(res.Settings, &auditv1.Setting{Name: st.Name, Value: st.Value, Description: st.Description})
	}
	return res, nil
}
