// SPDX-License-Identifier: Apache-2.0

package endpoint

import (
	"slices"
	"strconv"
)

// maxEachValues bounds the distinct values an item's field of Each keeps
// (an event names a handful of actors); the values past them are left out
// unread, counted.
const maxEachValues = 32

// readEach judges each value of an item's array by f's rule into st.names,
// once each, walking the array as a list is walked: one value at a time.
func (col *Collection) readEach(s *scanner, f *Field, st *fieldState) error {
	st.names, st.bad, st.left = st.names[:0], "", 0 // of a repeated key, the last counts
	if c, err := s.peek(); err != nil || c != '[' {
		raw, err := s.value()
		st.bad, st.left = wrongKind(raw.Kind(), "an array"), 1
		return err
	}
	return s.each(func(int, []byte) error {
		bad := tooManyValues
		if len(st.names) < maxEachValues {
			raw, err := s.value()
			if err != nil {
				return err
			}
			var v Value
			if v, bad = f.Rule(raw, &col.c); bad == "" && !slices.ContainsFunc(st.names, func(n Value) bool { return n.Str == v.Str }) {
				st.names = append(st.names, v)
			}
		} else if err := s.skip(); err != nil {
			return err
		}
		if bad != "" {
			if st.left++; st.left == 1 {
				st.bad = bad
			}
		}
		return nil
	})
}

var tooManyValues = "more than " + strconv.Itoa(maxEachValues) + " distinct values in one item"
