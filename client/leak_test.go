// SPDX-License-Identifier: Apache-2.0

package client_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests if a goroutine outlives them: every
// server, request and collection a test starts must end with it.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
