// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v2"

	"github.com/global-stability/global_stability_exporter/internal/testutil/render"
)

// runbookInhibitions reads the inhibit table of docs/runbooks.md: which
// alert, while it fires, keeps which others of the same exporter and
// account from being sent ("*": every other). The runbooks are what a
// person on call reads, so the example is held to them, not to a copy.
func runbookInhibitions(t *testing.T) map[string][]string {
	t.Helper()
	b, err := os.ReadFile(repoPath(t, "docs/runbooks.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(b), "| while this fires | these are not sent | why |")
	if !ok {
		t.Fatal("docs/runbooks.md has no inhibit table (| while this fires | these are not sent | why |)")
	}
	name := regexp.MustCompile("`([A-Za-z]+)`")
	out := map[string][]string{}
	for _, line := range strings.Split(table, "\n")[2:] {
		cells := strings.Split(line, "|")
		if len(cells) < 4 {
			break
		}
		source := name.FindStringSubmatch(cells[1])
		if source == nil {
			t.Fatalf("docs/runbooks.md inhibit table: no alert in %q", line)
		}
		var hidden []string
		if strings.Contains(cells[2], "every other alert") {
			hidden = []string{"*"}
		}
		for _, m := range name.FindAllStringSubmatch(cells[2], -1) {
			hidden = append(hidden, "GlobalStability"+m[1])
		}
		out["GlobalStability"+source[1]] = hidden
	}
	if len(out) < 3 {
		t.Fatalf("docs/runbooks.md inhibit table: %d rows read", len(out))
	}
	return out
}

// mixinAlertSeverities returns each alert of the rendered mixin with its
// severity.
func mixinAlertSeverities(t *testing.T, config string) map[string]string {
	t.Helper()
	files, err := render.Mixin(config)
	if err != nil {
		t.Fatal(err)
	}
	var rules struct {
		Groups []struct {
			Rules []struct {
				Alert  string
				Labels map[string]string
			}
		}
	}
	if err := yaml.Unmarshal([]byte(files["alerts/global_stability.rules.yml"]), &rules); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			if r.Alert != "" {
				out[r.Alert] = r.Labels["severity"]
			}
		}
	}
	return out
}

// exporterLabels tell one exporter and account from another: one of them
// differing is enough, however little else does (the same instance name in
// two clusters is two exporters).
var exporterLabels = []string{"cluster", "namespace", "job", "instance", "target"}

// amAlert is an alert as Alertmanager's API v2 takes and lists it.
type amAlert struct {
	Labels   map[string]string `json:"labels"`
	StartsAt time.Time         `json:"startsAt"`
	EndsAt   time.Time         `json:"endsAt"`
	Status   *struct {
		InhibitedBy []string `json:"inhibitedBy"`
	} `json:"status,omitempty"`
}

// TestInhibitionsAsTheRunbookSays: in a real Alertmanager with the
// example's inhibit rules, every ordered pair of the mixin's alerts firing
// on one exporter and account is inhibited exactly as the runbook's table
// says: no more (an alert hidden that nothing else announces), no less (a
// twin sent). And no alert ever hides one of another exporter, account or
// cluster, however little tells them apart: one label of cluster,
// namespace, job, instance or target differing (the same instance name in
// two clusters is two exporters) is enough. The demo's alert is the
// exception the runbook states: the demo's series are the exporter's own,
// with no target, and it hides every target of its exporter.
func TestInhibitionsAsTheRunbookSays(t *testing.T) {
	t.Parallel()
	sink := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	t.Cleanup(sink.Close)
	base := "http://" + startAlertmanager(t, t.TempDir(), alertmanagerConfig(t, sink.URL))

	table := runbookInhibitions(t)
	severities := mixinAlertSeverities(t, "{}")
	for source, hidden := range table {
		for _, h := range append([]string{source}, hidden...) {
			if _, ok := severities[h]; !ok && h != "*" {
				t.Errorf("docs/runbooks.md's inhibit table names %s, which the mixin does not have", h)
			}
		}
	}
	hides := func(source, target string) bool {
		return source != target && slices.ContainsFunc(table[source], func(h string) bool { return h == "*" || h == target })
	}
	names := slices.Sorted(maps.Keys(severities))

	now := time.Now()
	var alerts []amAlert
	want := map[string]bool{} // "pair/alertname" → inhibited
	add := func(pair, name string, labels map[string]string) {
		l := maps.Clone(labels)
		l["pair"], l["alertname"], l["severity"] = pair, name, severities[name]
		if name == "GlobalStabilityDemoData" {
			delete(l, "target") // the exporter's own series
		}
		alerts = append(alerts, amAlert{Labels: l, StartsAt: now, EndsAt: now.Add(time.Hour)})
	}
	inhibiting := 0
	for _, source := range names {
		for _, target := range names {
			if source == target {
				continue
			}
			pair := source + "/" + target
			same := map[string]string{"cluster": "a", "namespace": "monitoring", "job": "global_stability", "instance": pair, "target": "acme"}
			add(pair, source, same)
			add(pair, target, same)
			want[pair+"/"+target] = hides(source, target)
			want[pair+"/"+source] = hides(target, source)
			if !hides(source, target) {
				continue
			}
			inhibiting++
			for _, label := range exporterLabels {
				pair := pair + "/" + label + " differs"
				here := maps.Clone(same)
				here["instance"] = pair
				there := maps.Clone(here)
				there[label] += " (other)"
				add(pair, source, here)
				add(pair, target, there)
				want[pair+"/"+target] = source == "GlobalStabilityDemoData" && label == "target"
				want[pair+"/"+source] = false
			}
		}
	}
	if inhibiting < len(names) {
		t.Fatalf("the runbook's table gives only %d inhibiting pairs", inhibiting)
	}

	body, err := json.Marshal(alerts)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post(base+"/api/v2/alerts", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST /api/v2/alerts: %s", resp.Status)
	}

	// Alertmanager marks an alert inhibited when it lists it, once the
	// inhibitor has seen the source: wait until every alert is listed as
	// expected or the test's deadline nears, then report each difference.
	var got map[string]bool
	var last error
	_ = poll(t, func() bool {
		got, last = inhibitedAlerts(base)
		return last == nil && maps.Equal(got, want)
	})
	if last != nil {
		t.Fatal(last)
	}
	for id, inhibited := range want {
		if g, listed := got[id]; !listed || g != inhibited {
			t.Errorf("%s: listed %v, inhibited %v; want inhibited %v", id, listed, g, inhibited)
		}
	}
}

// TestOneNotificationPerCauseAndTarget: the example's route groups by the
// alert and by each label that tells exporters and accounts apart, and by
// nothing else. In a real Alertmanager with the example, two alerts that
// differ only in one of those labels arrive as two notifications; two that
// differ only in another label the mixin's alerts carry (the endpoint or
// pillar at fault) as one, listing both.
func TestOneNotificationPerCauseAndTarget(t *testing.T) {
	t.Parallel()
	hook := newWebhook(t)
	base := "http://" + startAlertmanager(t, t.TempDir(), alertmanagerConfig(t, hook.URL))

	// Two alerts of one receiver, neither an inhibit rule's source.
	severities, table := mixinAlertSeverities(t, "{}"), runbookInhibitions(t)
	var names []string
	for _, name := range slices.Sorted(maps.Keys(severities)) {
		if _, source := table[name]; !source && severities[name] == "warning" {
			names = append(names, name)
		}
	}
	if len(names) < 2 {
		t.Fatalf("the mixin has %d warnings that hide nothing, want 2", len(names))
	}

	grouped := append([]string{"alertname"}, exporterLabels...)
	now := time.Now()
	var alerts []amAlert
	want := map[string]int{} // label → notifications
	for _, label := range append(slices.Clone(grouped), "endpoint", "pillar") {
		one := map[string]string{"case": label, "alertname": names[0], "severity": "warning", "cluster": "a", "namespace": "monitoring",
			"job": "global_stability", "instance": "case " + label, "target": "acme", "endpoint": "global-stability", "pillar": "conflict"}
		other := maps.Clone(one)
		other[label] += " (other)"
		if label == "alertname" {
			other[label] = names[1]
		}
		alerts = append(alerts, amAlert{Labels: one, StartsAt: now, EndsAt: now.Add(time.Hour)},
			amAlert{Labels: other, StartsAt: now, EndsAt: now.Add(time.Hour)})
		want[label] = 1
		if slices.Contains(grouped, label) {
			want[label] = 2
		}
	}
	body, err := json.Marshal(alerts)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post(base+"/api/v2/alerts", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST /api/v2/alerts: %s", resp.Status)
	}

	// Once every alert has been notified, count each case's notifications.
	var got map[string]int
	if err := poll(t, func() bool {
		hook.mu.Lock()
		defer hook.mu.Unlock()
		got = map[string]int{}
		notified := 0
		for _, n := range hook.all {
			got[n.Alerts[0].Labels["case"]]++
			notified += len(n.Alerts)
		}
		return notified >= len(alerts)
	}); err != nil {
		t.Fatalf("not every alert notified by the test's deadline; notifications:\n%s", describe(hook.all))
	}
	for label, n := range want {
		if got[label] != n {
			t.Errorf("two alerts differing only in %s: %d notifications, want %d", label, got[label], n)
		}
	}
}

// inhibitedAlerts lists Alertmanager's alerts as "pair/alertname" →
// whether it is inhibited.
func inhibitedAlerts(base string) (map[string]bool, error) {
	resp, err := http.Get(base + "/api/v2/alerts")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var list []amAlert
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
		return nil, fmt.Errorf("GET /api/v2/alerts: %w", err)
	}
	out := map[string]bool{}
	for _, a := range list {
		out[a.Labels["pair"]+"/"+a.Labels["alertname"]] = a.Status != nil && len(a.Status.InhibitedBy) > 0
	}
	return out, nil
}
