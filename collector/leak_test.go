// SPDX-License-Identifier: Apache-2.0

package collector_test

import (
	"testing"

	"github.com/global-stability/global_stability_exporter/endpoint"
	"go.uber.org/goleak"
)

// TestMain fails the package's tests if a goroutine outlives them: every
// server, request and collection a test starts must end with it.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// endpointLabels are the labels of every endpoint, in order.
func endpointLabels() []string {
	var out []string
	for _, e := range endpoint.All() {
		out = append(out, e.Label)
	}
	return out
}

// oneCollection is the requests of one collection of every endpoint when
// /v1/conflict takes conflictPages pages.
func oneCollection(conflictPages int) int { return len(endpoint.All()) - 1 + conflictPages }
