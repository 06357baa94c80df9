package errinfo

import (
	"strconv"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// The password policy's refusals (InvalidArgument), one reason per rule,
// so a page says in its own language which rule a new password broke; the
// status message says it in English for the CLI.
const (
	// PasswordTooShort: fewer characters than the policy's least length,
	// which the detail's metadata names (PasswordMinLength).
	PasswordTooShort = "PASSWORD_TOO_SHORT"
	// PasswordCommon: one of the most common passwords.
	PasswordCommon = "PASSWORD_COMMON"
	// PasswordIsEmail: the account's email address or its local part.
	PasswordIsEmail = "PASSWORD_IS_EMAIL"
)

// minLengthKey is the ErrorInfo metadata key of PasswordTooShort's least
// length.
const minLengthKey = "min_length"

// PasswordRefusal is the policy's refusal for the given reason; minLength
// is the least length (for PasswordTooShort).
func PasswordRefusal(msg, reason string, minLength int) *status.Status {
	st := status.New(codes.InvalidArgument, msg)
	info := &errdetails.ErrorInfo{Domain: Domain, Reason: reason}
	if reason == PasswordTooShort {
		info.Metadata = map[string]string{minLengthKey: strconv.Itoa(minLength)}
	}
	if with, err := st.WithDetails(info); err == nil {
		return with
	}
	return st
}

// PasswordMinLength is the least length a PasswordTooShort refusal names,
// 0 when it names none.
func PasswordMinLength(st *status.Status) int {
	for _, d := range st.Details() {
		if ei, ok := d.(*errdetails.ErrorInfo); ok && ei.GetDomain() == Domain && ei.GetReason() == PasswordTooShort {
			n, _ := strconv.Atoi(ei.GetMetadata()[minLengthKey])
			return n
		}
	}
	return 0
}
