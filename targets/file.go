// SPDX-License-Identifier: Apache-2.0

package targets

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"

	commonconfig "github.com/prometheus/common/config"
	"go.yaml.in/yaml/v3"

	"github.com/global-stability/global_stability_exporter/internal/redact"
)

// Limits of what the exporter reads from files, each refused whole past it
// rather than read.
const (
	maxTargets   = 1000    // each costs a client, a store and its series
	MaxFileBytes = 4 << 20 // the targets' file
	MaxKeyBytes  = 4 << 10 // a key file
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
// settings, each field read into a copy of defaults (the flags') by its
// setting's kind, in the file's order; or every problem at once, each
// naming its target and field (the error unwraps to them). Merge keys,
// anchors and aliases work as YAML defines them (a merged key never
// overrides one the target writes); a key given twice and a tag YAML does
// not define are refused. Paths are relative to the file's directory.
func Load(path string, defaults Settings) ([]Named, error) {
	b, err := readFile(path, MaxFileBytes)
	if err != nil {
		return nil, errors.Join(err)
	}
	var file struct{ Targets []yaml.Node }
	d := yaml.NewDecoder(bytes.NewReader(b))
	d.KnownFields(true)
	if err = d.Decode(&file); err == nil && !errors.Is(d.Decode(new(yaml.Node)), io.EOF) {
		err = errors.New("a second YAML document: keep one")
	}
	if n := len(file.Targets); errors.Is(err, io.EOF) || err == nil && (n == 0 || n > maxTargets) {
		err = fmt.Errorf("%d targets", n)
	}
	if err != nil {
		return nil, errors.Join(fmt.Errorf("not a targets' file: %w (it holds `targets:`, a list of 1 to %d targets, each with name, api_url and api_key_file)", yamlError(err), maxTargets))
	}
	var problems []error
	var out []Named
	seen := map[string]int{}
	for i, node := range file.Targets {
		var given map[string]yaml.Node
		err := node.Decode(&given)
		name := given["name"].Value
		where := strings.TrimSuffix(fmt.Sprintf("targets[%d] (%s)", i, redact.Readable(name)), " ()")
		bad := func(format string, args ...any) { problems = append(problems, fmt.Errorf(where+": "+format, args...)) }
		switch first, dup := seen[name]; {
		case err != nil:
			bad("%v", yamlError(err))
			continue
		case name == "":
			bad("name is required: the name /probe?target= asks for")
		case !namePattern.MatchString(name):
			bad("%s: want letters, digits, '_', '.' and '-', starting with a letter or digit, at most 63 characters (it is a URL parameter and a label value)", named("name", name))
		case dup:
			bad("%s is also targets[%d]'s: names must be unique", named("name", name), first)
		default:
			seen[name] = i
		}
		s := defaults // with a map of its own, which collectors changes
		s.APIURL, s.KeyFile, s.Key, s.KeyFrom, s.Collectors = "", "", nil, "", maps.Clone(s.Collectors)
		fields := map[string]Setting{}
		for _, st := range s.List() {
			fields[st.Field] = st
		}
		delete(given, "name")
		var read func(prefix string, given map[string]yaml.Node)
		read = func(prefix string, given map[string]yaml.Node) {
			for _, key := range slices.Sorted(maps.Keys(given)) {
				v, field := given[key], prefix+key
				if v.Kind == yaml.AliasNode {
					v = *v.Alias
				}
				st, known := fields[field]
				m, isMap := st.Value.(interface{ decode(yaml.Node) error })
				var sub map[string]yaml.Node // of a map of settings, such as collectors
				var err error
				switch {
				case tagged(v):
					err = fmt.Errorf("a tag (%s): the file is read as written; write the value itself", redact.Readable(v.Tag))
				case isMap:
					err = m.decode(v)
				case !known && v.Kind == yaml.MappingNode:
					if err = yamlError(v.Decode(&sub)); err == nil {
						read(field+".", sub)
					}
				case !known || field == "" || strings.Contains(key, "."):
					bad("unknown field %q (keys never go in this file: api_key_file names a file holding one)", redact.Readable(field))
				case v.Kind != yaml.ScalarNode:
					err = errors.New("want a single value, not a list or a map")
				default:
					err = st.Value.Set(v.Value)
				}
				if err != nil {
					bad("%s: %v", named(field, v.Value), err)
				}
			}
		}
		read("", given)
		if _, ok := given["tls_config"]; ok { // its files are the file's directory's, not the flags'
			s.TLS.SetDirectory(filepath.Dir(path))
		}
		if given["api_url"].Value == "" { // not s.APIURL: one refused is not missing
			bad("api_url is required: this target's base address, such as https://api.example.com")
		}
		if given["api_key_file"].Value == "" {
			bad("api_key_file is required: a file holding this target's API key (keys never go in this file)")
		} else {
			s.KeyFile = commonconfig.JoinDir(filepath.Dir(path), s.KeyFile)
			s.Key, s.KeyFrom = FileKey(s.KeyFile), "file "+redact.Readable(s.KeyFile)
			if _, err := s.Key(); err != nil {
				bad("api_key_file: %v", err)
			}
		}
		problems = append(problems, s.Validate(where+": ", func(st Setting) string { return named(st.Field, st.Value.String()) })...)
		out = append(out, Named{Name: name, Settings: s})
	}
	return out, errors.Join(problems...) // out is not to be used with problems
}

// yamlError is a YAML error as a message shows it: without the Go types
// it names, withheld where it quotes what may be a key.
func yamlError(err error) error {
	if err == nil {
		return nil
	}
	msg := strings.ReplaceAll(strings.TrimPrefix(err.Error(), "yaml: unmarshal errors:\n  "), "\n  ", "; ")
	return errors.New(redact.Readable(goType.ReplaceAllString(msg, "")))
}

var goType = regexp.MustCompile(` (in type|into) [^;]*`)

// tagged says whether n carries a tag YAML does not define (!vault), which
// the file refuses rather than read as text: a value is read as written.
func tagged(n yaml.Node) bool {
	return strings.HasPrefix(n.Tag, "!") && !strings.HasPrefix(n.Tag, "!!")
}

// named is a field with its value, if any, as a message shows them.
func named(field, value string) string {
	if value == "" {
		return field
	}
	return field + " " + Quote(value)
}

// readFile reads a regular file of at most limit bytes. Anything else is
// refused unread: a FIFO or a device would block for ever (opened without
// blocking, to be refused), a huge file cost its size in memory.
func readFile(path string, limit int64) ([]byte, error) {
	shown := redact.Readable(path)                                 // a key pasted where its file's path belongs is not shown
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0) //nolint:gosec // G304: the operator's own files
	if err != nil {
		return nil, fmt.Errorf("%s: %w", shown, errors.Unwrap(err)) // not "open": a file not there
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file: want a file", shown)
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err == nil && int64(len(b)) > limit {
		err = fmt.Errorf("%s holds more than %d bytes: want at most that", shown, limit)
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
		return key, CheckKey(key, "API key file "+redact.Readable(path))
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
