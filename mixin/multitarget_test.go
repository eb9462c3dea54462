package mixin_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/global-stability/global_stability_exporter/mixin"
)

// multiTargetTests are promtool unit tests of the mixin rendered with
// multiTarget: each target a probe of the job global_stability (its
// instance the target's name), the exporter's own series from the job
// global_stability_exporter, with a target label.
const multiTargetTests = `rule_files: [rules.yml]
evaluation_interval: 1m
tests:
  # Two targets above the warning: one alert each, by target.
  - interval: 1m
    input_series:
      - series: 'up{job="global_stability",instance="prod"}'
        values: '1x30'
      - series: 'up{job="global_stability",instance="staging"}'
        values: '1x30'
      - series: 'up{job="global_stability_exporter",instance="gse:10110"}'
        values: '1x30'
      - series: 'global_stability_score{job="global_stability",instance="prod"}'
        values: '65x30'
      - series: 'global_stability_score{job="global_stability",instance="staging"}'
        values: '70x30'
    alert_rule_test:
      - eval_time: 20m
        alertname: GlobalStabilityScoreWarning
        exp_alerts:
          - exp_labels: {severity: warning, job: global_stability, instance: prod}
            exp_annotations:
              summary: "Global stability score is 65 (warning above 60)"
              description: "The composite score reported by prod has been above 60 for 15m; lower is more stable. Check which pillar drives it."
              runbook_url: "https://github.com/global-stability/global_stability_exporter/blob/main/docs/runbooks.md#globalstabilityscorewarning"
          - exp_labels: {severity: warning, job: global_stability, instance: staging}
            exp_annotations:
              summary: "Global stability score is 70 (warning above 60)"
              description: "The composite score reported by staging has been above 60 for 15m; lower is more stable. Check which pillar drives it."
              runbook_url: "https://github.com/global-stability/global_stability_exporter/blob/main/docs/runbooks.md#globalstabilityscorewarning"

  # One target's probe failing while the exporter answers: that target's
  # page. The exporter itself down, every probe failing with it: one page,
  # the exporter's, not one per target.
  - interval: 1m
    input_series:
      - series: 'up{job="global_stability",instance="prod"}'
        values: '1x10 0x20'
      - series: 'up{job="global_stability",instance="staging"}'
        values: '0x10 0x20'
      - series: 'up{job="global_stability_exporter",instance="gse:10110"}'
        values: '1x10 0x20'
    alert_rule_test:
      - eval_time: 8m
        alertname: GlobalStabilityExporterDown
        exp_alerts:
          - exp_labels: {severity: critical, job: global_stability, instance: staging}
            exp_annotations:
              summary: "global_stability_exporter staging is down"
              description: "Prometheus could not scrape staging for 5m: the exporter is down or unreachable (or, for a target of a targets' file, /probe refused it: a name the file does not hold); every global_stability series of it is absent."
              runbook_url: "https://github.com/global-stability/global_stability_exporter/blob/main/docs/runbooks.md#globalstabilityexporterdown"
      - eval_time: 25m
        alertname: GlobalStabilityExporterDown
        exp_alerts:
          - exp_labels: {severity: critical, job: global_stability_exporter, instance: "gse:10110"}
            exp_annotations:
              summary: "global_stability_exporter gse:10110 is down"
              description: "Prometheus could not scrape gse:10110 for 5m: the exporter is down or unreachable (or, for a target of a targets' file, /probe refused it: a name the file does not hold); every global_stability series of it is absent."
              runbook_url: "https://github.com/global-stability/global_stability_exporter/blob/main/docs/runbooks.md#globalstabilityexporterdown"

  # The quota of one target, from the exporter's own series: the alert
  # names the target.
  - interval: 1m
    input_series:
      - series: 'global_stability_api_rate_limit_remaining{job="global_stability_exporter",instance="gse:10110",target="prod",endpoint="conflict"}'
        values: '5x20'
      - series: 'global_stability_api_rate_limit_limit{job="global_stability_exporter",instance="gse:10110",target="prod",endpoint="conflict"}'
        values: '1000x20'
      - series: 'global_stability_api_rate_limit_reset_timestamp_seconds{job="global_stability_exporter",instance="gse:10110",target="prod",endpoint="conflict"}'
        values: '3600x20'
      - series: 'global_stability_api_rate_limit_remaining{job="global_stability_exporter",instance="gse:10110",target="staging",endpoint="conflict"}'
        values: '900x20'
      - series: 'global_stability_api_rate_limit_limit{job="global_stability_exporter",instance="gse:10110",target="staging",endpoint="conflict"}'
        values: '1000x20'
    alert_rule_test:
      - eval_time: 10m
        alertname: GlobalStabilityAPIQuotaLow
        exp_alerts:
          - exp_labels: {severity: warning, job: global_stability_exporter, instance: "gse:10110", target: prod}
            exp_annotations:
              summary: "Only 0.5% of the API quota is left (target prod)"
              description: "The API announces (rate-limit headers) that less than 10% of its quota has been left for 5m (the lowest share any endpoint's answers give), and that window does not reset within a minute. Once it runs out, the API answers 429 and every endpoint fails until the reset."
              runbook_url: "https://github.com/global-stability/global_stability_exporter/blob/main/docs/runbooks.md#globalstabilityapiquotalow"
`

// TestMultiTargetAlertsFirePerTarget: with several targets in one
// Prometheus, each alert fires per target, and one cause (the exporter
// itself down) still pages once. promtool runs the rendered rules.
func TestMultiTargetAlertsFirePerTarget(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("promtool not found; .ci/run installs it")
		}
		t.Skip("promtool not found (Debian's prometheus package)")
	}
	files, err := mixin.Render(`{multiTarget: true}`)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "rules.yml"), []byte(files["alerts/global_stability.rules.yml"]), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tests.yml"), []byte(multiTargetTests), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(promtool, "test", "rules", "tests.yml")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("promtool test rules: %v\n%s", err, out)
	}
}
