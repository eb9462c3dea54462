// SPDX-License-Identifier: Apache-2.0

package targets

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/go-kit/log/level"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/global-stability/global_stability_exporter/internal/redact"
)

// Set is the live set of targets, replaced whole by a reload, as
// blackbox_exporter's: a probe holds the target it found until it is done,
// so a reload under load loses none.
type Set struct {
	path     string // the targets' file; "" for a set that is not reloaded (the demo's)
	defaults Settings
	env      Env

	reloadMu sync.Mutex // one reload at a time, from reading the file to publishing it
	current  atomic.Pointer[live]
	lookup   func(name string) (*Target, bool) // Get; a test holds a probe around it

	reloadOK   prometheus.Gauge
	reloadTime prometheus.Gauge
}

// live is one generation of targets: never changed once published.
type live struct {
	byName map[string]*Target
	order  []*Target // as in the file
}

// NewSet builds every target of named: a targets' file's, as Load read it
// from path with defaults, reloaded from there; or, without a path, never.
func NewSet(path string, defaults Settings, named []Named, env Env) (*Set, error) {
	s := &Set{
		path: path, defaults: defaults, env: env,
		reloadOK: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "global_stability_exporter_config_last_reload_successful",
			Help: "1 when the last load of the targets' file (--config.file) succeeded, 0 when it failed and the targets before it are still served.",
		}),
		reloadTime: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "global_stability_exporter_config_last_reload_success_timestamp_seconds",
			Help: "When the targets' file (--config.file) was last loaded successfully, as Unix seconds.",
		}),
	}
	s.current.Store(&live{byName: map[string]*Target{}})
	s.lookup = s.Get
	if err := s.replace(named); err != nil {
		return nil, err
	}
	return s, nil
}

// Collectors are the reload's gauges, for the exporter's own registry.
func (s *Set) Collectors() []prometheus.Collector {
	return []prometheus.Collector{s.reloadOK, s.reloadTime}
}

// Get returns the target of that name, as of now.
func (s *Set) Get(name string) (*Target, bool) { t, ok := s.current.Load().byName[name]; return t, ok }

// Targets are the targets, as of now, in the file's order.
func (s *Set) Targets() []*Target { return slices.Clone(s.current.Load().order) }

// Reload reads the targets' file again (a set of the file's only). A file that does not load keeps
// the running targets; the error says why, and the reload gauges say so.
func (s *Set) Reload() error {
	s.reloadMu.Lock() // two reloads at once would publish the older file if the newer were read first
	defer s.reloadMu.Unlock()
	named, err := Load(s.path, s.defaults)
	if err == nil {
		err = s.replace(named)
	}
	if err != nil {
		s.reloadOK.Set(0)
		level.Error(s.env.Logger).Log("msg", "reloading the targets' file failed; the targets loaded before are still served", "file", redact.Readable(s.path), "err", err)
	}
	return err
}

// replace builds the targets of named that differ from those running,
// keeps the others (Same), publishes the new generation and lets go of what
// it replaced. Nothing is published unless every target could be built.
func (s *Set) replace(named []Named) error {
	old := s.current.Load()
	next := &live{byName: map[string]*Target{}}
	var built []*Target
	for i, n := range named {
		t, ok := old.byName[n.Name]
		if !ok || !Same(t.Settings, n.Settings) {
			var err error
			if t, err = New(n.Name, n.Settings, s.env); err != nil {
				for _, b := range built { // never served: no probe holds them
					b.release(s)
				}
				return fmt.Errorf("targets[%d] (%s): %w", i, redact.Readable(n.Name), err) // as Load names a target
			}
			built = append(built, t)
		}
		next.byName[n.Name], next.order = t, append(next.order, t)
	}
	s.current.Store(next)
	var removed []string
	changed := 0
	for name, t := range old.byName {
		switch n, ok := next.byName[name]; {
		case !ok:
			t.release(s)
			removed = append(removed, name)
		case n != t:
			t.release(s)
			changed++
		}
	}
	slices.Sort(removed)
	s.reloadOK.Set(1)
	s.reloadTime.SetToCurrentTime()
	if s.path != "" {
		level.Info(s.env.Logger).Log("msg", "targets loaded", "file", redact.Readable(s.path), "targets", len(next.order), "kept", len(next.order)-len(built),
			"added", len(built)-changed, "changed", changed, "removed", strings.Join(removed, ","))
	}
	return nil
}

// ServeProbe serves /probe?target=NAME, by any method as the metrics path:
// that target's series. A target is a name of the file, never a URL from
// the request, so nobody who can reach /probe can send a key elsewhere. A
// missing, repeated or unknown target is HTTP 400 naming the problem.
func (s *Set) ServeProbe(w http.ResponseWriter, r *http.Request) {
	names := r.URL.Query()["target"]
	switch {
	case len(names) == 0 || names[0] == "":
		http.Error(w, "missing target: ask for /probe?target=NAME, NAME one of the targets ("+s.names()+")", http.StatusBadRequest)
		return
	case len(names) > 1:
		http.Error(w, "more than one target: ask for one, /probe?target=NAME", http.StatusBadRequest)
		return
	}
	for {
		t, ok := s.lookup(names[0])
		if !ok { // the name comes from the request
			http.Error(w, fmt.Sprintf("unknown target %q: a target is a name from the targets' file (%s), never a URL", redact.Readable(names[0]), s.names()), http.StatusBadRequest)
			return
		}
		if t.acquire() { // else a reload closed it meanwhile: look again
			defer t.release(s)
			t.probe.ServeHTTP(w, r)
			return
		}
	}
}

// names lists the targets' names for a message, the first ten.
func (s *Set) names() string {
	var names []string
	for _, t := range s.Targets() {
		names = append(names, t.Name)
	}
	if len(names) > 10 {
		names = append(names[:10], fmt.Sprintf("and %d more", len(names)-10))
	}
	return strings.Join(names, ", ")
}

// ServeReload serves /-/reload, routed for POST and PUT as by Prometheus
// and blackbox_exporter.
func (s *Set) ServeReload(w http.ResponseWriter, r *http.Request) {
	if err := s.Reload(); err != nil {
		http.Error(w, "failed to reload the targets' file: "+err.Error(), http.StatusInternalServerError)
		return
	}
	_, _ = w.Write([]byte("reloaded\n"))
}
