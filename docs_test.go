package main

import (
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/alecthomas/kingpin/v2"

	"github.com/global-stability/global_stability_exporter/endpoint"
	"github.com/global-stability/global_stability_exporter/targets"
)

var update = flag.Bool("update", false, "rewrite the generated parts of README.md")

// TestREADMEGenerated keeps the parts of the README that follow from the
// endpoint descriptions current: the collector flags and the series of the
// API's data. Rewrite them with `go test . -run TestREADMEGenerated -update`.
func TestREADMEGenerated(t *testing.T) {
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	for name, body := range map[string]string{"collectors": collectorsTable(), "data metrics": dataMetricsTable(), "endpoint labels": endpointLabels()} {
		re := regexp.MustCompile(`(?s)(<!-- begin generated: ` + regexp.QuoteMeta(name) + ` [^\n]*-->\n).*?(<!-- end generated: ` + regexp.QuoteMeta(name) + ` -->)`)
		m := re.FindStringSubmatchIndex(readme)
		if m == nil {
			t.Fatalf("README.md has no generated block %q", name)
		}
		current := readme[m[3]:m[4]]
		if current != body {
			if !*update {
				t.Errorf("README.md's %q block is not what the descriptions say; run go test . -run TestREADMEGenerated -update. Want:\n%s", name, body)
				continue
			}
			readme = readme[:m[3]] + body + readme[m[4]:]
		}
	}
	if *update {
		if err := os.WriteFile("README.md", []byte(readme), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// endpointLabels lists the values of the endpoint label, one per endpoint.
func endpointLabels() string {
	var b strings.Builder
	for _, e := range endpoint.All() {
		fmt.Fprintf(&b, "`%s` ", e.Label)
	}
	return strings.TrimSpace(b.String()) + "\n"
}

// groupPaths names the paths of a group's endpoints.
func groupPaths(group string) string {
	var paths []string
	for _, e := range endpoint.All() {
		if e.Group == group {
			paths = append(paths, "/v1/"+e.Label)
		}
	}
	return strings.Join(paths, ", ")
}

func collectorsTable() string {
	var b strings.Builder
	b.WriteString("| flag | environment variable | default | collects |\n|---|---|---|---|\n")
	for _, g := range targets.Groups() {
		fmt.Fprintf(&b, "| `--collector.%s` | `GLOBAL_STABILITY_COLLECTOR_%s` | on | `%s` |\n", g, strings.ToUpper(g), strings.ReplaceAll(groupPaths(g), ", ", "`, `"))
	}
	return b.String()
}

func dataMetricsTable() string {
	var b strings.Builder
	b.WriteString("| metric | labels | endpoint | help |\n|---|---|---|---|\n")
	seen := map[*endpoint.Metric]bool{}
	for _, e := range endpoint.All() {
		for _, m := range e.Metrics() {
			if seen[m] {
				continue
			}
			seen[m] = true
			var labels []string
			for _, l := range m.Labels {
				labels = append(labels, "`"+l+"`")
			}
			var from []string
			for _, o := range endpoint.All() {
				for _, om := range o.Metrics() {
					if om == m {
						from = append(from, "`"+o.Label+"`")
					}
				}
			}
			if len(from) > 2 {
				from = append(from[:1], "…")
			}
			fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", m.Name, strings.Join(labels, ", "), strings.Join(from, ", "), m.Help)
		}
	}
	return b.String()
}

// TestREADMEFlagsTable: every flag the exporter has is in the README's
// flags table (or the generated collectors table) with the environment
// variable it reads, and every flag there exists.
func TestREADMEFlagsTable(t *testing.T) {
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	app := kingpin.New("t", "")
	registerFlags(app)
	rows := regexp.MustCompile("(?m)^\\| `--([a-z0-9.-]+)`[^|]*\\| (`[A-Z_]+`)?").FindAllStringSubmatch(string(b), -1)
	inREADME := map[string]string{}
	for _, r := range rows {
		inREADME[r[1]] = strings.Trim(r[2], "`")
	}
	for _, f := range app.Model().Flags {
		if f.Name == "help" || f.Name == "version" || f.Hidden {
			continue
		}
		env, ok := inREADME[f.Name]
		if f.Name == "api.tls.key-file" { // shares its row with --api.tls.cert-file
			env, ok = f.Envar, strings.Contains(string(b), "`--api.tls.key-file`")
		}
		if !ok {
			t.Errorf("--%s is not in the README's flags table", f.Name)
		} else if env != f.Envar {
			t.Errorf("--%s: the README says %q, the flag reads %q", f.Name, env, f.Envar)
		}
		delete(inREADME, f.Name)
	}
	delete(inREADME, "version")
	for name := range inREADME {
		t.Errorf("the README lists --%s, which does not exist", name)
	}
}

// TestCitedTestsExist: every test, fuzz target or benchmark that the README,
// the runbooks, a comment or a test's message names exists, so that a
// guarantee never points at a test that was renamed or folded into
// another. The records of past runs (bench/MUTATION.md, bench/RESULTS.md,
// CHANGELOG.md) keep the names of their day.
func TestCitedTestsExist(t *testing.T) {
	defined := map[string]bool{}
	cited := map[string][]string{} // name → files citing it
	nameRE := regexp.MustCompile(`\b(?:Test|Fuzz|Benchmark)[A-Z][A-Za-z0-9_]*`)
	defRE := regexp.MustCompile(`(?m)^func ((?:Test|Fuzz|Benchmark)[A-Z][A-Za-z0-9_]*)\(`)
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != "." && (strings.HasPrefix(name, ".") || name == "testdata" || name == "dist") {
				return filepath.SkipDir
			}
			return nil
		}
		switch path {
		case "bench/MUTATION.md", "bench/RESULTS.md", "CHANGELOG.md":
			return nil
		}
		if ext := filepath.Ext(path); ext != ".go" && ext != ".md" && ext != ".yml" && ext != ".yaml" && ext != ".libsonnet" && ext != ".jsonnet" && ext != ".tpl" && ext != ".txt" {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range defRE.FindAllStringSubmatch(string(b), -1) {
			defined[m[1]] = true
		}
		for _, name := range nameRE.FindAllString(string(b), -1) {
			cited[name] = append(cited[name], path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for name, files := range cited {
		if !defined[name] && !defined[strings.TrimSuffix(name, "_")] {
			t.Errorf("%s is cited in %v but no such test exists", name, slices.Compact(files))
		}
	}
}

// TestREADMEScrapeConfigIsTheExample: the README's multi-target scrape
// configuration is examples/prometheus-targets.yml's, which the end-to-end
// test runs on a real Prometheus.
func TestREADMEScrapeConfigIsTheExample(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	example, err := os.ReadFile("examples/prometheus-targets.yml")
	if err != nil {
		t.Fatal(err)
	}
	block := regexp.MustCompile("(?s)```yaml\n(scrape_configs:\n  - job_name: global_stability .*?)```").FindSubmatch(readme)
	if block == nil {
		t.Fatal("the README has no multi-target scrape_configs block")
	}
	if !strings.Contains(string(example), string(block[1])) {
		t.Errorf("the README's scrape configuration is not examples/prometheus-targets.yml's:\n%s", block[1])
	}
}
