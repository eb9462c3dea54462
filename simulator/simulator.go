// SPDX-License-Identifier: Apache-2.0

// Package simulator is the Global Stability Intelligence Service in-process:
// an http.Handler serving every described endpoint with plausible data
// that moves in wall-clock time. It is the reference upstream for the
// client's and the collector's tests, for --demo and for the benchmarks.
//
// Everything it serves is a pure function of the seed and the time (and,
// for a scripted trend, the time it started), so two simulators with the
// same seed and clock serve identical bytes, and a million events cost no
// memory. It misbehaves on request: a scripted score trend, a revoked key,
// a quota that runs out, failing endpoints (Config, an accounts' file).
//
// Choices for what the spec leaves open: trend is "improving", "stable" or
// "deteriorating" (change of the composite over the past hour); escalation
// lies in [0, 1]; categories are ACLED-like snake_case words; next_cursor is
// an opaque base64 string carried in Config.CursorParam; errors are
// {"error": "<code>", "message": "<text>"} with 400, 401, 404 or 405.
package simulator

import (
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	described "github.com/global-stability/global_stability_exporter/endpoint"
)

// Defaults of Config.
const (
	DefaultEvents      = 120
	DefaultBriefings   = 10
	DefaultPageSize    = 50
	DefaultCursorParam = "cursor"
	MaxPageSize        = 1000
)

// Config sets up a Simulator. The zero value is usable: any bearer key is
// refused (set Key), defaults apply to the rest. The yaml names are an
// accounts' file's (Configs).
type Config struct {
	Key           string           `yaml:"key"`             // the only bearer key accepted
	Seed          uint64           `yaml:"seed"`            // same seed and time, same data
	Events        int              `yaml:"events"`          // conflict events per hour window; default 120, negative for none
	Briefings     int              `yaml:"briefings"`       // daily briefings served; default 10, negative for none
	PageSize      int              `yaml:"page_size"`       // items per page of /v1/conflict and /v1/briefings; default 50
	CursorParam   string           `yaml:"cursor_param"`    // query parameter carrying the cursor; default "cursor"
	PageSizeParam string           `yaml:"page_size_param"` // query parameter a client may use to set the page size; off when empty
	Latency       time.Duration    `yaml:"latency"`         // added before every response
	Now           func() time.Time `yaml:"-"`               // the clock; default time.Now
	// Validators sends an ETag (a hash of the body) and a Last-Modified
	// (its as_of, where it has one), and answers 304 Not Modified to a
	// request whose If-None-Match or If-Modified-Since still holds.
	Validators bool `yaml:"validators"`
	// CacheControl is sent as Cache-Control with every answer (e.g.
	// "max-age=30"); empty sends none.
	CacheControl string `yaml:"cache_control"`
	// RateLimit announces a quota of this many requests per clock hour in
	// RateLimit/RateLimit-Policy and X-RateLimit-* headers, and answers 429
	// past it, until the hour is over: a small one runs out in minutes. 0
	// announces and enforces none.
	RateLimit int `yaml:"rate_limit"`
	// Trend scripts the scores from the simulator's start (one of Trends):
	// rising or falling a point a minute, to the scale's end, or steady
	// at each pillar's mean. Empty, they wander (a mean-reverting walk).
	Trend string `yaml:"trend"`
	// Revoked refuses the key, with the 401 of any key not the account's.
	Revoked bool `yaml:"revoked"`
	// Failing are endpoints (labels such as "conflict") answering 500.
	Failing []string `yaml:"failing"`
}

// Simulator serves the API. Faults can be changed while it runs.
type Simulator struct {
	cfg   Config
	world world

	mu         sync.Mutex
	faults     map[string]Fault
	requests   map[string]int
	rateWindow time.Time // the clock hour of the quota
	rateUsed   int       // requests in it
}

// New returns a simulator for cfg.
func New(cfg Config) *Simulator {
	cfg.Events, cfg.Briefings = max(cmp.Or(cfg.Events, DefaultEvents), 0), max(cmp.Or(cfg.Briefings, DefaultBriefings), 0)
	cfg.PageSize = cmp.Or(max(cfg.PageSize, 0), DefaultPageSize)
	cfg.CursorParam = cmp.Or(cfg.CursorParam, DefaultCursorParam)
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	s := &Simulator{
		cfg:      cfg,
		world:    world{seed: cfg.Seed, course: cfg.Trend, start: minute(cfg.Now())},
		faults:   make(map[string]Fault),
		requests: make(map[string]int),
	}
	for _, endpoint := range cfg.Failing {
		s.faults[endpoint] = Fault{Kind: FaultStatus}
	}
	return s
}

// SetFault makes every later request to endpoint (a label such as
// "conflict" or "global-stability/pillar/cyber") fail as f says. The zero
// Fault clears it.
func (s *Simulator) SetFault(endpoint string, f Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults[endpoint] = f
}

// ClearFaults removes every fault.
func (s *Simulator) ClearFaults() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.faults)
}

// Requests returns how many requests reached endpoint so far (any outcome;
// an unknown path counts under its raw path).
func (s *Simulator) Requests(endpoint string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests[endpoint]
}

// TotalRequests returns how many requests arrived so far.
func (s *Simulator) TotalRequests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, c := range s.requests {
		n += c
	}
	return n
}

// ServeHTTP implements the API: method check, then authentication, then
// routing, then the endpoint or its injected fault.
func (s *Simulator) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	endpoint := strings.TrimPrefix(r.URL.Path, "/v1/")
	s.mu.Lock()
	s.requests[endpoint]++
	fault := s.faults[endpoint]
	s.mu.Unlock()

	if !sleep(r.Context(), s.cfg.Latency) {
		return
	}
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", http.MethodGet)
		writeError(w, http.StatusMethodNotAllowed, "method_not_allowed", "only GET is supported")
		return
	}
	if r.Header.Get("Authorization") != "Bearer "+s.cfg.Key || s.cfg.Key == "" || s.cfg.Revoked {
		w.Header().Set("WWW-Authenticate", `Bearer realm="global-stability"`)
		writeError(w, http.StatusUnauthorized, "unauthorized", "missing or invalid API key")
		return
	}
	if !s.quota(w, s.cfg.Now()) {
		return
	}
	body, status := s.route(endpoint, r)
	if fault.Kind != FaultNone {
		fault.serve(w, r, body)
		return
	}
	if status != http.StatusOK { // bad_request, not_found
		writeError(w, status, strings.ReplaceAll(strings.ToLower(http.StatusText(status)), " ", "_"), string(body))
		return
	}
	if s.caching(w, r, body) {
		return // 304
	}
	writeJSON(w, http.StatusOK, body)
}

// route renders the body of endpoint; on a client error it returns the
// message and the status to send.
func (s *Simulator) route(endpoint string, r *http.Request) ([]byte, int) {
	now := s.cfg.Now()
	switch {
	case endpoint == "global-stability":
		return mustJSON(s.world.overview(now)), http.StatusOK
	case strings.HasPrefix(endpoint, "global-stability/pillar/"):
		i := pillarIndex(strings.TrimPrefix(endpoint, "global-stability/pillar/"))
		if i < 0 {
			return []byte("unknown pillar; want conflict, cyber, supply_chain or macro"), http.StatusNotFound
		}
		return mustJSON(s.world.drilldown(i, now)), http.StatusOK
	case endpoint == "conflict":
		return s.list(r, eventWindowOf(now), "events", s.cfg.Events, func(gen int64, from, to int) (events []any) {
			conflict := s.world.pillarScore(pillarIndex("conflict"), gen*60)
			for i := from; i < to; i++ {
				events = append(events, s.world.event(gen, i, conflict))
			}
			return events
		})
	case endpoint == "briefings":
		return s.list(r, now.Unix(), "briefings", s.cfg.Briefings, func(gen int64, from, to int) (briefings []any) {
			for k := from; k < to; k++ {
				briefings = append(briefings, s.world.briefing(time.Unix(gen, 0), k))
			}
			return briefings
		})
	case endpoint == "summaries":
		return mustJSON(s.world.summary(now)), http.StatusOK
	}
	for _, e := range described.All() {
		if e.Label == endpoint {
			return genericBody(e, now), http.StatusOK
		}
	}
	return []byte("no such endpoint"), http.StatusNotFound
}

// page reads the cursor and page size of a paginated request. The cursor
// pins the list's generation, so a walk that spans a window boundary still
// sees one consistent list.
func (s *Simulator) page(r *http.Request, generation int64) (start, size int, gen int64, err error) {
	size, gen = s.cfg.PageSize, generation
	if p := s.cfg.PageSizeParam; p != "" && r.URL.Query().Has(p) {
		size, err = strconv.Atoi(r.URL.Query().Get(p))
		if err != nil || size < 1 || size > MaxPageSize {
			return 0, 0, 0, fmt.Errorf("%s must be an integer from 1 to %d", p, MaxPageSize)
		}
	}
	if c := r.URL.Query().Get(s.cfg.CursorParam); c != "" {
		raw, err := base64.RawURLEncoding.DecodeString(c)
		if err == nil {
			_, err = fmt.Sscanf(string(raw), "g%d:o%d", &gen, &start)
		}
		if err != nil || start < 0 {
			return 0, 0, 0, errors.New("invalid cursor")
		}
	}
	return start, size, gen, nil
}

func cursor(gen int64, next, total int) *string {
	if next >= total {
		return nil
	}
	c := base64.RawURLEncoding.EncodeToString(fmt.Appendf(nil, "g%d:o%d", gen, next))
	return &c
}

// list answers a page of a paged list of total items, called name: those
// from..to of generation gen, by items.
func (s *Simulator) list(r *http.Request, generation int64, name string, total int, items func(gen int64, from, to int) []any) ([]byte, int) {
	start, size, gen, err := s.page(r, generation)
	if err != nil {
		return []byte(err.Error()), http.StatusBadRequest
	}
	page := append([]any{}, items(gen, start, min(start+size, total))...)
	return mustJSON(map[string]any{name: page, "next_cursor": cursor(gen, start+size, total)}), http.StatusOK
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("simulator: marshal %T: %v", v, err)) // our own types always marshal
	}
	return b
}

func writeJSON(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

func writeError(w http.ResponseWriter, status int, code, message string) {
	body, _ := json.Marshal(map[string]string{"error": code, "message": message})
	writeJSON(w, status, body)
}

// sleep waits d or until ctx ends; it reports whether the wait completed.
func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
