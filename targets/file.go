// SPDX-License-Identifier: Apache-2.0

package targets

import (
	"cmp"
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
// rather than read; and KeyEnv, where the API key may come from instead of
// --api.key-file, never a flag: flag values show up in ps and /proc.
const (
	maxTargets   = 1000    // each costs a client, a store and its series
	MaxFileBytes = 4 << 20 // the targets' file
	MaxKeyBytes  = 4 << 10 // a key file
	KeyEnv       = "GLOBAL_STABILITY_API_KEY"
)

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
	var file struct{ Targets []yaml.Node }
	b, err := readFile(path, MaxFileBytes)
	if err == nil {
		d := yaml.NewDecoder(strings.NewReader(string(b)))
		d.KnownFields(true)
		if err = d.Decode(&file); err == nil && !errors.Is(d.Decode(new(yaml.Node)), io.EOF) {
			err = errors.New("a second YAML document: keep one")
		}
		if n := len(file.Targets); errors.Is(err, io.EOF) || err == nil && (n == 0 || n > maxTargets) {
			err = fmt.Errorf("%d targets", n)
		}
		if err != nil {
			err = fmt.Errorf("not a targets' file: %w (it holds `targets:`, a list of 1 to %d targets, each with name, api_url and api_key_file)", yamlError(err), maxTargets)
		}
	}
	problems, seen := []error{err}, map[string]int{}
	var out []Named
	for i, node := range file.Targets {
		var own []error // the target's problems, named with it once its name is read
		bad := func(format string, args ...any) { own = append(own, fmt.Errorf(format, args...)) }
		name, s := "", defaults // s with a map of its own, which collectors changes
		s.APIURL, s.KeyFile, s.Key, s.KeyFrom, s.Collectors = "", "", nil, "", maps.Clone(s.Collectors)
		list := append(s.List(), Setting{Field: "name", Value: text(&name, nil)}) // read as a setting is: aliases, tags
		var read func(prefix string, given map[string]yaml.Node)
		read = func(prefix string, given map[string]yaml.Node) {
			for _, key := range slices.Sorted(maps.Keys(given)) {
				if v := given[key]; v.Kind == yaml.AliasNode { // what it refers to, for the required check too
					given[key] = *v.Alias
				}
				v, field := given[key], prefix+key
				// a.b is b of the map a, never a key; a flag's part of a field (--api.tls.ca-file) is not one
				i := slices.IndexFunc(list, func(st Setting) bool { return st.Field == field && st.Field != "" && !strings.Contains(key, ".") })
				var err error
				switch tag := foreignTag(&v); {
				case tag != nil:
					err = fmt.Errorf("a tag (%s): the file is read as written; write the value itself", redact.Readable(tag.Tag))
				case i < 0 && v.Kind == yaml.MappingNode: // of a map of settings, such as collectors
					var sub map[string]yaml.Node
					if err = yamlError(v.Decode(&sub)); err == nil {
						read(field+".", sub)
					}
				case i < 0:
					bad("unknown field %q (keys never go in this file: api_key_file names a file holding one)", redact.Readable(field))
				default:
					if m, isMap := list[i].Value.(interface{ decode(yaml.Node, string) error }); isMap {
						err = m.decode(v, filepath.Dir(path))
					} else if err = errors.New("want a single value, not a list or a map"); v.Kind == yaml.ScalarNode {
						err = list[i].Value.Set(v.Value)
					}
				}
				if err != nil {
					bad("%s: %v", named(field, v.Value), err)
				}
			}
		}
		var given map[string]yaml.Node
		if err := node.Decode(&given); err != nil {
			bad("%v", yamlError(err))
		} else {
			read("", given)
			for _, f := range []string{"name", "api_url", "api_key_file"} {
				if given[f].Value == "" {
					bad("%s is required: each target has a name (for /probe?target=), an api_url and an api_key_file (a file holding its key)", f)
				}
			}
			switch first, dup := seen[name]; {
			case name == "":
			case !namePattern.MatchString(name):
				bad("%s: want letters, digits, '_', '.' and '-', starting with a letter or digit, at most 63 characters (it is a URL parameter and a label value)", named("name", name))
			case dup:
				bad("%s is also targets[%d]'s: names must be unique", named("name", name), first)
			default:
				seen[name] = i
			}
			if s.KeyFile != "" {
				s.KeyFile = commonconfig.JoinDir(filepath.Dir(path), s.KeyFile)
				if s.Key, s.KeyFrom, err = KeySource(s.KeyFile); err != nil {
					bad("api_key_file: %v", err)
				}
			}
			own = append(own, s.Validate(func(st Setting) string { return named(st.Field, st.Value.String()) })...)
		}
		where := strings.Replace(fmt.Sprintf("targets[%d] (%s): ", i, redact.Readable(name)), " (): ", ": ", 1)
		for _, err := range own {
			problems = append(problems, fmt.Errorf("%s%w", where, err))
		}
		out = append(out, Named{Name: name, Settings: s})
	}
	return out, errors.Join(problems...) // out is not to be used with problems
}

// foreignTag is the first node under n with a tag not YAML's own (!!str):
// !vault, !<tag:example.com,2000:x>; the file refuses it, not reads it as text.
func foreignTag(n *yaml.Node) *yaml.Node {
	for nodes := []*yaml.Node{n}; len(nodes) > 0; nodes = append(nodes[1:], nodes[0].Content...) {
		if nodes[0].Tag != "" && !strings.HasPrefix(nodes[0].Tag, "!!") {
			return nodes[0]
		}
	}
	return nil
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

// named is a field with its value, if any, as a message shows them.
func named(field, value string) string { return strings.TrimSuffix(field+" "+Quote(value), ` ""`) }

// readFile reads a regular file of at most limit bytes. Anything else is
// refused unread: a FIFO or a device would block for ever (opened without
// blocking, to be refused), a huge file cost its size in memory.
func readFile(path string, limit int64) ([]byte, error) {
	shown := "file " + redact.Readable(path)                       // a key pasted where its file's path belongs is not shown
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

// KeySource is the key's source, where it reads (for the log, never the
// key) and whether it reads now: the file at path, read on every request
// so that a rotated key is used without a restart, or without a path the
// KeyEnv variable; whitespace around it trimmed. A key too short to be
// redacted without garbling the log is refused (an empty one too), rather
// than a 401 that hints at the wrong thing.
func KeySource(path string) (key func() (string, error), from string, err error) {
	from = "environment variable " + KeyEnv
	if path != "" {
		from = "file " + redact.Readable(path)
	}
	key = func() (string, error) {
		b, err := []byte(os.Getenv(KeyEnv)), error(nil)
		if path != "" {
			b, err = readFile(path, MaxKeyBytes)
		}
		key := strings.TrimSpace(string(b))
		if err == nil && len(key) < redact.MinKeyLength {
			err = fmt.Errorf("%s holds a key of %d characters: want at least %d (a key that short could not be told from ordinary text)", from, len(key), redact.MinKeyLength)
		}
		return key, err
	}
	_, err = key()
	return key, from, err
}

// tlsValue is prometheus/common's tls_config, unknown fields refused; it
// replaces the flags' TLS settings whole.
type tlsValue struct{ p *commonconfig.TLSConfig }

func (tlsValue) Set(string) error { return errors.New("want a map, such as {ca_file: ca.pem}") }
func (tlsValue) String() string   { return "" }

// decode reads n, its files relative to dir (the targets' file's).
func (v tlsValue) decode(n yaml.Node, dir string) error {
	var c struct {
		TLS     commonconfig.TLSConfig `yaml:",inline"`
		Unknown map[string]yaml.Node   `yaml:",inline"`
	}
	err := n.Decode(&c)
	for f := range c.Unknown {
		err = cmp.Or(err, fmt.Errorf("unknown field %q", redact.Readable(f)))
	}
	if err = cmp.Or(yamlError(err), c.TLS.Validate()); err == nil {
		c.TLS.SetDirectory(dir)
		*v.p = c.TLS
	}
	return err
}
