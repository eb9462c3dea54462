// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"flag"
	"os"
	"testing"
)

// TestMain gives the package an hour when go test's default -timeout of 10
// minutes stands: these tests drive real Prometheus and Alertmanager
// processes, which at a load of 20 on 2 cores take several times longer
// than on a quiet machine, and each wait ends shortly before the binary's
// deadline (poll), never at a fixed time. A -timeout given otherwise is kept.
func TestMain(m *testing.M) {
	flag.Parse()
	if f := flag.Lookup("test.timeout"); f != nil && f.Value.String() == "10m0s" {
		_ = f.Value.Set("1h")
	}
	os.Exit(m.Run())
}
