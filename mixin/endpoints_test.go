// SPDX-License-Identifier: Apache-2.0

package mixin_test

import (
	"encoding/json"
	"flag"
	"os"
	"testing"

	"github.com/global-stability/global_stability_exporter/endpoint"
)

var update = flag.Bool("update", false, "rewrite endpoints.json from the endpoint descriptions")

// endpoints is what the mixin knows of the API's endpoints, written to
// endpoints.json from their descriptions (endpoint/api.go) and imported by
// the jsonnet: the alerts' and panels' endpoint lists, the as_of
// endpoints, each endpoint's colour and the pillars follow from it.
type endpoints struct {
	Pillars   []string      `json:"pillars"`
	Overview  string        `json:"overview"` // the composite score's
	Summary   string        `json:"summary"`  // GlobalStabilitySummaryStale's
	Endpoints []description `json:"endpoints"`
}

type description struct {
	Label   string   `json:"label"`
	Pillar  string   `json:"pillar,omitempty"` // a drilldown's
	Metrics []string `json:"metrics"`
}

func describeEndpoints() endpoints {
	out := endpoints{Pillars: endpoint.Pillars, Overview: endpoint.Overview.Label, Summary: endpoint.Summary.Label}
	for _, e := range endpoint.All() {
		d := description{Label: e.Label, Pillar: e.Labels["pillar"]}
		for _, m := range e.Metrics() {
			d.Metrics = append(d.Metrics, m.Name)
		}
		out.Endpoints = append(out.Endpoints, d)
	}
	return out
}

// TestEndpointsFileIsCurrent: endpoints.json is what the endpoint
// descriptions say, so an endpoint added, or one that gains an as_of,
// reaches the alerts and dashboards by regenerating: `go test ./mixin -run
// TestEndpointsFileIsCurrent -update`, then `make mixin`.
func TestEndpointsFileIsCurrent(t *testing.T) {
	b, err := json.MarshalIndent(describeEndpoints(), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	want := string(b) + "\n"
	if *update {
		if err := os.WriteFile("endpoints.json", []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile("endpoints.json")
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Error("endpoints.json differs from the endpoint descriptions: go test ./mixin -run TestEndpointsFileIsCurrent -update, then make mixin")
	}
}
