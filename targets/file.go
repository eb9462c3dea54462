package targets

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"time"

	"github.com/alecthomas/units"
	commonconfig "github.com/prometheus/common/config"
	"github.com/prometheus/common/model"
	"go.yaml.in/yaml/v2"
)

// fileDoc is the targets' file (--config.file): the targets by name, each
// with its URL and key file and, optionally, any setting that otherwise
// comes from the exporter's flags:
//
//	targets:
//	  - name: prod
//	    api_url: https://api.example.com
//	    api_key_file: /etc/global-stability/prod.key
//	    timeout: 20s
//	    collectors: {briefings: false}
type fileDoc struct {
	Targets []fileTarget `yaml:"targets"`
}

// fileTarget is one target of the file. A pointer field left out takes
// the flag's value.
type fileTarget struct {
	Name       string `yaml:"name"`
	APIURL     string `yaml:"api_url"`
	APIKeyFile string `yaml:"api_key_file"`

	Timeout          *model.Duration         `yaml:"timeout"`
	CursorParam      *string                 `yaml:"cursor_param"`
	PageSizeParam    *string                 `yaml:"page_size_param"`
	PageSize         *int                    `yaml:"page_size"`
	MaxPages         *int                    `yaml:"max_pages"`
	MaxResponseBytes *units.Base2Bytes       `yaml:"max_response_bytes"`
	MaxDocumentBytes *units.Base2Bytes       `yaml:"max_document_bytes"`
	TLSConfig        *commonconfig.TLSConfig `yaml:"tls_config"`
	Collectors       map[string]bool         `yaml:"collectors"`
	HTTPCache        *bool                   `yaml:"http_cache"`
	SummaryRefresh   *model.Duration         `yaml:"summary_refresh_interval"`
	CacheTTL         *model.Duration         `yaml:"cache_ttl"`
	MaxLabelValues   *int                    `yaml:"max_label_values"`
	GridDegrees      *float64                `yaml:"grid_degrees"`
}

// namePattern is what a target's name may be: it is a query parameter's
// value (/probe?target=NAME) and, through relabeling, a label value.
var namePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$`)

// maxTargets bounds the targets of one file: each costs a client, a store
// and its series (the bench harness measures 100).
const maxTargets = 1000

// Load reads and checks the targets' file at path: the settings of every
// target, the flags' defaults filled in, by name in the file's order. Every
// problem is returned at once, each naming its target and field. Relative
// paths in the file (key files, TLS files) are relative to its directory,
// as in Prometheus' own configuration.
func Load(path string, defaults Settings) ([]Named, error) {
	b, err := os.ReadFile(path) //nolint:gosec // G304: the operator's own --config.file
	if err != nil {
		return nil, err
	}
	var f fileDoc
	if err := yaml.UnmarshalStrict(b, &f); err != nil {
		return nil, fmt.Errorf("not a targets' file: %w (the file holds `targets:`, a list of targets with name, api_url and api_key_file)", err)
	}
	if len(bytes.TrimSpace(b)) == 0 || len(f.Targets) == 0 {
		return nil, errors.New("no targets: list at least one under `targets:`, with name, api_url and api_key_file")
	}
	if len(f.Targets) > maxTargets {
		return nil, fmt.Errorf("%d targets: at most %d per exporter", len(f.Targets), maxTargets)
	}
	dir := filepath.Dir(path)
	var (
		problems []error
		out      []Named
		seen     = map[string]int{}
	)
	for i, t := range f.Targets {
		where := fmt.Sprintf("targets[%d]", i)
		if t.Name != "" {
			where += fmt.Sprintf(" (%s)", t.Name)
		}
		name := func(field string, value any) string {
			if value == "" || value == nil {
				return where + ": " + field
			}
			return fmt.Sprintf("%s: %s %v", where, field, value)
		}
		switch first, dup := seen[t.Name]; {
		case t.Name == "":
			problems = append(problems, fmt.Errorf("%s: name is required: the name /probe?target= asks for", where))
		case !namePattern.MatchString(t.Name):
			problems = append(problems, fmt.Errorf("%s: name %q: want letters, digits, '_', '.' and '-', starting with a letter or digit, at most 63 characters (it is a URL parameter and a label value)", where, t.Name))
		case dup:
			problems = append(problems, fmt.Errorf("%s: name %q is also targets[%d]'s: names must be unique", where, t.Name, first))
		default:
			seen[t.Name] = i
		}
		if t.APIURL == "" {
			problems = append(problems, fmt.Errorf("%s is required: this target's base address, such as https://api.example.com", name(FieldAPIURL, "")))
		}
		s := t.apply(defaults)
		s.KeyFile = commonconfig.JoinDir(dir, t.APIKeyFile)
		if t.TLSConfig != nil { // the flags' files are relative to the working directory
			s.TLS.SetDirectory(dir)
		}
		if t.APIKeyFile == "" {
			problems = append(problems, fmt.Errorf("%s is required: a file holding this target's API key (keys never go in this file)", name(FieldKeyFile, "")))
		} else {
			s.Key, s.KeyFrom = FileKey(s.KeyFile), "file "+s.KeyFile
			if _, err := s.Key(); err != nil {
				problems = append(problems, fmt.Errorf("%s: %w", name(FieldKeyFile, ""), err))
			}
		}
		problems = append(problems, s.Validate(name)...)
		out = append(out, Named{Name: t.Name, Settings: s})
	}
	if len(problems) > 0 {
		return nil, errors.Join(problems...)
	}
	return out, nil
}

// Named is a target's name with its settings.
type Named struct {
	Name     string
	Settings Settings
}

// apply is defaults with what the target sets.
func (t fileTarget) apply(d Settings) Settings {
	s := d
	s.APIURL = t.APIURL
	s.Key, s.KeyFile, s.KeyFrom = nil, "", ""
	if t.Timeout != nil {
		s.Timeout = time.Duration(*t.Timeout)
	}
	set(&s.CursorParam, t.CursorParam)
	set(&s.PageSizeParam, t.PageSizeParam)
	set(&s.PageSize, t.PageSize)
	set(&s.MaxPages, t.MaxPages)
	if t.MaxResponseBytes != nil {
		s.MaxResponseBytes = int64(*t.MaxResponseBytes)
	}
	if t.MaxDocumentBytes != nil {
		s.MaxDocumentBytes = int64(*t.MaxDocumentBytes)
	}
	if t.TLSConfig != nil {
		s.TLS = *t.TLSConfig
	}
	if t.Collectors != nil {
		s.Collectors = map[string]bool{}
		for g, on := range d.Collectors {
			s.Collectors[g] = on
		}
		for g, on := range t.Collectors {
			s.Collectors[g] = on
		}
	}
	set(&s.HTTPCache, t.HTTPCache)
	if t.SummaryRefresh != nil {
		s.SummaryRefresh = time.Duration(*t.SummaryRefresh)
	}
	if t.CacheTTL != nil {
		s.CacheTTL = time.Duration(*t.CacheTTL)
	}
	set(&s.MaxLabelValues, t.MaxLabelValues)
	set(&s.GridDegrees, t.GridDegrees)
	return s
}

func set[T any](dst *T, v *T) {
	if v != nil {
		*dst = *v
	}
}
