// SPDX-License-Identifier: Apache-2.0

package main

import (
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/global-stability/global_stability_exporter/endpoint"
)

// json_exporter (prometheus-community/json_exporter), the general exporter
// a user could point at the API instead: one module per kind of endpoint,
// exporting what JSONPath reaches of what this exporter exports. It has no
// folds: each event, indicator and briefing is a series of its own, and
// timestamps, which it cannot read, are left out.
const jsonExporterConfig = `modules:
  global-stability:
    metrics:
    - {name: global_stability_score, path: '{.score}', help: score}
    - {name: global_stability_pillar_conflict_score, path: '{.pillars.conflict}', help: pillar score}
    - {name: global_stability_pillar_cyber_score, path: '{.pillars.cyber}', help: pillar score}
    - {name: global_stability_pillar_supply_chain_score, path: '{.pillars.supply_chain}', help: pillar score}
    - {name: global_stability_pillar_macro_score, path: '{.pillars.macro}', help: pillar score}
  pillar:
    metrics:
    - {name: global_stability_pillar_delta_24h, path: '{.delta_24h}', help: delta}
    - name: global_stability_pillar_indicator
      type: object
      path: '{.indicators[*]}'
      help: indicator
      labels: {indicator: '{.key}'}
      values: {value: '{.value}'}
  conflict:
    metrics:
    - name: global_stability_conflict_event
      type: object
      path: '{.events[*]}'
      help: event
      labels: {id: '{.id}', category: '{.category}', lat: '{.lat}', lon: '{.lon}'}
      values: {escalation: '{.escalation}'}
  briefings:
    metrics:
    - name: global_stability_briefing
      type: object
      path: '{.briefings[*]}'
      help: briefing
      labels: {id: '{.id}'}
      values: {published: 1}
  summaries:
    metrics:
    - {name: global_stability_summary, path: '{.score}', allow_missing_key: true, help: none}
`

// jsonExporterContender runs json_exporter's binary with that
// configuration; a collection probes every endpoint of the descriptions.
func jsonExporterContender(dir, bin string) (contender, error) {
	config := filepath.Join(dir, "json_exporter.yml")
	if err := os.WriteFile(config, []byte(jsonExporterConfig), 0o600); err != nil {
		return contender{}, err
	}
	return contender{
		name: jsonExporter,
		cmd: func(_, listen string, _ ...string) *exec.Cmd {
			return exec.Command(bin, "--config.file="+config, "--web.listen-address="+listen, "--log.level=error")
		},
		paths: func(upstream string) []string {
			var paths []string
			for _, e := range endpoint.All() {
				module := e.Label
				if strings.HasPrefix(module, "global-stability/pillar/") {
					module = "pillar"
				}
				target := "http://" + upstream + "/v1/" + e.Label
				paths = append(paths, "/probe?"+url.Values{"module": {module}, "target": {target}}.Encode())
			}
			return paths
		},
	}, nil
}
