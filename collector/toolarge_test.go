// SPDX-License-Identifier: Apache-2.0

package collector_test

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/global-stability/global_stability_exporter/client"
	"github.com/global-stability/global_stability_exporter/endpoint"
	"github.com/global-stability/global_stability_exporter/simulator"
)

// TestAKnownTooLargeBodyFailsAtOnce: a Content-Length over an endpoint's
// limit fails that endpoint as the headers arrive, with the hint naming the
// limit's flag, whatever the API sends after them: here a byte, then
// nothing until the exporter hangs up. On each endpoint, so on both limits.
// In a bubble, where waiting for the body would take the scrape's deadline.
func TestAKnownTooLargeBodyFailsAtOnce(t *testing.T) {
	flag := map[client.Limit]string{client.DocumentLimit: "--api.max-document-bytes", client.PageLimit: "--api.max-response-bytes"}
	size := map[client.Limit]int{client.DocumentLimit: client.DefaultMaxDocumentBytes, client.PageLimit: client.DefaultMaxResponseBytes}
	for _, e := range endpoint.All() {
		t.Run(e.Label, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				sim := simulator.New(simulator.Config{Key: testKey})
				upstream := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if r.URL.Path != "/v1/"+e.Label {
						sim.ServeHTTP(w, r)
						return
					}
					w.Header().Set("Content-Type", "application/json")
					w.Header().Set("Content-Length", strconv.Itoa(size[e.Limit]+1))
					_, _ = w.Write([]byte("{"))
					w.(http.Flusher).Flush()
					<-r.Context().Done() // the rest never comes
				})
				env := newBubbleEnv(t, upstream)
				start := time.Now()
				s := env.scrape(t, context.Background(), "30")
				if waited := time.Since(start); waited != 0 {
					t.Errorf("the scrape took %v: the body was waited for", waited)
				}
				if value(t, s, "global_stability_scrape_success", "endpoint", e.Label) != 0 || value(t, s, "global_stability_up") != 0 {
					t.Error("the endpoint did not fail")
				}
				logs := env.logs.String()
				if !strings.Contains(logs, client.ErrBodyTooLarge.Error()) || !strings.Contains(logs, "raise "+flag[e.Limit]) {
					t.Errorf("want the failure as too large, with the hint naming %s; log:\n%s", flag[e.Limit], logs)
				}
			})
		})
	}
}
