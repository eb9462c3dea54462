// SPDX-License-Identifier: Apache-2.0

package promtext

import "testing"

func TestParseReadsSamplesNotHelpText(t *testing.T) {
	text := `# HELP up 1 when up 1
# TYPE up gauge
up 0
# HELP requests_total Requests.
# TYPE requests_total counter
requests_total{endpoint="b",code="200"} 3
requests_total{code="500",endpoint="a"} 1
# TYPE d histogram
d_bucket{le="+Inf"} 7
d_sum 1
d_count 7
`
	s, err := Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := s.Get("up"); !ok || v != 0 {
		t.Errorf("up = %v, %v; want 0 (not the 1 of its HELP line)", v, ok)
	}
	if v, ok := s.Get("requests_total", "endpoint", "b", "code", "200"); !ok || v != 3 {
		t.Errorf("labels in any order: %v, %v", v, ok)
	}
	if v, ok := s.Get("d"); !ok || v != 7 {
		t.Errorf("histogram count: %v, %v", v, ok)
	}
	if n := len(s.Family("requests_total")); n != 2 {
		t.Errorf("Family: %d series, want 2", n)
	}
	if _, ok := s.Get("requests"); ok {
		t.Error("a prefix of a name is not the name")
	}
	if _, err := Parse("up{ 1\n"); err == nil {
		t.Error("broken exposition parsed")
	}
}
