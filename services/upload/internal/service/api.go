package service

import (
	"context"
	"strconv"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/types/known/timestamppb"

	uploadv1 "fris.dev/proto/upload/v1"
	"fris.dev/services/upload/internal/contenttype"
	"fris.dev/services/upload/internal/stats"
	"fris.dev/services/upload/internal/storage"
)

const unavailable = codes.Unavailable

func teiler(t *uploadv1.Teiler) storage.Teiler {
	return storage.Teiler{SiteID: t.GetSiteId(), TeilerID: t.GetTeilerId()}
}

func pbTeiler(t storage.Teiler) *uploadv1.Teiler {
	return &uploadv1.Teiler{SiteId: t.SiteID, TeilerId: t.TeilerID}
}

func pbProblems(ps []Problem) []*uploadv1.ValueProblem {
	out := make([]*uploadv1.ValueProblem, len(ps))
	for i, p := range ps {
		out[i] = &uploadv1.ValueProblem{Where: p.Where, MdrKey: p.MdrKey, Value: p.Text, Reason: p.Reason}
	}
	return out
}

// Public is the sites' API behind /dktk.
type Public struct {
	uploadv1.UnimplementedUploadServiceServer
	*Service
}

func (p Public) PutPatient(ctx context.Context, r *uploadv1.PutPatientRequest) (*uploadv1.PutPatientResponse, error) {
	out, problems, err := p.Service.PutPatient(ctx, teiler(r.GetTeiler()), r.GetPatientId(), r.GetDocument(), r.GetContentType())
	if err != nil {
		return nil, p.err(ctx, err)
	}
	res := &uploadv1.PutPatientResponse{Problems: pbProblems(problems)}
	switch out {
	case Created:
		res.Outcome = uploadv1.PutPatientResponse_CREATED
	case Replaced:
		res.Outcome = uploadv1.PutPatientResponse_REPLACED
	case Rejected:
		res.Outcome = uploadv1.PutPatientResponse_REJECTED
	}
	return res, nil
}

func (p Public) DeletePatient(ctx context.Context, r *uploadv1.DeletePatientRequest) (*uploadv1.DeletePatientResponse, error) {
	if err := p.Service.DeletePatient(ctx, teiler(r.GetTeiler()), r.GetPatientId()); err != nil {
		return nil, p.err(ctx, err)
	}
	return &uploadv1.DeletePatientResponse{}, nil
}

func (p Public) DeletePatientsByPrefix(ctx context.Context, r *uploadv1.DeletePatientsByPrefixRequest) (*uploadv1.DeletePatientsByPrefixResponse, error) {
	n, err := p.DeleteByPrefix(ctx, teiler(r.GetTeiler()), r.GetPrefix())
	if err != nil {
		return nil, p.err(ctx, err)
	}
	return &uploadv1.DeletePatientsByPrefixResponse{Deleted: int32(n)}, nil
}

func (p Public) GetUploadStats(ctx context.Context, r *uploadv1.GetUploadStatsRequest) (*uploadv1.GetUploadStatsResponse, error) {
	at, err := p.LastUpload(ctx, teiler(r.GetTeiler()))
	if err != nil {
		return nil, p.err(ctx, err)
	}
	doc, err := stats.Render(at)
	if err != nil {
		return nil, p.err(ctx, err)
	}
	return &uploadv1.GetUploadStatsResponse{Document: doc, ContentType: stats.ContentType}, nil
}

func (p Public) PutUploadStats(ctx context.Context, r *uploadv1.PutUploadStatsRequest) (*uploadv1.PutUploadStatsResponse, error) {
	at, fromDoc, err := p.SetLastUpload(ctx, teiler(r.GetTeiler()), r.GetDocument(), r.GetContentType())
	if err != nil {
		return nil, p.err(ctx, err)
	}
	return &uploadv1.PutUploadStatsResponse{Stored: timestamppb.New(at), FromDocument: fromDoc}, nil
}

// Admin is the operators' API.
type Admin struct {
	uploadv1.UnimplementedUploadAdminServer
	*Service
}

func pbCredential(c storage.Credential) *uploadv1.Credential {
	return &uploadv1.Credential{Username: c.Username, Teiler: pbTeiler(c.Teiler), Disabled: c.Disabled, Created: timestamppb.New(time.Unix(c.Created, 0))}
}

func (a Admin) CreateCredential(ctx context.Context, r *uploadv1.CreateCredentialRequest) (*uploadv1.CreateCredentialResponse, error) {
	pass, existed, err := a.Service.CreateCredential(ctx, r.GetUsername(), teiler(r.GetTeiler()), r.GetPassword(), r.GetIfMissing())
	if err != nil {
		return nil, a.err(ctx, err)
	}
	return &uploadv1.CreateCredentialResponse{Password: pass, Existed: existed}, nil
}

func (a Admin) SetCredentialPassword(ctx context.Context, r *uploadv1.SetCredentialPasswordRequest) (*uploadv1.SetCredentialPasswordResponse, error) {
	pass, err := a.SetPassword(ctx, r.GetUsername(), r.GetPassword())
	if err != nil {
		return nil, a.err(ctx, err)
	}
	return &uploadv1.SetCredentialPasswordResponse{Password: pass}, nil
}

func (a Admin) SetCredentialDisabled(ctx context.Context, r *uploadv1.SetCredentialDisabledRequest) (*uploadv1.SetCredentialDisabledResponse, error) {
	if err := a.SetDisabled(ctx, r.GetUsername(), r.GetDisabled()); err != nil {
		return nil, a.err(ctx, err)
	}
	return &uploadv1.SetCredentialDisabledResponse{}, nil
}

func (a Admin) ListCredentials(ctx context.Context, _ *uploadv1.ListCredentialsRequest) (*uploadv1.ListCredentialsResponse, error) {
	cs, err := a.Credentials(ctx)
	if err != nil {
		return nil, a.err(ctx, err)
	}
	res := &uploadv1.ListCredentialsResponse{}
	for _, c := range cs {
		res.Credentials = append(res.Credentials, pbCredential(c))
	}
	return res, nil
}

func pbSummary(s storage.Summary) *uploadv1.PatientSummary {
	return &uploadv1.PatientSummary{
		PatientId: s.PatientID, Stored: timestamppb.New(time.Unix(0, s.Stored)),
		SizeBytes: int32(s.Size), Cases: int32(s.Cases), Samples: int32(s.Samples), Attributes: int32(s.Attributes),
		Containers: int32(s.Containers), Refs: int32(s.Refs),
	}
}

// maxPage bounds one ListPatients answer.
const maxPage = 1000

func (a Admin) ListPatients(ctx context.Context, r *uploadv1.ListPatientsRequest) (*uploadv1.ListPatientsResponse, error) {
	size := int(r.GetPageSize())
	if size <= 0 || size > maxPage {
		size = maxPage
	}
	// The page token is the last id of the previous page, quoted so an
	// empty id cannot be confused with "no token".
	after := ""
	if tok := r.GetPageToken(); tok != "" {
		var err error
		if after, err = strconv.Unquote(tok); err != nil {
			return nil, a.err(ctx, invalid("bad page_token"))
		}
	}
	list, err := a.Patients(ctx, teiler(r.GetTeiler()), r.GetPrefix(), after, size+1)
	if err != nil {
		return nil, a.err(ctx, err)
	}
	res := &uploadv1.ListPatientsResponse{}
	if len(list) > size {
		list = list[:size]
		res.NextPageToken = strconv.Quote(list[size-1].PatientID)
	}
	for _, s := range list {
		res.Patients = append(res.Patients, pbSummary(s))
	}
	return res, nil
}

func (a Admin) CountPatients(ctx context.Context, r *uploadv1.CountPatientsRequest) (*uploadv1.CountPatientsResponse, error) {
	n, err := a.Count(ctx, teiler(r.GetTeiler()))
	if err != nil {
		return nil, a.err(ctx, err)
	}
	return &uploadv1.CountPatientsResponse{Count: int32(n)}, nil
}

func (a Admin) ListTeilers(ctx context.Context, r *uploadv1.ListTeilersRequest) (*uploadv1.ListTeilersResponse, error) {
	ts, err := a.Teilers(ctx, r.GetNamesOnly())
	if err != nil {
		return nil, a.err(ctx, err)
	}
	res := &uploadv1.ListTeilersResponse{}
	for _, t := range ts {
		st := &uploadv1.TeilerStatus{Teiler: pbTeiler(t.Teiler), Patients: int32(t.Patients),
			Credentials: int32(t.Credentials), Disabled: int32(t.Disabled)}
		if !t.LastUpload.IsZero() {
			st.LastUpload = timestamppb.New(t.LastUpload)
		}
		if !t.LastStored.IsZero() {
			st.LastStored = timestamppb.New(t.LastStored)
		}
		res.Teilers = append(res.Teilers, st)
	}
	return res, nil
}

func (a Admin) GetPatient(ctx context.Context, r *uploadv1.GetPatientRequest) (*uploadv1.GetPatientResponse, error) {
	sum, doc, err := a.Patient(ctx, teiler(r.GetTeiler()), r.GetPatientId())
	if err != nil {
		return nil, a.err(ctx, err)
	}
	return &uploadv1.GetPatientResponse{Summary: pbSummary(sum), Document: doc}, nil
}

func (p Public) CheckCredentials(ctx context.Context, r *uploadv1.CheckCredentialsRequest) (*uploadv1.CheckCredentialsResponse, error) {
	var body contenttype.Body
	switch r.GetBody() {
	case uploadv1.CheckCredentialsRequest_PATIENT:
		body = contenttype.Patient
	case uploadv1.CheckCredentialsRequest_UPLOAD_STATS:
		body = contenttype.Stats
	}
	if err := p.Service.CheckCredentials(ctx, teiler(r.GetTeiler()), r.GetContentType(), body); err != nil {
		return nil, p.err(ctx, err)
	}
	return &uploadv1.CheckCredentialsResponse{}, nil
}
