// Package probe is the container healthcheck every FRIS image runs: the
// runtime image has no shell and no curl, so each binary answers
// `<binary> probe URL` itself instead of carrying a probe program of its own
// (which would add megabytes to every image).
package probe

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"time"
)

// Timeout bounds one probe: a container runtime kills a hung healthcheck
// only after its own timeout, which compose files set a little above this.
const Timeout = 3 * time.Second

// Check asks url once and succeeds only on 200 OK. It never uses a proxy
// from the environment: the probe must reach the container's own port.
func Check(ctx context.Context, url string) error {
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	c := &http.Client{Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true}}
	res, err := c.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 1<<16))
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("%s answered %s", url, res.Status)
	}
	return nil
}
