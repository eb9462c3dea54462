// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bufio"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/alecthomas/kingpin/v2"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/global-stability/global_stability_exporter/endpoint"
	"github.com/global-stability/global_stability_exporter/targets"
)

var update = flag.Bool("update", false, "rewrite the generated blocks of the docs")

// generated are the blocks of the docs that follow from the endpoint
// descriptions, by file: each block's name and its body.
var generated = map[string]map[string]func() string{
	"docs/configuration.md": {"settings": settingsTable},
	"docs/metrics.md":       {"endpoint labels": endpointLabels, "data metrics": dataMetricsTable},
	"docs/api.md":           {"label values": labelValuesTable, "scores": scoreFields},
}

// TestDocsGenerated keeps the parts of the docs that follow from the
// endpoint descriptions current: the collector flags, the body limits, the
// endpoint label values and the series of the API's data. Rewrite them with
// `go test . -run TestDocsGenerated -update`.
func TestDocsGenerated(t *testing.T) {
	for file, blocks := range generated {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		doc := string(b)
		for name, body := range blocks {
			re := regexp.MustCompile(`(?s)(<!-- begin generated: ` + regexp.QuoteMeta(name) + ` [^\n]*-->\n).*?(<!-- end generated: ` + regexp.QuoteMeta(name) + ` -->)`)
			m := re.FindStringSubmatchIndex(doc)
			if m == nil {
				t.Errorf("%s has no generated block %q", file, name)
				continue
			}
			want := body()
			if current := doc[m[3]:m[4]]; current != want {
				if !*update {
					t.Errorf("%s's %q block is not what the descriptions say; run go test . -run TestDocsGenerated -update. Want:\n%s", file, name, want)
					continue
				}
				doc = doc[:m[3]] + want + doc[m[4]:]
			}
		}
		if *update {
			if err := os.WriteFile(file, []byte(doc), 0o644); err != nil {
				t.Fatal(err)
			}
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

// settingsTable lists every setting of a target, from its declaration
// (targets.Settings.List): its flag and variable, its field in the
// targets' file, its default and help.
func settingsTable() string {
	var b strings.Builder
	b.WriteString("| flag | environment variable | field | default | meaning |\n|---|---|---|---|---|\n")
	var s targets.Settings
	code := func(v string) string {
		if v == "" {
			return ""
		}
		return "`" + v + "`"
	}
	for _, st := range s.List() {
		flag, env := "", ""
		if st.Flag != "" {
			flag, env = "--"+st.Flag, envar(st.Flag)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", code(flag), code(env), code(st.Field), code(st.Default), st.Help)
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

// path is an endpoint's path as the docs write it: its parameter, a
// drilldown's pillar, as {pillar}.
func path(e *endpoint.Endpoint) string {
	p := "/v1/" + e.Label
	for k, v := range e.Labels {
		p = strings.Replace(p, "/"+v, "/{"+k+"}", 1)
	}
	return "`" + p + "`"
}

// labelValuesTable lists the labels whose values come from the API's data:
// a document's field exported as a label, and the labels of a list's
// capped folds, with what the cap keeps.
func labelValuesTable() string {
	var rows []string
	row := func(labels, series, from, kept string) {
		if r := fmt.Sprintf("| %s | %s | %s | %s |\n", labels, series, from, kept); !slices.Contains(rows, r) {
			rows = append(rows, r)
		}
	}
	code := func(names ...string) string { return "`" + strings.Join(names, "`, `") + "`" }
	for _, e := range endpoint.All() {
		for _, f := range e.Fields {
			if f.AsLabel != "" {
				row(code(f.AsLabel), code(f.Metric.Name), fmt.Sprintf("`%s` of %s", f.Name, path(e)), "not capped: one value")
			}
		}
		if e.List == nil {
			continue
		}
		item := func(fields ...string) string {
			return fmt.Sprintf("`%s` of each of `%s` of %s", strings.Join(fields, "` and `"), e.List.Name, path(e))
		}
		for _, fold := range e.List.Folds {
			switch f := fold.(type) {
			case endpoint.CountBy:
				row(code(f.Metric.Labels[0]), code(f.Metric.Name), item(f.Field), "the busiest names (counted by name, below)")
			case endpoint.FirstKeys:
				row(code(f.Metric.Labels[len(f.Metric.Labels)-1]), code(f.Metric.Name), item(f.Key), "the first keys in the API's order")
			case endpoint.Cells:
				row(code("lat", "lon"), code(f.Count.Name, f.Max.Name), "the centre of the grid cell of "+item(f.Lat, f.Lon), "the busiest cells")
			}
		}
	}
	for _, e := range endpoint.All() {
		for _, m := range e.Metrics() {
			if m.Capped && !slices.ContainsFunc(rows, func(r string) bool { return strings.Contains(r, "`"+m.Name+"`") }) {
				panic("labelValuesTable does not know the fold of " + m.Name + ": teach it")
			}
		}
	}
	return "| label | series | taken from | kept by --collector.max-label-values, per endpoint |\n|---|---|---|---|\n" + strings.Join(rows, "")
}

// scoreFields lists the values judged on the spec's 0–100 scale: those
// whose rule takes 0 and 100 and refuses just outside them.
func scoreFields() string {
	onScale := func(f endpoint.Field) bool {
		_, bad0 := f.Rule(jsontext.Value("0"), &endpoint.Config{})
		_, bad100 := f.Rule(jsontext.Value("100"), &endpoint.Config{})
		_, badBelow := f.Rule(jsontext.Value("-0.5"), &endpoint.Config{})
		_, badAbove := f.Rule(jsontext.Value("100.5"), &endpoint.Config{})
		return bad0 == "" && bad100 == "" && badBelow != "" && badAbove != ""
	}
	var out []string
	for _, e := range endpoint.All() {
		for _, f := range e.Fields {
			if object, _, member := strings.Cut(f.Name, "."); member && onScale(f) {
				out = append(out, fmt.Sprintf("each member of `%s` of %s", object, path(e)))
			} else if onScale(f) {
				out = append(out, fmt.Sprintf("`%s` of %s", f.Name, path(e)))
			}
		}
		if e.List != nil {
			for _, f := range e.List.Item {
				if onScale(f) {
					out = append(out, fmt.Sprintf("`%s` of each of `%s` of %s", f.Name, e.List.Name, path(e)))
				}
			}
		}
	}
	return "- " + strings.Join(slices.Compact(out), "\n- ") + "\n"
}

// flagsDoc holds the flags table and the generated collectors table.
const flagsDoc = "docs/configuration.md"

// TestDocsFlagsTable: every flag the exporter has is in the flags table of
// docs/configuration.md (or the generated collectors table) with the
// environment variable it reads, and every flag there exists.
func TestDocsFlagsTable(t *testing.T) {
	b, err := os.ReadFile(flagsDoc)
	if err != nil {
		t.Fatal(err)
	}
	app := kingpin.New("t", "")
	registerFlags(app)
	rows := regexp.MustCompile("(?m)^\\| `--([a-z0-9.-]+)`[^|]*\\| (`[A-Z_]+`)?").FindAllStringSubmatch(string(b), -1)
	inDoc := map[string]string{}
	for _, r := range rows {
		inDoc[r[1]] = strings.Trim(r[2], "`")
	}
	for _, f := range app.Model().Flags {
		if f.Name == "help" || f.Name == "version" || f.Hidden {
			continue
		}
		env, ok := inDoc[f.Name]
		if f.Name == "api.tls.key-file" { // shares its row with --api.tls.cert-file
			env, ok = f.Envar, strings.Contains(string(b), "`--api.tls.key-file`")
		}
		if !ok {
			t.Errorf("--%s is not in %s's flags table", f.Name, flagsDoc)
		} else if env != f.Envar {
			t.Errorf("--%s: %s says %q, the flag reads %q", f.Name, flagsDoc, env, f.Envar)
		}
		delete(inDoc, f.Name)
	}
	delete(inDoc, "version")
	for name := range inDoc {
		t.Errorf("%s lists --%s, which does not exist", flagsDoc, name)
	}
}

// TestCitedTestsExist: every test, fuzz target or benchmark that the README,
// a document under docs/, a comment or a test's message names exists, so
// that a guarantee never points at a test that was renamed or folded into
// another. The records of past runs (bench/RESULTS.md, CHANGELOG.md) keep
// the names of their day.
func TestCitedTestsExist(t *testing.T) {
	defined := map[string]bool{}
	cited := map[string][]string{} // name → files citing it
	nameRE := regexp.MustCompile(`\b(?:Test|Fuzz|Benchmark)[A-Z][A-Za-z0-9_]*`)
	defRE := regexp.MustCompile(`(?m)^func ((?:Test|Fuzz|Benchmark)[A-Z][A-Za-z0-9_]*)\(`)
	read := map[string]bool{}
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
		case "bench/RESULTS.md", "CHANGELOG.md":
			return nil
		}
		if ext := filepath.Ext(path); ext != ".go" && ext != ".md" && ext != ".yml" && ext != ".yaml" && ext != ".libsonnet" && ext != ".jsonnet" && ext != ".tpl" && ext != ".txt" {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		read[path] = true
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
	for _, doc := range docFiles(t) {
		if !read[doc] {
			t.Errorf("%s was not searched for cited tests", doc)
		}
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

// docFiles are the README and every document under docs/.
func docFiles(t *testing.T) []string {
	t.Helper()
	docs, err := filepath.Glob("docs/*.md")
	if err != nil || len(docs) == 0 {
		t.Fatalf("no docs/*.md (%v)", err)
	}
	return append([]string{"README.md"}, docs...)
}

var (
	fenceRE   = regexp.MustCompile("(?ms)^```.*?^```")
	codeRE    = regexp.MustCompile("`[^`\n]*`")
	linkRE    = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	headingRE = regexp.MustCompile(`(?m)^#{1,6} +(.+?) *$`)
	slugDrop  = regexp.MustCompile(`[^\p{L}\p{M}\p{N}_ -]`)
)

// anchors are the fragments GitHub gives a Markdown file's headings.
func anchors(doc string) map[string]bool {
	out := map[string]bool{}
	for _, m := range headingRE.FindAllStringSubmatch(fenceRE.ReplaceAllString(doc, ""), -1) {
		slug := strings.ReplaceAll(slugDrop.ReplaceAllString(strings.ToLower(m[1]), ""), " ", "-")
		a := slug
		for i := 1; out[a]; i++ {
			a = fmt.Sprintf("%s-%d", slug, i)
		}
		out[a] = true
	}
	return out
}

// TestDocsLinksResolve: every relative link of the README and of docs/
// names a file that exists, and, into a Markdown file, a heading it has.
func TestDocsLinksResolve(t *testing.T) {
	for _, doc := range docFiles(t) {
		b, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		text := codeRE.ReplaceAllString(fenceRE.ReplaceAllString(string(b), ""), "")
		for _, m := range linkRE.FindAllStringSubmatch(text, -1) {
			link := m[1]
			if strings.Contains(link, "://") || strings.HasPrefix(link, "mailto:") {
				continue
			}
			path, fragment, _ := strings.Cut(link, "#")
			target := doc
			if path != "" {
				target = filepath.Join(filepath.Dir(doc), path)
			}
			if _, err := os.Stat(target); err != nil {
				t.Errorf("%s links to %s, which does not exist", doc, link)
				continue
			}
			if fragment == "" || filepath.Ext(target) != ".md" {
				continue
			}
			tb, err := os.ReadFile(target)
			if err != nil {
				t.Fatal(err)
			}
			if !anchors(string(tb))[fragment] {
				t.Errorf("%s links to %s, but %s has no heading #%s", doc, link, target, fragment)
			}
		}
	}
}

// tool is a command the test runs: missing, the test skips, but under CI,
// which installs prometheus, alertmanager and jsonnet, it fails.
func tool(t *testing.T, name string) string {
	t.Helper()
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	if gopath, err := exec.Command("go", "env", "GOPATH").Output(); err == nil {
		if p := filepath.Join(strings.TrimSpace(string(gopath)), "bin", name); fileExists(p) {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("%s not found, and CI must not skip this test", name)
	}
	t.Skipf("%s not found", name)
	return ""
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// TestDocsExamplesLoadAsPrinted: every configuration the README and docs/
// print, and every example file, loads as printed in what it is for:
// Prometheus' configuration in promtool, Alertmanager's in amtool, a
// targets' file in the exporter's own loader (whose only complaint may be
// that the key and CA files it names are not on this machine). And every
// command that renders the mixin runs as printed, in a shell, and renders
// rules promtool accepts.
func TestDocsExamplesLoadAsPrinted(t *testing.T) {
	blocks := map[string]string{} // where → text
	for _, doc := range docFiles(t) {
		b, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		for i, m := range regexp.MustCompile("(?ms)^```(\\w*)\n(.*?)^```").FindAllStringSubmatch(string(b), -1) {
			blocks[fmt.Sprintf("%s, block %d (%s)", doc, i+1, m[1])] = m[2]
		}
	}
	for _, f := range []string{"examples/prometheus.yml", "examples/prometheus-targets.yml", "examples/targets.yml", "examples/alertmanager/alertmanager.yml"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		blocks[f] = string(b)
	}
	render := regexp.MustCompile(`(?m)^("\$\(go env GOPATH\)/bin/jsonnet" .* mixin/render\.jsonnet)$`)
	kinds := map[string]int{}
	for where, text := range blocks {
		dir := t.TempDir()
		file := filepath.Join(dir, "config.yml")
		if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		var out []byte
		var err error
		switch {
		case strings.Contains(text, "\nscrape_configs:") || strings.HasPrefix(text, "scrape_configs:"):
			kinds["Prometheus"]++
			out, err = exec.Command(tool(t, "promtool"), "check", "config", "--syntax-only", file).CombinedOutput()
		case strings.Contains(text, "\nreceivers:"):
			kinds["Alertmanager"]++
			out, err = exec.Command(tool(t, "amtool"), "check-config", file).CombinedOutput()
		case regexp.MustCompile(`(?m)^targets:`).MatchString(text):
			kinds["targets' file"]++
			_, err = targets.Load(file, flagDefaults(t))
			for _, problem := range strings.Split(fmt.Sprint(err), "\n") {
				if err != nil && !strings.Contains(problem, "no such file or directory") {
					t.Errorf("%s: the exporter refuses it: %s\n%s", where, problem, text)
				}
			}
			continue
		case render.MatchString(text):
			for _, command := range render.FindAllString(text, -1) {
				kinds["mixin render"]++
				out, err = renderAsPrinted(t, dir, command)
				if err == nil {
					out, err = exec.Command(tool(t, "promtool"), "check", "rules", filepath.Join(dir, "out", "alerts", "global_stability.rules.yml")).CombinedOutput()
				}
				if err != nil {
					t.Errorf("%s: %s: %v\n%s", where, command, err, out)
				}
			}
			continue
		default:
			continue
		}
		if err != nil {
			t.Errorf("%s does not load as printed: %v\n%s\n%s", where, err, out, text)
		}
	}
	t.Logf("loaded as printed: %v", kinds)
	for _, kind := range []string{"Prometheus", "Alertmanager", "targets' file", "mixin render"} {
		if kinds[kind] == 0 {
			t.Errorf("no %s configuration or command found: is the test still reading the docs?", kind)
		}
	}
}

// flagDefaults are the settings the flags give when left as they are.
func flagDefaults(t *testing.T) targets.Settings {
	t.Helper()
	var s targets.Settings
	for _, st := range s.List() {
		if err := st.Value.Set(st.Default); st.Default != "" && err != nil {
			t.Fatalf("%s: its default %q: %v", st.Field, st.Default, err)
		}
	}
	return s
}

// renderAsPrinted runs a printed render command in a shell, in dir, where
// mixin/ is the repository's.
func renderAsPrinted(t *testing.T, dir, command string) ([]byte, error) {
	t.Helper()
	tool(t, "jsonnet")
	mixin, err := filepath.Abs("mixin")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(mixin, filepath.Join(dir, "mixin")); err != nil && !os.IsExist(err) {
		t.Fatal(err)
	}
	cmd := exec.Command("sh", "-c", command)
	cmd.Dir = dir
	return cmd.CombinedOutput()
}

// TestREADMEOneAccountRunsAsPrinted runs the README's commands for one
// account as printed, in a shell, with the tests' build for `make build`,
// a home and a key of the test's, and the listen address from its
// variable: the exporter starts on the README's URL and key file, made
// readable by its owner only.
func TestREADMEOneAccountRunsAsPrinted(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(readme), "\n## One account\n")
	m := regexp.MustCompile("(?s)```sh\n(make build[^\n]*\n)(.*?)```").FindStringSubmatch(section)
	if m == nil {
		t.Fatal("the README's one-account section has no commands starting with make build")
	}
	// A short home: a path part as long and mixed as t.TempDir's
	// (the test's name and digits) is withheld from the log as a possible key.
	dir, err := os.MkdirTemp("", "home")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	if err := os.Symlink(binary, filepath.Join(dir, "global_stability_exporter")); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sh", "-c", m[2])
	cmd.Dir, cmd.SysProcAttr = dir, &syscall.SysProcAttr{Setpgid: true} // the exporter is the shell's child
	cmd.Env = append(os.Environ(), "HOME="+dir, "YOUR_KEY="+secretKey, "GLOBAL_STABILITY_WEB_LISTEN_ADDRESS=127.0.0.1:0")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); _ = cmd.Wait() })
	keyFile := filepath.Join(dir, ".config", "global_stability_exporter", "api-key")
	var logs strings.Builder
	for lines := bufio.NewScanner(out); !strings.Contains(logs.String(), `msg="Listening on"`); {
		if !lines.Scan() {
			t.Fatalf("the exporter ended before it listened:\n%s", logs.String())
		}
		logs.WriteString(lines.Text() + "\n")
	}
	url := regexp.MustCompile(`--api\.url=(\S+)`).FindStringSubmatch(m[2])
	if url == nil {
		t.Fatalf("the README's command names no --api.url:\n%s", m[2])
	}
	if want := `api_url=` + url[1] + ` key_from="file ` + keyFile + `"`; !strings.Contains(logs.String(), want) {
		t.Errorf("the exporter does not scrape with the README's settings (%s):\n%s", want, logs.String())
	}
	if fi, err := os.Stat(keyFile); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the key file the README writes: %v, %v; want mode 0600", fi, err)
	}
}
