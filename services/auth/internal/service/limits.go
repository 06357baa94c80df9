package service

import (
	"fris.dev/pkg/inputlimit"
	authv1 "fris.dev/proto/auth/v1"
)

// The size limits of every field a client sends (docs/security.md, "Input
// limits"), checked before anything is looked up or stored.

func tokenLimits(r *authv1.TokenRequest) error {
	return inputlimit.Check(
		inputlimit.F("grant_type", r.GetGrantType(), inputlimit.GrantType),
		inputlimit.F("client_id", r.GetClientId(), inputlimit.ClientID),
		inputlimit.F("client_secret", r.GetClientSecret(), inputlimit.Secret),
		inputlimit.F("code", r.GetCode(), inputlimit.Code),
		inputlimit.F("refresh_token", r.GetRefreshToken(), inputlimit.Token),
		inputlimit.F("signature", r.GetSignature(), inputlimit.Signature),
		inputlimit.F("code_verifier", r.GetCodeVerifier(), inputlimit.Param),
		inputlimit.F("redirect_uri", r.GetRedirectUri(), inputlimit.URL),
	)
}

func authorizeLimits(r *authv1.AuthorizeRequest) error {
	return inputlimit.Check(
		inputlimit.F("client_id", r.GetClientId(), inputlimit.ClientID),
		inputlimit.F("redirect_uri", r.GetRedirectUri(), inputlimit.URL),
		inputlimit.F("code_challenge", r.GetCodeChallenge(), inputlimit.Param),
		inputlimit.F("code_challenge_method", r.GetCodeChallengeMethod(), inputlimit.Param),
		inputlimit.F("scope", r.GetScope(), inputlimit.Scope),
		inputlimit.F("nonce", r.GetNonce(), inputlimit.Param),
	)
}

func registerLimits(r *authv1.RegisterRequest) error {
	return inputlimit.Check(
		inputlimit.F("email", r.GetEmail(), inputlimit.Email),
		inputlimit.F("name", r.GetName(), inputlimit.Name),
		inputlimit.F("description", r.GetDescription(), inputlimit.Description),
		inputlimit.F("base64EncodedPublicKey", r.GetBase64EncodedPublicKey(), inputlimit.PublicKey),
	)
}

func createClientLimits(r *authv1.CreateClientRequest) error {
	return inputlimit.Check(
		inputlimit.F("client_id", r.GetClientId(), inputlimit.ClientID),
		inputlimit.F("name", r.GetName(), inputlimit.Name),
		inputlimit.F("description", r.GetDescription(), inputlimit.Description),
		inputlimit.F("redirect_url", r.GetRedirectUrl(), inputlimit.RedirectURLs),
		inputlimit.F("secret", r.GetSecret(), inputlimit.Secret),
		inputlimit.F("type", r.GetType(), inputlimit.Param),
		inputlimit.F("alg", r.GetAlg(), inputlimit.Param),
	)
}

func createUserLimits(r *authv1.CreateUserRequest) error {
	if err := inputlimit.Check(
		inputlimit.F("email", r.GetEmail(), inputlimit.Email),
		inputlimit.F("real_name", r.GetRealName(), inputlimit.Name),
		inputlimit.F("password", r.GetPassword(), inputlimit.Password),
		inputlimit.F("contact_information", r.GetContactInformation(), inputlimit.Description),
		inputlimit.F("locality.id", r.GetLocality().GetId(), inputlimit.ID),
		inputlimit.F("locality.name", r.GetLocality().GetName(), inputlimit.Name),
		inputlimit.F("locality.description", r.GetLocality().GetDescription(), inputlimit.Description),
	); err != nil {
		return err
	}
	return inputlimit.Each("scope", r.GetScopes(), inputlimit.Scope)
}
