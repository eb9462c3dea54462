// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"flag"
	"os"
	"testing"
)

// TestMain runs every test of the package at once unless -parallel is
// given: each drives its own Prometheus (and Alertmanager) and mostly waits
// on their intervals, so side by side they finish within go test's default
// -timeout at a load of 20 on 2 cores, where two at a time (GOMAXPROCS)
// did not.
func TestMain(m *testing.M) {
	flag.Parse()
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		_ = flag.Set("test.parallel", "16")
	}
	os.Exit(m.Run())
}
