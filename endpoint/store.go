package endpoint

import (
	"sync"
	"time"

	"github.com/global-stability/global_stability_exporter/client"
)

// Reuse says why a Fetch gave what was stored instead of a new answer.
type Reuse string

// The reasons of global_stability_api_responses_reused_total.
const (
	Fetched          Reuse = ""                 // read from a new answer
	ReuseFresh       Reuse = "fresh"            // still fresh by the API's caching headers: no request
	ReuseNotModified Reuse = "not_modified"     // the API answered 304 to every request
	ReuseRefresh     Reuse = "refresh_interval" // inside the endpoint's refresh interval: no request
)

// Reasons lists every reason of reuse, in a stable order.
var Reasons = []Reuse{ReuseFresh, ReuseNotModified, ReuseRefresh}

// Store keeps, per endpoint, what its last answer became: the Result the
// collector exports (never a body), with each page's validators, its
// freshness and the cursor it led on. A later Fetch reuses it while the
// API allows, or asks the API whether it still holds. Its size is one
// Result per endpoint and a few strings per page. Safe for concurrent use.
type Store struct {
	headers bool // honour the API's caching headers

	mu      sync.Mutex
	entries map[string]*stored
}

// NewStore returns an empty store. Without honourHeaders, the API's
// caching headers are ignored (no answer is fresh, none is revalidated):
// only the endpoints' refresh intervals reuse what it keeps.
func NewStore(honourHeaders bool) *Store {
	return &Store{headers: honourHeaders, entries: map[string]*stored{}}
}

type stored struct {
	result  Result
	pages   []storedPage // one for an unpaged endpoint, in walk order
	fetched time.Time    // when it was last read or confirmed
}

type storedPage struct {
	cursor     string // the cursor that asked for it, "" for the first
	next       string // the next_cursor it gave
	validators client.Validators
	freshness  client.Freshness
}

// fresh reports whether every page may still be reused without asking.
func (s *stored) fresh(now time.Time) bool {
	for _, p := range s.pages {
		if !p.freshness.Fresh(now) {
			return false
		}
	}
	return len(s.pages) > 0
}

// asOf is the as_of the stored result exports, if any.
func (s *stored) asOf() (time.Time, bool) {
	for _, sample := range s.result.Samples {
		if sample.Metric == AsOf {
			return time.Unix(0, int64(sample.Value*1e9)), true
		}
	}
	return time.Time{}, false
}

func (st *Store) get(label string) *stored {
	if st == nil {
		return nil
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.entries[label]
}

// put stores s for label, or forgets label when the API forbade storing
// (no-store on any page).
func (st *Store) put(label string, s *stored) {
	if st == nil {
		return
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	delete(st.entries, label)
	for i, p := range s.pages {
		if p.freshness.NoStore {
			return
		}
		if !st.headers {
			s.pages[i].validators, s.pages[i].freshness = client.Validators{}, client.Freshness{}
		}
	}
	st.entries[label] = s
}
