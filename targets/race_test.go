// SPDX-License-Identifier: Apache-2.0

package targets_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/global-stability/global_stability_exporter/internal/redact"
	"github.com/global-stability/global_stability_exporter/targets"
)

// hold stops the first goroutine to call wait until release: reached says
// it is there. Later calls pass.
type hold struct {
	once             sync.Once
	reached, release chan struct{}
}

func newHold() *hold { return &hold{reached: make(chan struct{}), release: make(chan struct{})} }

func (h *hold) wait() {
	h.once.Do(func() {
		close(h.reached)
		<-h.release
	})
}

// heldWriter holds the probe as it starts to write its answer.
type heldWriter struct {
	*httptest.ResponseRecorder
	h *hold
}

func (w heldWriter) Write(p []byte) (int, error) {
	w.h.wait()
	return w.ResponseRecorder.Write(p)
}

// TestAProbeBesideAReload: a probe held at each point where a reload can
// replace or remove its target, while the reload runs to its end, answers
// from the old target or the new, never 503: one that has not yet taken
// its target looks again, and one that holds it is served by it. The old
// target's key is held exactly while a probe holds the target: it is let
// go at the reload when none does, else when that probe ends. Nothing of
// it is left to a goroutine that might run later.
func TestAProbeBesideAReload(t *testing.T) {
	points := []struct {
		name  string
		holds bool // the probe holds the old target there
	}{
		{"before the lookup", false},
		{"after the lookup", false},
		{"while it collects", true},
		{"while it renders", true},
	}
	for _, at := range points {
		for _, removed := range []bool{false, true} {
			name := at.name + "/replaced"
			if removed {
				name = at.name + "/removed"
			}
			t.Run(name, func(t *testing.T) {
				h := newHold()
				old := newAccount(t, "key-old-0123456789abcdef", 1, func(next http.Handler) http.Handler {
					return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
						if at.name == "while it collects" && r.URL.Path == "/v1/global-stability" {
							h.wait()
						}
						next.ServeHTTP(w, r)
					})
				})
				accounts := map[string]*account{"a": old, "b": newAccount(t, "key-new-0123456789abcdef", 2, nil)}
				env := newEnv(40)
				dir := t.TempDir()
				set, err := newSet(targetsFile(t, dir, accounts, nil, "a"), defaults(), env.Env)
				if err != nil {
					t.Fatal(err)
				}
				switch at.name {
				case "before the lookup":
					targets.AroundLookup(set, h.wait, func() {})
				case "after the lookup":
					targets.AroundLookup(set, func() {}, h.wait)
				}
				w := httptest.NewRecorder()
				answered := make(chan struct{})
				go func() {
					defer close(answered)
					r := httptest.NewRequest(http.MethodGet, "/probe?target=a", nil).WithContext(context.Background())
					set.ServeProbe(heldWriter{w, h}, r)
				}()
				<-h.reached

				// The reload: a's API and key change, or a goes.
				if removed {
					targetsFile(t, dir, accounts, nil, "b")
				} else { // written elsewhere: the old target reads its own key file to its end
					replacement, err := os.ReadFile(targetsFile(t, t.TempDir(), map[string]*account{"a": accounts["b"]}, nil, "a"))
					if err != nil {
						t.Fatal(err)
					}
					writeAtomically(t, filepath.Join(dir, "targets.yml"), string(replacement))
				}
				if err := set.Reload(); err != nil {
					t.Fatal(err)
				}
				held := func(key string) bool { return env.Keys.Redact("echo "+key) == "echo "+redact.Mark }
				if held(old.key) != at.holds {
					t.Errorf("after the reload, the old key is held: %v; want %v (a probe holds the old target: %v)", held(old.key), at.holds, at.holds)
				}
				close(h.release)
				<-answered

				var up float64
				if w.Code == 200 {
					up, _ = samples(t, w.Body.String()).Get("global_stability_up")
				}
				oldRequests, _ := old.requests()
				switch {
				case w.Code == http.StatusServiceUnavailable:
					t.Fatalf("503: %s", w.Body)
				case at.holds && (w.Code != 200 || up != 1 || oldRequests == 0):
					t.Errorf("a probe holding the old target: %d, up %v, %d requests to the old API; want its answer", w.Code, up, oldRequests)
				case !at.holds && removed && w.Code != http.StatusBadRequest:
					t.Errorf("a probe that had not taken its removed target: %d, want 400 (unknown target)", w.Code)
				case !at.holds && !removed && (w.Code != 200 || up != 1 || oldRequests != 0):
					t.Errorf("a probe that had not taken its replaced target: %d, up %v, %d requests to the old API; want the new target's answer", w.Code, up, oldRequests)
				}
				if held(old.key) {
					t.Error("the old key is still held once the probe that held its target has ended")
				}
				if !held(accounts["b"].key) {
					t.Error("the key of the target served is not held")
				}
			})
		}
	}
}
