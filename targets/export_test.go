// SPDX-License-Identifier: Apache-2.0

package targets

// AroundLookup calls before and after around each lookup of a probe's
// target, so that a test can hold the probe on either side of it.
func AroundLookup(s *Set, before, after func()) {
	get := s.lookup
	s.lookup = func(name string) (*Target, bool) {
		before()
		defer after()
		return get(name)
	}
}
