// SPDX-License-Identifier: Apache-2.0

// Command floor is the bench harness's yardstick for CPU per scrape: the
// least a Go program can do for a scrape. On each GET /metrics it fetches
// every endpoint of the exporter's descriptions concurrently, as the
// exporter does, reads and discards the bodies, and answers with one line. No decoding, no metrics,
// no compression: what the exporter spends beyond this is its own cost.
//
//	GLOBAL_STABILITY_API_KEY=k floor -api-url http://127.0.0.1:10111 -listen-address 127.0.0.1:10110
//
// It follows no next_cursor: run it against a simulator that serves all
// events in one page.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/global-stability/global_stability_exporter/endpoint"
)

func main() {
	apiURL := flag.String("api-url", "http://127.0.0.1:10111", "base URL of the API (the simulator)")
	listen := flag.String("listen-address", "127.0.0.1:10110", "address to answer scrapes on")
	flag.Parse()
	key := os.Getenv("GLOBAL_STABILITY_API_KEY")
	if key == "" {
		log.Fatal("floor: set GLOBAL_STABILITY_API_KEY")
	}
	// The exporter's client keeps as many idle connections per host.
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.MaxIdleConnsPerHost = 16
	httpClient := &http.Client{Transport: transport}

	fetch := func(ctx context.Context, endpoint string) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, *apiURL+"/v1/"+endpoint, nil)
		if err != nil {
			return err
		}
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := httpClient.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if _, err := io.Copy(io.Discard, resp.Body); err != nil {
			return err
		}
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("%s: %s", endpoint, resp.Status)
		}
		return nil
	}

	mux := http.NewServeMux()
	// The endpoint labels are the paths after /v1/; only their names come
	// from the endpoint descriptions, none of the exporter's request or
	// decoding code.
	var endpoints []string
	for _, e := range endpoint.All() {
		endpoints = append(endpoints, e.Label)
	}
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, r *http.Request) {
		errs := make([]error, len(endpoints))
		var wg sync.WaitGroup
		for i, endpoint := range endpoints {
			wg.Go(func() { errs[i] = fetch(r.Context(), endpoint) })
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		_, _ = io.WriteString(w, "# the floor of a scrape\nglobal_stability_up 1\n")
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "floor\n") })
	srv := &http.Server{Addr: *listen, Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	log.Fatal(srv.ListenAndServe())
}
