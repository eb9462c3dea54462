// Package mixin renders the monitoring mixin (the jsonnet in this
// directory) in-process, with go-jsonnet: the tests use it to prove that the
// committed dashboards and rules are what the sources render, and to render
// them with other configs. The Makefile's mixin target renders the same
// files with go-jsonnet's command.
package mixin

import (
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"path"

	"github.com/google/go-jsonnet"
)

//go:embed *.jsonnet *.libsonnet dashboards/*.libsonnet
var sources embed.FS

// Render evaluates render.jsonnet with config (jsonnet code for an object
// whose fields override config.libsonnet's, "{}" for none) and returns each
// file's content by its path from the repository's root.
func Render(config string) (map[string]string, error) {
	vm := jsonnet.MakeVM()
	vm.Importer(&embedImporter{cache: map[string]jsonnet.Contents{}})
	vm.StringOutput = true
	vm.TLACode("config", config)
	main, err := sources.ReadFile("render.jsonnet")
	if err != nil {
		return nil, fmt.Errorf("read the mixin's sources: %w", err)
	}
	files, err := vm.EvaluateAnonymousSnippetMulti("render.jsonnet", string(main))
	if err != nil {
		return nil, fmt.Errorf("render the mixin: %w", err)
	}
	return files, nil
}

// Alert is an alerting rule, as the mixin renders it.
type Alert struct {
	Alert       string
	Expr        string
	Labels      map[string]string
	Annotations map[string]string
}

// Alerts returns the alerting rules of the mixin with its default config.
func Alerts() ([]Alert, error) {
	var alerts []Alert
	err := evaluate(`[r for g in (import 'mixin.libsonnet').prometheusAlerts.groups for r in g.rules if std.objectHas(r, 'alert')]`, &alerts)
	return alerts, err
}

// RuleNames returns the name of every rule, recording and alerting, that
// the rendered rules file holds, in its order.
func RuleNames() ([]string, error) {
	var names []string
	err := evaluate(`local m = import 'mixin.libsonnet';
[if std.objectHas(r, 'alert') then r.alert else r.record for g in m.prometheusRules.groups + m.prometheusAlerts.groups for r in g.rules]`, &names)
	return names, err
}

// Pillars returns the pillars the mixin's default config expects the
// exporter to report, in its order.
func Pillars() ([]string, error) {
	var pillars []string
	err := evaluate(`(import 'mixin.libsonnet')._config.pillars`, &pillars)
	return pillars, err
}

// Config returns the mixin's default config (config.libsonnet), field by
// field, as JSON decodes it.
func Config() (map[string]any, error) {
	var c map[string]any
	err := evaluate(`(import 'mixin.libsonnet')._config`, &c)
	return c, err
}

// evaluate evaluates snippet against the embedded sources into v.
func evaluate(snippet string, v any) error {
	vm := jsonnet.MakeVM()
	vm.Importer(&embedImporter{cache: map[string]jsonnet.Contents{}})
	out, err := vm.EvaluateAnonymousSnippet("snippet.jsonnet", snippet)
	if err != nil {
		return fmt.Errorf("evaluate the mixin: %w", err)
	}
	if err := json.Unmarshal([]byte(out), v); err != nil {
		return fmt.Errorf("read the mixin: %w", err)
	}
	return nil
}

// embedImporter resolves an import relative to the importing file, as the
// jsonnet command does on disk, within the embedded sources. go-jsonnet
// wants the same Contents each time a file is imported.
type embedImporter struct {
	cache map[string]jsonnet.Contents
}

func (im *embedImporter) Import(importedFrom, importedPath string) (jsonnet.Contents, string, error) {
	found := path.Join(path.Dir(importedFrom), importedPath)
	if c, ok := im.cache[found]; ok {
		return c, found, nil
	}
	b, err := fs.ReadFile(sources, found)
	if err != nil {
		return jsonnet.Contents{}, "", fmt.Errorf("import %q from %q: %w", importedPath, importedFrom, err)
	}
	c := jsonnet.MakeContents(string(b))
	im.cache[found] = c
	return c, found, nil
}
