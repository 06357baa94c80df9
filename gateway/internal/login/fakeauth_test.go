package login

import (
	"context"
	"strings"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	authv1 "fris.dev/proto/auth/v1"
)

const registered = "https://client.example/cb"

// fakeAuth is the auth service as the login page uses it: client c1 with
// one registered redirect URI, user ada@example.org with password "right".
type fakeAuth struct {
	authv1.AuthServiceClient // other methods: not used by this package

	mu         sync.Mutex
	authorizes []*authv1.AuthorizeRequest
	logins     []*authv1.LoginRequest
	seconds    []*authv1.LoginSecondFactorRequest
	changes    []*authv1.LoginChangePasswordRequest
	redirect   string // what Authorize and Login return as redirect_uri
	authErr    error  // forced Authorize error
	loginErr   error  // forced Login error
}

func (f *fakeAuth) check(in *authv1.AuthorizeRequest) (*authv1.AuthorizeResponse, error) {
	if f.authErr != nil {
		return nil, f.authErr
	}
	if in.GetClientId() != "c1" {
		return nil, status.Error(codes.NotFound, "unknown client")
	}
	if u := in.GetRedirectUri(); u != "" && u != registered && !strings.HasPrefix(u, registered+"?") {
		return nil, status.Error(codes.InvalidArgument, "redirect_uri is not registered for this client")
	}
	if in.GetCodeChallengeMethod() == "plain" {
		return nil, status.Error(codes.InvalidArgument, "code_challenge_method plain is not supported")
	}
	r := f.redirect
	if r == "" {
		r = registered
		if in.GetRedirectUri() != "" {
			r = in.GetRedirectUri()
		}
	}
	return &authv1.AuthorizeResponse{ClientName: "Client <One>", RedirectUri: r}, nil
}

func (f *fakeAuth) Authorize(_ context.Context, in *authv1.AuthorizeRequest, _ ...grpc.CallOption) (*authv1.AuthorizeResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.authorizes = append(f.authorizes, proto.Clone(in).(*authv1.AuthorizeRequest))
	return f.check(in)
}

func (f *fakeAuth) Login(_ context.Context, in *authv1.LoginRequest, _ ...grpc.CallOption) (*authv1.LoginResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.logins = append(f.logins, proto.Clone(in).(*authv1.LoginRequest))
	if f.loginErr != nil {
		return nil, f.loginErr
	}
	res, err := f.check(in.GetRequest())
	if err != nil {
		return nil, err
	}
	if in.GetEmail() == "change@example.org" && in.GetPassword() == "right" {
		return &authv1.LoginResponse{RedirectUri: res.GetRedirectUri(), Pending: changeToken, ChangePassword: true}, nil
	}
	if in.GetEmail() == "verify@example.org" && in.GetPassword() == "right" {
		return &authv1.LoginResponse{RedirectUri: res.GetRedirectUri(), VerifyEmailSent: true}, nil
	}
	if in.GetEmail() == "two@example.org" && in.GetPassword() == "right" {
		return &authv1.LoginResponse{RedirectUri: res.GetRedirectUri(), Pending: pendingToken}, nil
	}
	if in.GetEmail() != "ada@example.org" || in.GetPassword() != "right" {
		return nil, status.Error(codes.Unauthenticated, "wrong email or password")
	}
	device := in.GetDevice()
	if device == "" {
		device = "DDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDD"
	}
	return &authv1.LoginResponse{Code: "the-code", RedirectUri: res.GetRedirectUri(), Device: device}, nil
}

// pendingToken is the fake's pending sign-in of two@example.org, whose
// second factor is "123456".
const pendingToken = "PPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPP"

func (f *fakeAuth) LoginSecondFactor(_ context.Context, in *authv1.LoginSecondFactorRequest, _ ...grpc.CallOption) (*authv1.LoginResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.seconds = append(f.seconds, proto.Clone(in).(*authv1.LoginSecondFactorRequest))
	res, err := f.check(in.GetRequest())
	if err != nil {
		return nil, err
	}
	if in.GetPending() != pendingToken {
		return nil, status.Error(codes.Unauthenticated, "the sign-in has expired: enter your password again")
	}
	if in.GetCode() != "123456" {
		return nil, status.Error(codes.Unauthenticated, "the code is wrong")
	}
	return &authv1.LoginResponse{Code: "the-code", RedirectUri: res.GetRedirectUri()}, nil
}

// changeToken is the fake's pending sign-in of change@example.org, which
// must choose a new password (anything but "short" and "right").
const changeToken = "CCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCC"

func (f *fakeAuth) LoginChangePassword(_ context.Context, in *authv1.LoginChangePasswordRequest, _ ...grpc.CallOption) (*authv1.LoginResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.changes = append(f.changes, proto.Clone(in).(*authv1.LoginChangePasswordRequest))
	res, err := f.check(in.GetRequest())
	if err != nil {
		return nil, err
	}
	switch {
	case in.GetPending() != changeToken:
		return nil, status.Error(codes.Unauthenticated, "the sign-in has expired: enter your password again")
	case in.GetNewPassword() == "short":
		return nil, status.Error(codes.InvalidArgument, "the password is too short")
	case in.GetNewPassword() == "right":
		return nil, status.Error(codes.InvalidArgument, "choose a password other than the current one")
	}
	return &authv1.LoginResponse{Code: "the-code", RedirectUri: res.GetRedirectUri()}, nil
}

func (f *fakeAuth) counts() (int, int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.authorizes), len(f.logins)
}

func (f *fakeAuth) GetPasswordPolicy(context.Context, *authv1.GetPasswordPolicyRequest, ...grpc.CallOption) (*authv1.PasswordPolicy, error) {
	return &authv1.PasswordPolicy{MinLength: 12, RefuseCommon: true}, nil
}
