package engine

import "testing"

func TestClassOf(t *testing.T) {
	for _, tc := range []struct {
		f    modelFailure
		want string
	}{
		{modelFailure{Status: 429, Code: "rate_limit_error", Retryable: true}, ClassQuota},
		{modelFailure{Status: 529, Code: "overloaded_error", Retryable: true}, ClassQuota},
		{modelFailure{Status: 429, Retryable: true}, ClassQuota},
		{modelFailure{Status: 403, Code: "insufficient_quota"}, ClassQuota},
		{modelFailure{Status: 500, Code: "api_error", Retryable: true}, ClassServer},
		{modelFailure{Status: 0, Code: "connection", Retryable: true}, ClassConnection},
		{modelFailure{Status: 400, Code: "invalid_request_error"}, ""},
		{modelFailure{MissingKey: "ANTHROPIC_API_KEY"}, ""},
	} {
		if got := classOf(&tc.f); got != tc.want {
			t.Errorf("classOf(%+v) = %q, want %q", tc.f, got, tc.want)
		}
	}
}

func TestRouteValidate(t *testing.T) {
	for _, tc := range []struct {
		r  *Route
		ok bool
	}{
		{nil, true},
		{&Route{Fallbacks: []string{"a"}, FailoverOn: []string{ClassQuota, ClassServer}, FailureBudget: 2}, true},
		{&Route{FailoverOn: []string{"bored"}}, false},
		{&Route{Fallbacks: []string{" "}}, false},
		{&Route{FailureBudget: -1}, false},
	} {
		if got := tc.r.validate() == ""; got != tc.ok {
			t.Errorf("validate(%+v) ok = %v, want %v", tc.r, got, tc.ok)
		}
	}
}
