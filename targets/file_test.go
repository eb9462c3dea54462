// SPDX-License-Identifier: Apache-2.0

package targets_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/global-stability/global_stability_exporter/endpoint"
	"github.com/global-stability/global_stability_exporter/internal/redact"
	"github.com/global-stability/global_stability_exporter/targets"
)

// defaults are the flags' defaults, as the exporter's flags give them:
// every group of the endpoint descriptions collected.
func defaults() targets.Settings {
	on := map[string]bool{}
	for _, e := range endpoint.All() {
		if e.Group != "" {
			on[e.Group] = true
		}
	}
	return targets.Settings{
		Timeout: 10 * time.Second, CursorParam: "cursor", MaxPages: 10,
		MaxResponseBytes: 16 << 20, MaxDocumentBytes: 1 << 20,
		Collectors: on, HTTPCache: true, SummaryRefresh: 15 * time.Minute, MaxLabelValues: 1000, MaxSeries: endpoint.DefaultMaxSeries, GridDegrees: 5,
	}
}

// declared are the settings that every declared default gives, as the
// flags give them left at their defaults. A default that does not parse
// fails the test.
func declared(t *testing.T) targets.Settings {
	t.Helper()
	var s targets.Settings
	for _, st := range s.List() {
		if err := st.Value.Set(st.Default); st.Default != "" && err != nil {
			t.Fatalf("--%s: its default %q: %v", st.Flag, st.Default, err)
		}
	}
	return s
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

// readableDir is a temporary directory whose path a message may quote
// whole: t.TempDir's holds the test's name, a run of letters that
// redact.Readable withholds, as it would a key.
func readableDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "gse")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// TestLoadFillsTheFlagsDefaults: what a target leaves out is the flag's;
// what it sets is its own; relative files are the file's directory's.
func TestLoadFillsTheFlagsDefaults(t *testing.T) {
	dir := readableDir(t)
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
	dir := readableDir(t)
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
		`targets[1] (prod): api_url "api.example.com": want the API's base address: http:// or https:// and a host, such as https://api.example.com`,
		"targets[1] (prod): api_key_file: file " + filepath.Join(dir, "missing.key") + ": no such file or directory",
		"targets[2]: name is required",
		`targets[3] (bad name): name "bad name": want letters, digits`,
		"targets[3] (bad name): api_url is required",
		"targets[3] (bad name): api_key_file: file " + filepath.Join(dir, "empty.key") + " holds a key of 0 characters",
		`targets[3] (bad name): max_pages "0": want at least 1`,
		`targets[3] (bad name): page_size_param and page_size "5" go together`,
		`targets[3] (bad name): unknown field "collectors.sumary"`,
		`targets[3] (bad name): grid_degrees "0.5": want a cell size from 1 to 90 degrees`,
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
// file that is not YAML, a field beside the targets (a global section the
// file does not have): each refused, saying what the file holds.
func TestLoadRefusesWhatIsNotATargetsFile(t *testing.T) {
	for name, yaml := range map[string]string{
		"a misspelt field":  "targets:\n  - name: a\n    api_urll: https://a.example.com\n    api_key_file: k\n",
		"no targets":        "targets: []\n",
		"empty":             "",
		"not YAML":          "targets: [\n",
		"a key in the file": "targets:\n  - name: a\n    api_url: https://a.example.com\n    api_key: secret\n",
		// Every target of this one is good: only the field beside them is wrong.
		"a field beside targets": "targets:\n  - {name: a, api_url: \"https://a.example.com\", api_key_file: k}\nglobal:\n  timeout: 5s\n",
	} {
		t.Run(name, func(t *testing.T) {
			_, err := targets.Load(writeTargets(t, t.TempDir(), yaml, "k"), defaults())
			if err == nil {
				t.Fatal("loaded")
			}
			if name == "a key in the file" && strings.Contains(err.Error(), "secret") {
				t.Errorf("the error shows the value: %v", err)
			}
			if name == "a field beside targets" && !strings.Contains(err.Error(), "field global not found") {
				t.Errorf("the error does not name the field: %v", err)
			}
			t.Log(err)
		})
	}
	if _, err := targets.Load(filepath.Join(t.TempDir(), "none.yml"), defaults()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing file: %v", err)
	}
}

// TestLoadReadsOnlySmallRegularFiles: a key file or targets' file that is
// a FIFO, a device, a directory or too large is refused, naming target,
// field and path, without being read (a FIFO would block for ever).
func TestLoadReadsOnlySmallRegularFiles(t *testing.T) {
	dir := readableDir(t)
	fifo := filepath.Join(dir, "fifo.key")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no FIFO here: %v", err)
	}
	big := filepath.Join(dir, "big.key")
	if err := os.WriteFile(big, bytes.Repeat([]byte("k"), targets.MaxKeyBytes+1), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "short.key"), []byte("abc\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	path := writeTargets(t, dir, `
targets:
  - {name: fifo, api_url: "https://a.example.com", api_key_file: fifo.key}
  - {name: device, api_url: "https://a.example.com", api_key_file: /dev/zero}
  - {name: directory, api_url: "https://a.example.com", api_key_file: .}
  - {name: big, api_url: "https://a.example.com", api_key_file: big.key}
  - {name: short, api_url: "https://a.example.com", api_key_file: short.key}
`)
	_, err := targets.Load(path, defaults())
	for _, want := range []string{
		"targets[0] (fifo): api_key_file: file " + fifo + " is not a regular file",
		"targets[1] (device): api_key_file: file /dev/zero is not a regular file",
		"targets[2] (directory): api_key_file: file " + dir + " is not a regular file",
		fmt.Sprintf("targets[3] (big): api_key_file: file %s holds more than %d bytes", big, targets.MaxKeyBytes),
		fmt.Sprintf("targets[4] (short): api_key_file: file %s holds a key of 3 characters: want at least %d", filepath.Join(dir, "short.key"), redact.MinKeyLength),
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("the error lacks %q:\n%v", want, err)
		}
	}
	// The targets' file itself: a huge one is refused by its size.
	huge := filepath.Join(dir, "huge.yml")
	f, err := os.Create(huge)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(50 << 20); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, err := targets.Load(huge, defaults()); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("holds more than %d bytes", targets.MaxFileBytes)) {
		t.Errorf("a 50 MB targets' file: %v", err)
	}
	if _, err := targets.Load(fifo, defaults()); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("a FIFO as the targets' file: %v", err)
	}
}

// TestLoadReportsEveryBadValueAtOnce: a value that does not parse (a
// duration, a size, a number, a boolean), an unknown field, an unknown TLS
// field and a URL the flags would refuse: each named by target and field,
// all in one load, with what would be valid and no Go type.
func TestLoadReportsEveryBadValueAtOnce(t *testing.T) {
	dir := t.TempDir()
	path := writeTargets(t, dir, `
targets:
  - name: a
    api_url: "https://api.example.com/a path"
    api_key_file: a.key
    timeout: 10
    cache_ttl: soon
    max_response_bytes: 16MB!
    max_pages: many
    http_cache: maybe
    grid_degrees: [5]
    timout: 5s
    tls_config: {ca_fil: ca.pem}
  - name: b
    api_url: "https://api.example.com:"
    api_key_file: a.key
  - name: c
    api_url: "https://api.example.com:99999"
    api_key_file: a.key
`, "a.key")
	_, err := targets.Load(path, defaults())
	if err == nil {
		t.Fatal("loaded")
	}
	for _, want := range []string{
		`targets[0] (a): api_url "https://api.example.com/a path": want a base address without a query, a fragment or a space`,
		`targets[0] (a): timeout "10": want a duration with a unit, such as 10s`,
		`targets[0] (a): cache_ttl "soon": want a duration with a unit`,
		`targets[0] (a): max_response_bytes "16MB!": want a size with a unit, such as 16MiB`,
		`targets[0] (a): max_pages "many": want a whole number`,
		`targets[0] (a): http_cache "maybe": want true or false`,
		`targets[0] (a): grid_degrees: want a single value`,
		`targets[0] (a): unknown field "timout" (keys never go in this file`,
		`targets[0] (a): tls_config: unknown field "ca_fil"`,
		`targets[1] (b): api_url "https://api.example.com:": want a port from 1 to 65535 after the colon`,
		`targets[2] (c): api_url "https://api.example.com:99999": want a port from 1 to 65535 after the colon`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error lacks %q:\n%v", want, err)
		}
	}
	if n := len(err.(interface{ Unwrap() []error }).Unwrap()); n != 11 {
		t.Errorf("%d problems, want 11, each on its own:\n%v", n, err)
	}
	for _, goType := range []string{"time.Duration", "units.", "config.", "int", "bool", "float64", "string"} {
		if strings.Contains(err.Error(), goType) {
			t.Errorf("the error names the Go type %q:\n%v", goType, err)
		}
	}
}

// TestTLSPathsAreRelativeToWhereTheyAreWritten: a relative path of the
// targets' file's tls_config is its directory's; the flags' TLS files,
// which a target of the file inherits, stay the working directory's.
func TestTLSPathsAreRelativeToWhereTheyAreWritten(t *testing.T) {
	dir := t.TempDir()
	path := writeTargets(t, dir, `
targets:
  - {name: inherits, api_url: "https://a.example.com", api_key_file: a.key}
  - {name: own, api_url: "https://a.example.com", api_key_file: a.key, tls_config: {ca_file: own-ca.pem}}
`, "a.key")
	d := defaults()
	d.TLS.CAFile = "flags-ca.pem"
	named, err := targets.Load(path, d)
	if err != nil {
		t.Fatal(err)
	}
	if got := named[0].Settings.TLS.CAFile; got != "flags-ca.pem" {
		t.Errorf("a target inheriting --api.tls.ca-file=flags-ca.pem reads %q", got)
	}
	if got := named[1].Settings.TLS.CAFile; got != filepath.Join(dir, "own-ca.pem") {
		t.Errorf("a target's own ca_file reads %q, want it in the file's directory", got)
	}
}

// TestAnAPIURLsPasswordIsNeverShown: an api_url that holds a user and
// password and is refused (written without a scheme, with a query, a
// space, another scheme) is named in the error without the password,
// however it fails to parse.
func TestAnAPIURLsPasswordIsNeverShown(t *testing.T) {
	const password = "hunter2-0123456789"
	for _, raw := range []string{
		"admin:" + password + "@api.example.com",
		"admin:" + password + "@api.example.com:8443/gsis",
		"//admin:" + password + "@api.example.com",
		"https://admin:" + password + "@api.example.com/?v=1",
		"ftp://admin:" + password + "@api.example.com",
		"https://admin:" + password + "@api.example.com/a path",
		"https://admin:" + password + " @api.example.com",
	} {
		t.Run(raw, func(t *testing.T) {
			path := writeTargets(t, t.TempDir(), fmt.Sprintf("targets:\n  - {name: a, api_url: %q, api_key_file: a.key}\n", raw), "a.key")
			_, err := targets.Load(path, defaults())
			if err == nil || !strings.Contains(err.Error(), "targets[0] (a): api_url ") {
				t.Fatalf("loaded, or the error does not name api_url: %v", err)
			}
			if strings.Contains(err.Error(), password) || strings.Contains(err.Error(), password[:8]) {
				t.Errorf("the error shows the password: %v", err)
			}
		})
	}
}

// TestLoadRefusesAFieldGivenTwice: YAML lets a mapping repeat a key, the
// last one winning. A target that gives a field twice, or a file that
// gives targets: twice (the first list lost whole), is refused, naming
// the field and the target, rather than read as one of them.
func TestLoadRefusesAFieldGivenTwice(t *testing.T) {
	for name, tc := range map[string]struct{ yaml, want string }{
		"a target's field": {"targets:\n  - name: a\n    api_url: https://a.example.com\n    api_key_file: a.key\n    api_url: https://b.example.com\n",
			`targets[0]: line 5: mapping key "api_url" already defined at line 3`},
		"targets": {"targets:\n  - {name: a, api_url: \"https://a.example.com\", api_key_file: a.key}\ntargets:\n  - {name: b, api_url: \"https://b.example.com\", api_key_file: a.key}\n",
			`not a targets' file: line 3: mapping key "targets" already defined at line 1`},
	} {
		t.Run(name, func(t *testing.T) {
			named, err := targets.Load(writeTargets(t, t.TempDir(), tc.yaml, "a.key"), defaults())
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("loaded %+v, %v; want an error saying %q", named, err, tc.want)
			}
		})
	}
}

// TestATLSPairIsNamedAsTheFileWritesIt: a client certificate without its
// key, in a file's tls_config, is one problem named by the file's field;
// an inline certificate with its key file is a pair, not a problem.
func TestATLSPairIsNamedAsTheFileWritesIt(t *testing.T) {
	dir := t.TempDir()
	path := writeTargets(t, dir, `
targets:
  - {name: files, api_url: "https://a.example.com", api_key_file: a.key, tls_config: {cert_file: c.pem}}
  - {name: inline, api_url: "https://a.example.com", api_key_file: a.key, tls_config: {cert: "-----BEGIN CERTIFICATE-----", key_file: k.pem}}
`, "a.key")
	_, err := targets.Load(path, defaults())
	if want := "targets[0] (files): tls_config: exactly one of key or key_file must be configured"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("the error lacks %q:\n%v", want, err)
	}
	if n := len(err.(interface{ Unwrap() []error }).Unwrap()); n != 1 || strings.Contains(err.Error(), "targets[1]") {
		t.Errorf("%d problems, want 1: an inline certificate with its key_file is a pair:\n%v", n, err)
	}
}

// TestTheFileIsReadAsWritten: a value is its text as written, whatever
// YAML would make of it (020 is twenty, "0" is false as 0 is, ~ and null
// are those words); merge keys, anchors and aliases work as YAML defines them, a
// merged key never overriding one the target writes; a tag YAML does not
// define, a key given twice in a map and a second document are refused,
// each naming its target and field. No message shows Go's syntax.
func TestTheFileIsReadAsWritten(t *testing.T) {
	const base = "targets:\n  - name: a\n    api_url: https://a.example.com\n    api_key_file: a.key\n"
	for name, tc := range map[string]struct{ yaml, want string }{
		"a merged value that cannot work": {base + "    <<: {max_pages: 0}\n", `targets[0] (a): max_pages "0": want at least 1`},
		"an alias of a value that cannot work": {"targets:\n  - {name: x, api_url: https://x.example.com, api_key_file: a.key, timeout: &t 1d}\n" + base[len("targets:\n"):] + "    max_pages: *t\n",
			`targets[1] (a): max_pages "1d": want a whole number`},
		"an unknown tag":       {base + "    timeout: !vault x\n", `targets[0] (a): timeout "x": a tag (!vault)`},
		"a tag in a map":       {base + "    tls_config: {ca_file: !vault x}\n", "targets[0] (a): tls_config: a tag (!vault)"},
		"a global tag":         {base + "    timeout: !<tag:example.com,2000:duration> 5s\n", `targets[0] (a): timeout "5s": a tag (tag:example.com,2000:duration)`},
		"a tagged name":        {strings.Replace(base, "name: a", "name: !vault a", 1), `targets[0]: name "a": a tag (!vault)`},
		"an alias of nothing":  {"targets:\n  - name: a\n    tls_config: {server_name: &k \"\"}\n    api_url: https://a.example.com\n    api_key_file: *k\n", "targets[0] (a): api_key_file is required"},
		"an alias of a name":   {"targets:\n  - {name: &n a, api_url: https://a.example.com, api_key_file: a.key}\n  - {name: *n, api_url: https://b.example.com, api_key_file: a.key}\n", `targets[1] (a): name "a" is also targets[0]'s`},
		"a key twice in a map": {base + "    collectors: {briefings: false, briefings: true}\n", `targets[0] (a): collectors: line 5: mapping key "briefings" already defined at line 5`},
		"a second document":    {base + "---\ntargets: []\n", "not a targets' file: a second YAML document"},
		"~":                    {base + "    timeout: ~\n", `targets[0] (a): timeout "~": want a duration with a unit`},
		"null":                 {base + "    max_pages: null\n", `targets[0] (a): max_pages "null": want a whole number`},
		"nothing":              {base + "    http_cache:\n", `targets[0] (a): http_cache: want true or false`},
		"a hexadecimal number": {base + "    max_label_values: 0x10\n", `targets[0] (a): max_label_values "0x10": want a whole number`},
		"an exponent":          {base + "    page_size: 1e3\n", `targets[0] (a): page_size "1e3": want a whole number`},
		"YAML 1.1's no":        {base + "    http_cache: no\n", `targets[0] (a): http_cache "no": want true or false`},
		"a null collector":     {base + "    collectors: {briefings: ~}\n", `targets[0] (a): collectors.briefings "~": want true or false`},
		"a dotted field":       {base + "    collectors.briefings: false\n", `targets[0] (a): unknown field "collectors.briefings"`},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := targets.Load(writeTargets(t, t.TempDir(), tc.yaml, "a.key"), defaults())
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("the error lacks %q:\n%v", tc.want, err)
			}
			if strings.Contains(err.Error(), "<nil>") || strings.Contains(err.Error(), "%!") || strings.Contains(err.Error(), "yaml.Node") {
				t.Errorf("the error shows Go's syntax:\n%v", err)
			}
		})
	}
	named, err := targets.Load(writeTargets(t, t.TempDir(), "targets:\n  - &a {name: a, api_url: https://a.example.com, api_key_file: a.key, timeout: 20s, cache_ttl: 1m, http_cache: &off false}\n"+
		"  - <<: *a\n    name: b\n    cache_ttl: 2m\n    page_size_param: limit\n    page_size: 020\n    max_label_values: 010\n    http_cache: \"0\"\n    collectors: {briefings: f, summary: *off}\n    tls_config: {server_name: !!str 0x10}\n", "a.key"), defaults())
	if err != nil {
		t.Fatal(err)
	}
	b := named[1].Settings
	if summary, set := b.Collectors["summary"]; b.Timeout != 20*time.Second || b.CacheTTL != 2*time.Minute || b.PageSize != 20 || b.MaxLabelValues != 10 || b.HTTPCache || b.Collectors["briefings"] || summary || !set || b.TLS.ServerName != "0x10" {
		t.Errorf("b: timeout %v (merged), cache_ttl %v (its own), page_size %d, max_label_values %d, http_cache %v, briefings %v, summary %v (set %v, an alias in a map), server_name %q: want 20s, 2m, 20 and 10 (as their flags read 020 and 010), false, false, false (set), 0x10",
			b.Timeout, b.CacheTTL, b.PageSize, b.MaxLabelValues, b.HTTPCache, b.Collectors["briefings"], summary, set, b.TLS.ServerName)
	}
}
