package probe

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status int
		ok     bool
	}{
		{"ready", http.StatusOK, true},
		{"not ready", http.StatusServiceUnavailable, false},
		{"no content is not ready", http.StatusNoContent, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.WriteHeader(tc.status)
			}))
			defer srv.Close()
			err := Check(context.Background(), srv.URL+"/readyz")
			if (err == nil) != tc.ok {
				t.Fatalf("Check on %d: err = %v, want ok=%v", tc.status, err, tc.ok)
			}
		})
	}
}

func TestCheckUnreachable(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	if err := Check(context.Background(), url); err == nil {
		t.Fatal("Check on a closed port succeeded")
	}
	if err := Check(context.Background(), "::not a url"); err == nil {
		t.Fatal("Check on a malformed URL succeeded")
	}
}
