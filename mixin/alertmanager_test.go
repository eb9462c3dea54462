// SPDX-License-Identifier: Apache-2.0

package mixin_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v2"
)

const alertmanagerExample = "../examples/alertmanager/alertmanager.yml"

// wantReceiver is where an alert of each severity must arrive in the
// Alertmanager example: a critical pages, a warning becomes a ticket.
var wantReceiver = map[string]string{"critical": "pager", "warning": "ticket"}

// TestAlertmanagerExampleRoutesEveryAlert: amtool accepts the example, and
// routes every alert of the mixin, with the labels it fires with, to the
// receiver of its severity; an alert added with a severity the example has
// no receiver for fails here.
func TestAlertmanagerExampleRoutesEveryAlert(t *testing.T) {
	amtool := lookPath(t, "amtool", "prometheus-alertmanager")
	run := func(args ...string) (string, error) {
		out, err := exec.Command(amtool, args...).CombinedOutput()
		return string(out), err
	}
	if out, err := run("check-config", alertmanagerExample); err != nil {
		t.Fatalf("amtool check-config %s: %v\n%s", alertmanagerExample, err, out)
	}
	for _, a := range renderedAlerts(t, "{}") {
		receiver, ok := wantReceiver[a.Labels["severity"]]
		if !ok {
			t.Errorf("%s: severity %q has no receiver in the example", a.Alert, a.Labels["severity"])
			continue
		}
		// The labels an alert arrives with: its own, and those of the
		// series and the Prometheus it came from.
		args := []string{"config", "routes", "test", "--config.file=" + alertmanagerExample, "--verify.receivers=" + receiver,
			"alertname=" + a.Alert, "job=global_stability", "instance=gse:10110", "cluster=a"}
		for k, v := range a.Labels {
			args = append(args, k+"="+v)
		}
		if out, err := run(args...); err != nil {
			t.Errorf("%s (severity %s) is not routed to %s alone: %v\n%s", a.Alert, a.Labels["severity"], receiver, err, out)
		}
	}
	// And what is not ours stays with the default receiver.
	if out, err := run("config", "routes", "test", "--config.file="+alertmanagerExample, "--verify.receivers=default",
		"alertname=NodeDown", "severity=critical"); err != nil {
		t.Errorf("another alert is routed by our routes: %v\n%s", err, out)
	}
}

// amConfig is the part of an Alertmanager configuration checked below.
type amConfig struct {
	Route struct {
		Routes []struct {
			Matchers []string `yaml:"matchers"`
			GroupBy  []string `yaml:"group_by"`
		} `yaml:"routes"`
	} `yaml:"route"`
	InhibitRules []struct {
		SourceMatchers []string `yaml:"source_matchers"`
		TargetMatchers []string `yaml:"target_matchers"`
		Equal          []string `yaml:"equal"`
	} `yaml:"inhibit_rules"`
}

// TestAlertmanagerExampleNamesTheMixinsAlerts: every alert name an inhibit
// rule or route of the example matches exists in the mixin, and every
// inhibit rule's source matches an alert, so renaming an alert cannot
// quietly turn an inhibit rule off; the grouping and equal labels are
// labels the alerts carry or that tell exporters, targets and clusters
// apart.
func TestAlertmanagerExampleNamesTheMixinsAlerts(t *testing.T) {
	raw, err := os.ReadFile(alertmanagerExample)
	if err != nil {
		t.Fatal(err)
	}
	var cfg amConfig
	if err := yaml.Unmarshal(raw, &cfg); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, a := range renderedAlerts(t, "{}") {
		names = append(names, a.Alert)
	}
	matcher := regexp.MustCompile(`^alertname(=~|!=|=)"([^"]+)"$`)
	// matched returns the mixin's alerts that one alertname matcher selects.
	matched := func(m string) []string {
		parts := matcher.FindStringSubmatch(m)
		if parts == nil {
			return nil
		}
		var out []string
		for _, n := range names {
			var ok bool
			switch parts[1] {
			case "=":
				ok = n == parts[2]
			case "!=":
				ok = n != parts[2]
			case "=~":
				ok = regexp.MustCompile("^(?:" + parts[2] + ")$").MatchString(n)
			}
			if ok {
				out = append(out, n)
			}
		}
		return out
	}
	if len(cfg.InhibitRules) < 3 {
		t.Fatalf("%d inhibit rules, want the ladder, the stale summary, the blinding overview and the demo", len(cfg.InhibitRules))
	}
	for i, r := range cfg.InhibitRules {
		for _, m := range append(append([]string{}, r.SourceMatchers...), r.TargetMatchers...) {
			if !strings.HasPrefix(m, "alertname") {
				continue
			}
			if got := matched(m); len(got) == 0 {
				t.Errorf("inhibit rule %d: %s matches no alert of the mixin", i+1, m)
			}
			// Each alternative of a regexp names an alert: a typo in one
			// of them would otherwise pass.
			if parts := matcher.FindStringSubmatch(m); parts != nil && parts[1] == "=~" && !strings.Contains(parts[2], "(") && !strings.Contains(parts[2], ".") {
				for _, alt := range strings.Split(parts[2], "|") {
					if len(matched(`alertname="`+alt+`"`)) == 0 {
						t.Errorf("inhibit rule %d: %s names %s, which the mixin does not have", i+1, m, alt)
					}
				}
			}
		}
		if !slices.Contains(r.Equal, "instance") || !slices.Contains(r.Equal, "cluster") {
			t.Errorf("inhibit rule %d: equal %v must hold instance and cluster: an alert must not hide another exporter's or cluster's", i+1, r.Equal)
		}
	}
	if len(cfg.Route.Routes) == 0 {
		t.Fatal("no route for the mixin's alerts")
	}
	ours := cfg.Route.Routes[0]
	for _, l := range []string{"alertname", "cluster", "instance", "target"} {
		if !slices.Contains(ours.GroupBy, l) {
			t.Errorf("the route groups by %v, without %s: one notification per cause and target needs it", ours.GroupBy, l)
		}
	}
	for _, l := range []string{"endpoint", "pillar", "severity"} {
		if slices.Contains(ours.GroupBy, l) {
			t.Errorf("the route groups by %s: one cause would notify once per %s", l, l)
		}
	}
}

// lookPath finds a binary, skipping the test without it, except under CI,
// which installs the package and must never skip.
func lookPath(t *testing.T, name, debianPackage string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s not found; .ci/run installs Debian's %s and CI must not skip this test", name, debianPackage)
		}
		t.Skipf("%s not found (Debian's %s)", name, debianPackage)
	}
	return filepath.Clean(path)
}
