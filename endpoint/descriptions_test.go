// SPDX-License-Identifier: Apache-2.0

package endpoint

import (
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestDescriptions holds every endpoint description to the rules the code
// relies on but the compiler cannot check, so that an endpoint added by the
// recipe of docs/development.md that breaks one fails here, not in
// production.
func TestDescriptions(t *testing.T) {
	for _, e := range All() {
		t.Run(e.Label, func(t *testing.T) {
			// A fold or Unique naming a field the list does not read panics
			// (List.itemIndex) when a collection starts.
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Errorf("starting a collection panics: %v", r)
					}
				}()
				e.Start(Config{})
			}()
			if e.Paged && e.List == nil {
				t.Error("a paged endpoint without a list: its pages would count nothing")
			}
			if e.Limit != 0 && e.Limit != 1 {
				t.Errorf("limit %d is neither the document's nor the page's", e.Limit)
			}
		})
	}
}

// TestCappedFoldsReportTheirDrops: the folds whose label values come from
// upstream data (CountBy, FirstKeys, Cells) keep at most
// --collector.max-label-values series and report the rest in
// global_stability_label_values_dropped, which lists only metrics marked
// Capped: an unmarked metric of such a fold would drop series silently.
// Every other metric's labels are fixed, and it must not be marked.
func TestCappedFoldsReportTheirDrops(t *testing.T) {
	for _, e := range All() {
		capped := map[*Metric]bool{}
		if e.List != nil {
			for _, f := range e.List.Folds {
				switch f.(type) {
				case CountBy, FirstKeys, Cells:
					for _, m := range f.metrics() {
						capped[m] = true
					}
				}
			}
		}
		for _, m := range e.Metrics() {
			if m.Capped != capped[m] {
				t.Errorf("%s: %s is marked Capped %v, but its fold caps its series: %v", e.Label, m.Name, m.Capped, capped[m])
			}
		}
	}
}

// TestHelpTextsNameTheirEndpoints: a metric's help says which endpoints its
// values come from (GET /v1/...); the paths it names are exactly those of
// the endpoints that emit it, a drilldown's pillar written {pillar}. A new
// endpoint that emits as_of, say, fails here until the help says so.
func TestHelpTextsNameTheirEndpoints(t *testing.T) {
	from := map[*Metric]map[string]bool{}
	for _, e := range All() {
		path := "/v1/" + e.Label
		for k, v := range e.Labels {
			path = strings.Replace(path, "/"+v, "/{"+k+"}", 1)
		}
		for _, m := range e.Metrics() {
			if from[m] == nil {
				from[m] = map[string]bool{}
			}
			from[m][path] = true
		}
	}
	pathRE := regexp.MustCompile(`/v1/[a-z0-9_/{}-]*[a-z0-9_}]`)
	for m, paths := range from {
		named := map[string]bool{}
		for _, p := range pathRE.FindAllString(m.Help, -1) {
			named[p] = true
		}
		if want := slices.Sorted(maps.Keys(paths)); !slices.Equal(slices.Sorted(maps.Keys(named)), want) {
			t.Errorf("%s: its help names %v, but its values come from %v", m.Name, slices.Sorted(maps.Keys(named)), want)
		}
	}
}
