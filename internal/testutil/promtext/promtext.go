// SPDX-License-Identifier: Apache-2.0

// Package promtext reads Prometheus text exposition into samples, for
// tests: a HELP line holds a metric's name and often the words a test looks
// for, so a substring check can pass without the sample.
package promtext

import (
	"fmt"
	"slices"
	"strings"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Samples maps a series, as Key writes it, to its value; a histogram's or
// summary's is its sample count.
type Samples map[string]float64

// Parse reads text exposition; text that does not parse is an error.
func Parse(text string) (Samples, error) {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		return nil, fmt.Errorf("parse exposition: %w", err)
	}
	out := Samples{}
	for name, mf := range families {
		for _, m := range mf.GetMetric() {
			pairs := make([]string, 0, 2*len(m.GetLabel()))
			for _, l := range m.GetLabel() {
				pairs = append(pairs, l.GetName(), l.GetValue())
			}
			// A metric holds one of these; the getters of the others are 0.
			out[Key(name, pairs...)] = m.GetGauge().GetValue() + m.GetCounter().GetValue() + m.GetUntyped().GetValue() +
				float64(m.GetHistogram().GetSampleCount()+m.GetSummary().GetSampleCount())
		}
	}
	return out, nil
}

// Key writes a series as name{a="1",b="2"}, labels sorted; pairs alternates names and values.
func Key(name string, pairs ...string) string {
	parts := make([]string, 0, len(pairs)/2)
	for i := 0; i < len(pairs); i += 2 {
		parts = append(parts, fmt.Sprintf("%s=%q", pairs[i], pairs[i+1]))
	}
	if len(parts) == 0 {
		return name
	}
	slices.Sort(parts)
	return name + "{" + strings.Join(parts, ",") + "}"
}

// Get returns the value of one series and whether it is present.
func (s Samples) Get(name string, pairs ...string) (float64, bool) {
	v, ok := s[Key(name, pairs...)]
	return v, ok
}

// Family returns every series of the metric called name.
func (s Samples) Family(name string) Samples {
	out := Samples{}
	for k, v := range s {
		if k == name || strings.HasPrefix(k, name+"{") {
			out[k] = v
		}
	}
	return out
}
