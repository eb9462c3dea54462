package targets_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/global-stability/global_stability_exporter/targets"
)

// defaults are the flags' defaults, as the exporter's flags give them.
func defaults() targets.Settings {
	return targets.Settings{
		Timeout: 10 * time.Second, CursorParam: "cursor", MaxPages: 10,
		MaxResponseBytes: 16 << 20, MaxDocumentBytes: 1 << 20,
		Collectors: map[string]bool{"pillars": true, "conflict": true, "briefings": true, "summary": true},
		HTTPCache:  true, SummaryRefresh: 15 * time.Minute, MaxLabelValues: 1000, GridDegrees: 5,
	}
}

// writeTargets writes a targets' file, and a key file beside it for each
// name in keys, and returns the file's path.
func writeTargets(t *testing.T, dir, yaml string, keys ...string) string {
	t.Helper()
	for _, k := range keys {
		if err := os.WriteFile(filepath.Join(dir, k), []byte("key-of-"+k+"-0123456789\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(dir, "targets.yml")
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestLoadFillsTheFlagsDefaults: what a target leaves out is the flag's;
// what it sets is its own; relative files are the file's directory's.
func TestLoadFillsTheFlagsDefaults(t *testing.T) {
	dir := t.TempDir()
	path := writeTargets(t, dir, `
targets:
  - name: prod
    api_url: https://api.example.com
    api_key_file: prod.key
  - name: staging
    api_url: https://staging.example.com/gsis
    api_key_file: staging.key
    timeout: 20s
    max_pages: 3
    page_size_param: limit
    page_size: 500
    max_response_bytes: 4MiB
    collectors: {briefings: false}
    http_cache: false
    cache_ttl: 30s
    grid_degrees: 10
    tls_config: {insecure_skip_verify: true}
`, "prod.key", "staging.key")
	named, err := targets.Load(path, defaults())
	if err != nil {
		t.Fatal(err)
	}
	if len(named) != 2 || named[0].Name != "prod" || named[1].Name != "staging" {
		t.Fatalf("targets %+v, want prod and staging in the file's order", named)
	}
	prod, staging := named[0].Settings, named[1].Settings
	want := defaults()
	want.APIURL, want.KeyFile, want.KeyFrom = "https://api.example.com", filepath.Join(dir, "prod.key"), "file "+filepath.Join(dir, "prod.key")
	if !targets.Same(prod, want) {
		t.Errorf("prod: %+v, want the flags' defaults with its URL and key file: %+v", prod, want)
	}
	if key, err := prod.Key(); err != nil || key != "key-of-prod.key-0123456789" {
		t.Errorf("prod's key: %q, %v", key, err)
	}
	if staging.Timeout != 20*time.Second || staging.MaxPages != 3 || staging.PageSizeParam != "limit" || staging.PageSize != 500 ||
		staging.MaxResponseBytes != 4<<20 || staging.HTTPCache || staging.CacheTTL != 30*time.Second || staging.GridDegrees != 10 ||
		!staging.TLS.InsecureSkipVerify || staging.MaxDocumentBytes != 1<<20 || staging.SummaryRefresh != 15*time.Minute {
		t.Errorf("staging: %+v, want its own settings and the defaults for the rest", staging)
	}
	if staging.Collectors["briefings"] || !staging.Collectors["conflict"] {
		t.Errorf("staging's collectors %v: want briefings off and the rest as the flags say", staging.Collectors)
	}
	for _, e := range staging.Endpoints() {
		if e.Group == "briefings" {
			t.Error("staging collects briefings")
		}
	}
}

// TestLoadReportsEveryProblemNamingTargetAndField: one load names every
// problem of the file, each with its target (index and name) and field.
func TestLoadReportsEveryProblemNamingTargetAndField(t *testing.T) {
	dir := t.TempDir()
	path := writeTargets(t, dir, `
targets:
  - name: prod
    api_url: https://api.example.com
    api_key_file: prod.key
  - name: prod
    api_url: api.example.com
    api_key_file: missing.key
  - api_url: https://x.example.com
    api_key_file: prod.key
  - name: "bad name"
    api_key_file: empty.key
    max_pages: 0
    page_size: 5
    collectors: {sumary: false}
    grid_degrees: 0.5
`, "prod.key")
	if err := os.WriteFile(filepath.Join(dir, "empty.key"), []byte("  \n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := targets.Load(path, defaults())
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{
		`targets[1] (prod): name "prod" is also targets[0]'s`,
		`targets[1] (prod): api_url api.example.com: not an absolute URL`, "did you mean https://api.example.com",
		"targets[1] (prod): api_key_file: API key file " + filepath.Join(dir, "missing.key") + ": no such file or directory",
		"targets[2]: name is required",
		`targets[3] (bad name): name "bad name": want letters, digits`,
		"targets[3] (bad name): api_url is required",
		"targets[3] (bad name): api_key_file: API key file " + filepath.Join(dir, "empty.key") + " is empty",
		"targets[3] (bad name): max_pages 0: want at least 1",
		"targets[3] (bad name): page_size_param and page_size 5 go together",
		`targets[3] (bad name): collectors: no collector "sumary"`,
		"targets[3] (bad name): grid_degrees 0.5: want a cell size from 1 to 90 degrees",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error lacks %q:\n%v", want, err)
		}
	}
	if n := len(err.(interface{ Unwrap() []error }).Unwrap()); n != 11 {
		t.Errorf("%d problems, want 11, each on its own:\n%v", n, err)
	}
}

// TestLoadRefusesWhatIsNotATargetsFile: a misspelt field, no targets, a
// file that is not YAML: each refused, saying what the file holds.
func TestLoadRefusesWhatIsNotATargetsFile(t *testing.T) {
	for name, yaml := range map[string]string{
		"a misspelt field":  "targets:\n  - name: a\n    api_urll: https://a.example.com\n    api_key_file: k\n",
		"no targets":        "targets: []\n",
		"empty":             "",
		"not YAML":          "targets: [\n",
		"a key in the file": "targets:\n  - name: a\n    api_url: https://a.example.com\n    api_key: secret\n",
	} {
		t.Run(name, func(t *testing.T) {
			_, err := targets.Load(writeTargets(t, t.TempDir(), yaml), defaults())
			if err == nil {
				t.Fatal("loaded")
			}
			if name == "a key in the file" && strings.Contains(err.Error(), "secret") {
				t.Errorf("the error shows the value: %v", err)
			}
			t.Log(err)
		})
	}
	if _, err := targets.Load(filepath.Join(t.TempDir(), "none.yml"), defaults()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing file: %v", err)
	}
}
