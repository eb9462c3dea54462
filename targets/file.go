// SPDX-License-Identifier: Apache-2.0

package targets

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	commonconfig "github.com/prometheus/common/config"
	"go.yaml.in/yaml/v2"

	"github.com/global-stability/global_stability_exporter/internal/redact"
)

// Limits of what the exporter reads from files, each refused whole past it
// rather than read.
const (
	maxTargets      = 1000    // each costs a client, a store and its series
	MaxFileBytes    = 4 << 20 // the targets' file
	MaxKeyBytes     = 4 << 10 // a key file
	fileReadTimeout = 10 * time.Second
)

// KeyEnv is where the API key may come from instead of --api.key-file,
// never a flag: flag values show up in ps, /proc and shell history.
const KeyEnv = "GLOBAL_STABILITY_API_KEY"

// namePattern is what a target's name may be: it is a query parameter's
// value (/probe?target=NAME) and, through relabeling, a label value.
var namePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$`)

// Named is a target's name with its settings.
type Named struct {
	Name     string
	Settings Settings
}

// Load reads and checks the targets' file at path: every target's
// settings, decoded into a copy of defaults (the flags'), in the file's
// order, or every problem at once, each naming its target and field. Paths
// in the file are relative to its directory, as in Prometheus'.
func Load(path string, defaults Settings) ([]Named, error) {
	b, err := readFile(path, MaxFileBytes)
	if err != nil {
		return nil, err
	}
	notTargets := func(why any) error {
		return fmt.Errorf("not a targets' file: %v (the file holds `targets:`, a list of targets with name, api_url and api_key_file)", why)
	}
	var top yaml.MapSlice // nested maps decode as MapSlices too, in the file's order
	if err := yaml.Unmarshal(b, &top); err != nil {
		return nil, notTargets(withoutGoTypes(err))
	}
	var list []any
	for i, kv := range top {
		switch {
		case kv.Key != "targets":
			return nil, notTargets(fmt.Sprintf("unknown field %q%s", fmt.Sprint(kv.Key), nearest(fmt.Sprint(kv.Key), []string{"targets"})))
		case i > 0: // YAML would keep the last list, the first lost whole
			return nil, notTargets("targets is given twice: keep one list")
		}
		if list, _ = kv.Value.([]any); list == nil && kv.Value != nil {
			return nil, notTargets("`targets` is not a list")
		}
	}
	switch {
	case len(list) == 0:
		return nil, errors.New("no targets: list at least one under `targets:`, with name, api_url and api_key_file")
	case len(list) > maxTargets:
		return nil, fmt.Errorf("%d targets: at most %d per exporter", len(list), maxTargets)
	}
	var problems []error
	var out []Named
	seen := map[string]int{}
	for i, el := range list {
		item, _ := el.(yaml.MapSlice)
		var name string
		if n := slices.IndexFunc(item, func(kv yaml.MapItem) bool { return kv.Key == "name" }); n >= 0 {
			name = fmt.Sprint(item[n].Value)
		}
		where := fmt.Sprintf("targets[%d]", i)
		if name != "" {
			where += fmt.Sprintf(" (%s)", name)
		}
		bad := func(format string, args ...any) { problems = append(problems, fmt.Errorf(where+": "+format, args...)) }
		switch first, dup := seen[name]; {
		case name == "":
			bad("name is required: the name /probe?target= asks for")
		case !namePattern.MatchString(name):
			bad("name %q: want letters, digits, '_', '.' and '-', starting with a letter or digit, at most 63 characters (it is a URL parameter and a label value)", name)
		case dup:
			bad("name %q is also targets[%d]'s: names must be unique", name, first)
		default:
			seen[name] = i
		}
		s := defaults // with a map of its own, which collectors changes
		s.APIURL, s.KeyFile, s.Key, s.KeyFrom, s.Collectors = "", "", nil, "", maps.Clone(s.Collectors)
		fields, byField, given := []string{"name"}, map[string]Setting{}, map[string]bool{}
		for _, st := range s.List() {
			if st.Field != "" {
				fields, byField[st.Field] = append(fields, st.Field), st
			}
		}
		for _, kv := range item {
			field := fmt.Sprint(kv.Key)
			st, ok := byField[field]
			switch {
			case given[field]: // YAML would keep the last
				bad("%s is given twice: keep one", field)
			case field == "name":
			case !ok:
				bad("unknown field %q%s (keys never go in this file: api_key_file names a file holding one)", field, nearest(field, fields))
			default:
				if err := decode(st.Value, kv.Value); err != nil {
					bad("%s: %v", strings.TrimSuffix(field+" "+shownValue(kv.Value), " "), err)
				} else if field == "tls_config" { // not the flags' files
					s.TLS.SetDirectory(filepath.Dir(path))
				}
			}
			given[field] = true
		}
		if s.APIURL == "" {
			bad("api_url is required: this target's base address, such as https://api.example.com")
		}
		if s.KeyFile == "" {
			bad("api_key_file is required: a file holding this target's API key (keys never go in this file)")
		} else {
			s.KeyFile = commonconfig.JoinDir(filepath.Dir(path), s.KeyFile)
			s.Key, s.KeyFrom = FileKey(s.KeyFile), "file "+s.KeyFile
			if _, err := s.Key(); err != nil {
				bad("api_key_file: %v", err)
			}
		}
		problems = append(problems, s.Validate(where+": ", func(st Setting) string {
			return strings.TrimSuffix(st.Field+" "+st.Value.String(), " ") // a field, and its value if any
		})...)
		out = append(out, Named{Name: name, Settings: s})
	}
	if len(problems) > 0 {
		return nil, errors.Join(problems...)
	}
	return out, nil
}

// decode sets v from a value of the file: a map through v's own YAML
// decoding, a scalar through the text a flag would give.
func decode(v Value, raw any) error {
	if u, ok := v.(yaml.Unmarshaler); ok {
		b, _ := yaml.Marshal(raw) // what yaml decoded, it encodes
		return withoutGoTypes(yaml.UnmarshalStrict(b, u))
	}
	switch raw.(type) {
	case yaml.MapSlice, []any:
		return errors.New("want a single value, not a list or a map")
	case nil:
		return v.Set("")
	}
	return v.Set(fmt.Sprint(raw))
}

// shownValue is a file's value as a message quotes it: a scalar as
// written, a list or a map not at all.
func shownValue(raw any) string {
	switch raw.(type) {
	case yaml.MapSlice, []any:
		return ""
	case string:
		return fmt.Sprintf("%q", raw)
	}
	return fmt.Sprint(raw)
}

// withoutGoTypes keeps the YAML decoder's line numbers but not the Go
// types it names.
func withoutGoTypes(err error) error {
	if err == nil {
		return nil
	}
	return errors.New(goType.ReplaceAllString(err.Error(), "$1"))
}

var goType = regexp.MustCompile(`(\S+) into [\[\]*\w.]+|in type [\w.]+`)

// readFile reads a regular file of at most limit bytes, within a deadline.
// Anything else is refused unread: a FIFO or a device would block start-up
// or a reload for ever, a huge file cost its size in memory.
func readFile(path string, limit int64) ([]byte, error) {
	var b []byte
	var err error
	done := make(chan struct{})
	go func() { b, err = readRegular(path, limit); close(done) }()
	select {
	case <-done:
		return b, err
	case <-time.After(fileReadTimeout):
		return nil, fmt.Errorf("%s: not read within %v (a file on a network file system that does not answer?)", path, fileReadTimeout)
	}
}

func readRegular(path string, limit int64) ([]byte, error) {
	check := func(fi os.FileInfo, err error) error {
		switch {
		case err != nil:
			return fmt.Errorf("%s: %w", path, errors.Unwrap(err)) // not "stat" or "open": a file not there
		case !fi.Mode().IsRegular():
			return fmt.Errorf("%s is not a regular file (%s): want a file", path, fi.Mode().Type())
		case fi.Size() > limit:
			return fmt.Errorf("%s holds %d bytes: want at most %d", path, fi.Size(), limit)
		}
		return nil
	}
	if err := check(os.Stat(path)); err != nil { // before opening it: opening a FIFO blocks
		return nil, err
	}
	f, err := os.Open(path) //nolint:gosec // G304: the operator's own files
	if err != nil {
		return nil, check(nil, err)
	}
	defer f.Close()
	if err := check(f.Stat()); err != nil { // what was opened, should it have been swapped
		return nil, err
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err == nil && int64(len(b)) > limit {
		err = fmt.Errorf("%s grew past %d bytes while it was read", path, limit)
	}
	return b, err
}

// FileKey reads the key from path on every request, surrounding whitespace
// trimmed, so that a rotated key is used without a restart. An empty or
// short key is an error, rather than a 401 that hints at the wrong thing.
func FileKey(path string) func() (string, error) {
	return func() (string, error) {
		b, err := readFile(path, MaxKeyBytes)
		if err != nil {
			return "", fmt.Errorf("API key file %w", err)
		}
		key := strings.TrimSpace(string(b))
		return key, CheckKey(key, "API key file "+path)
	}
}

// CheckKey refuses a key too short to be redacted from the log without
// garbling it.
func CheckKey(key, from string) error {
	switch {
	case key == "":
		return fmt.Errorf("%s is empty", from)
	case len(key) < redact.MinKeyLength:
		return fmt.Errorf("%s holds a key of %d characters: want at least %d (a key that short could not be told from ordinary text)", from, len(key), redact.MinKeyLength)
	}
	return nil
}

// nearest suggests the candidate nearest to name, when one is close.
func nearest(name string, candidates []string) string {
	if best := Nearest(name, candidates); best != "" {
		return fmt.Sprintf("; did you mean %q?", best)
	}
	return ""
}

// Nearest is the candidate nearest to name by edit distance, or "" when
// none is close.
func Nearest(name string, candidates []string) string {
	best, bestDistance := "", 0
	for _, c := range candidates {
		if d := editDistance(name, c); best == "" || d < bestDistance || (d == bestDistance && c < best) {
			best, bestDistance = c, d
		}
	}
	if best != "" && bestDistance <= max(2, len(name)/4) {
		return best
	}
	return ""
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	row := make([]int, len(b)+1) // the distances from a[:i] to each b[:j]
	for j := range row {
		row[j] = j
	}
	for i := range len(a) {
		diagonal := row[0]
		row[0] = i + 1
		for j := range len(b) {
			cost := 1
			if a[i] == b[j] {
				cost = 0
			}
			diagonal, row[j+1] = row[j+1], min(row[j+1]+1, row[j]+1, diagonal+cost)
		}
	}
	return row[len(b)]
}
