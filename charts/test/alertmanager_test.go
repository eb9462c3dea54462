// SPDX-License-Identifier: Apache-2.0

package charttest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	monitoringv1alpha1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1alpha1"
	"sigs.k8s.io/yaml"
)

var amConfigAPI = []string{"monitoring.coreos.com/v1alpha1/AlertmanagerConfig"}

// receivers are the two receivers' integrations, as a user gives them.
var receivers = map[string]any{
	"alertmanagerConfig.pager":  map[string]any{"pagerdutyConfigs": []any{map[string]any{"routingKey": map[string]any{"name": "pagerduty", "key": "routing-key"}}}},
	"alertmanagerConfig.ticket": map[string]any{"slackConfigs": []any{map[string]any{"apiURL": map[string]any{"name": "slack", "key": "url"}, "channel": "#gs", "sendResolved": true}}},
}

func withValues(sets ...map[string]any) map[string]any {
	out := map[string]any{}
	for _, s := range sets {
		for k, v := range s {
			out[k] = v
		}
	}
	return out
}

// TestAlertmanagerConfigOnlyWhereAsked: off by default, even where the
// operator serves the kind; auto renders it only where it is served; true
// always; enabled without a receiver's integrations fails, naming it.
func TestAlertmanagerConfigOnlyWhereAsked(t *testing.T) {
	for _, tc := range []struct {
		name   string
		apis   []string
		values map[string]any
		want   int
	}{
		{"defaults, the kind served", amConfigAPI, nil, 0},
		{"auto, a plain cluster", nil, withValues(receivers, map[string]any{"alertmanagerConfig.enabled": "auto"}), 0},
		{"auto, the kind served", amConfigAPI, withValues(receivers, map[string]any{"alertmanagerConfig.enabled": "auto"}), 1},
		{"true, helm template without API versions", nil, withValues(receivers, map[string]any{"alertmanagerConfig.enabled": true}), 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := helmTemplateWith(t, tc.apis, "gse", "monitoring", withValues(required, tc.values))
			if err != nil {
				t.Fatal(err)
			}
			if len(m.amConfigs) != tc.want {
				t.Errorf("%d AlertmanagerConfigs, want %d", len(m.amConfigs), tc.want)
			}
		})
	}
	_, err := helmTemplateWith(t, nil, "gse", "monitoring", withValues(required, map[string]any{
		"alertmanagerConfig.enabled": true, "alertmanagerConfig.pager": receivers["alertmanagerConfig.pager"],
	}))
	if err == nil || !strings.Contains(err.Error(), "alertmanagerConfig.ticket is required") {
		t.Errorf("enabled without a ticket receiver: %v, want an error naming alertmanagerConfig.ticket", err)
	}
}

// exampleRouting is the part of examples/alertmanager/alertmanager.yml the
// chart renders.
type exampleRouting struct {
	Route struct {
		Routes []exampleRoute `json:"routes"`
	} `json:"route"`
	InhibitRules []struct {
		SourceMatchers []string `json:"source_matchers"`
		TargetMatchers []string `json:"target_matchers"`
		Equal          []string `json:"equal"`
	} `json:"inhibit_rules"`
}

type exampleRoute struct {
	Matchers       []string       `json:"matchers"`
	Receiver       string         `json:"receiver"`
	GroupBy        []string       `json:"group_by"`
	GroupWait      string         `json:"group_wait"`
	GroupInterval  string         `json:"group_interval"`
	RepeatInterval string         `json:"repeat_interval"`
	Routes         []exampleRoute `json:"routes"`
}

// TestAlertmanagerConfigIsTheExample: the AlertmanagerConfig routes and
// inhibits as examples/alertmanager/alertmanager.yml does (which amtool
// and the end-to-end test through a real Alertmanager hold): the same
// matchers, grouping, timers, receiver per severity and inhibit rules; and
// the receivers are the user's. With clusterLabel, the cluster label it
// groups and inhibits by is that one.
func TestAlertmanagerConfigIsTheExample(t *testing.T) {
	var ex exampleRouting
	if err := yaml.Unmarshal(repoFile(t, "examples/alertmanager/alertmanager.yml"), &ex); err != nil {
		t.Fatal(err)
	}
	if len(ex.Route.Routes) == 0 {
		t.Fatal("the example has no route for the mixin's alerts")
	}
	ours := ex.Route.Routes[0]
	for _, clusterLabel := range []string{"", "k8s_cluster"} {
		t.Run("clusterLabel="+clusterLabel, func(t *testing.T) {
			m := mustTemplate(t, "gse", "monitoring", withValues(required, receivers, map[string]any{
				"alertmanagerConfig.enabled": true, "clusterLabel": clusterLabel,
			}))
			amc := only(t, "AlertmanagerConfig", m.amConfigs)
			cluster := func(labels []string) []string {
				out := slices.Clone(labels)
				if clusterLabel != "" {
					for i, l := range out {
						if l == "cluster" {
							out[i] = clusterLabel
						}
					}
				}
				return out
			}
			r := amc.Spec.Route
			if r == nil {
				t.Fatal("no route")
			}
			str := func(ms []monitoringv1alpha1.Matcher) []string {
				var out []string
				for _, m := range ms {
					out = append(out, m.String())
				}
				return out
			}
			got := fmt.Sprintf("matchers %q group_by %q wait %s interval %s", str(r.Matchers), r.GroupBy, ptr(r.GroupWait), ptr(r.GroupInterval))
			want := fmt.Sprintf("matchers %q group_by %q wait %s interval %s", ours.Matchers, cluster(ours.GroupBy), ours.GroupWait, ours.GroupInterval)
			if got != want {
				t.Errorf("route:\n  %s\nthe example's:\n  %s", got, want)
			}
			var children []string
			for _, raw := range r.Routes {
				var child monitoringv1alpha1.Route
				dec := json.NewDecoder(bytes.NewReader(raw.Raw))
				dec.DisallowUnknownFields()
				if err := dec.Decode(&child); err != nil {
					t.Fatalf("a child route does not decode as a Route: %v\n%s", err, raw.Raw)
				}
				children = append(children, fmt.Sprintf("%q → %s every %s", str(child.Matchers), child.Receiver, ptr(child.RepeatInterval)))
			}
			var wantChildren []string
			for _, c := range ours.Routes {
				wantChildren = append(wantChildren, fmt.Sprintf("%q → %s every %s", c.Matchers, c.Receiver, c.RepeatInterval))
			}
			if !slices.Equal(children, wantChildren) {
				t.Errorf("child routes:\n  %s\nthe example's:\n  %s", strings.Join(children, "\n  "), strings.Join(wantChildren, "\n  "))
			}
			var rules, wantRules []string
			for _, ir := range amc.Spec.InhibitRules {
				rules = append(rules, fmt.Sprintf("%q hides %q equal %q", str(ir.SourceMatch), str(ir.TargetMatch), ir.Equal))
			}
			for _, ir := range ex.InhibitRules {
				wantRules = append(wantRules, fmt.Sprintf("%q hides %q equal %q", ir.SourceMatchers, ir.TargetMatchers, cluster(ir.Equal)))
			}
			if !slices.Equal(rules, wantRules) {
				t.Errorf("inhibit rules:\n  %s\nthe example's:\n  %s", strings.Join(rules, "\n  "), strings.Join(wantRules, "\n  "))
			}
			var names []string
			for _, rc := range amc.Spec.Receivers {
				names = append(names, rc.Name)
				switch rc.Name {
				case "pager":
					if len(rc.PagerDutyConfigs) != 1 || rc.PagerDutyConfigs[0].RoutingKey == nil || rc.PagerDutyConfigs[0].RoutingKey.Name != "pagerduty" {
						t.Errorf("the pager receiver is not the one given: %+v", rc)
					}
				case "ticket":
					if len(rc.SlackConfigs) != 1 || rc.SlackConfigs[0].Channel == nil || *rc.SlackConfigs[0].Channel != "#gs" {
						t.Errorf("the ticket receiver is not the one given: %+v", rc)
					}
				}
			}
			if !slices.Equal(names, []string{"pager", "ticket"}) {
				t.Errorf("receivers %q, want pager and ticket", names)
			}
		})
	}
}

func ptr[T ~string](p *T) string {
	if p == nil {
		return ""
	}
	return string(*p)
}
