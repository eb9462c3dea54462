// SPDX-License-Identifier: Apache-2.0

package main

import "testing"

func TestFallbackVersion(t *testing.T) {
	for _, tc := range []struct{ module, file, want string }{
		{"v0.2.0", "0.1.0\n", "0.2.0"},                               // go install ...@v0.2.0
		{"v0.2.0-rc.1", "0.1.0\n", "0.2.0-rc.1"},                     // a pre-release tag
		{"(devel)", "0.1.0\n", "0.1.0"},                              // go build in a checkout
		{"", " 0.1.0 \n", "0.1.0"},                                   // no build info
		{"v0.1.1-0.20261122141945-abcdef012345", "0.1.0\n", "0.1.0"}, // untagged commit
		{"v0.1.0+dirty", "0.1.0\n", "0.1.0"},
	} {
		if got := fallbackVersion(tc.module, tc.file); got != tc.want {
			t.Errorf("fallbackVersion(%q, %q) = %q, want %q", tc.module, tc.file, got, tc.want)
		}
	}
}
