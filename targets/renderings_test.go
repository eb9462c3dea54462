// SPDX-License-Identifier: Apache-2.0

package targets_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestRenderingsAreBoundedAcrossTargets: every target's probes take their
// place for a rendering from the process' one bound, not a bound of their
// own: with its one place taken, a probe of either target that cannot wait
// answers 503; once it is free, both render.
func TestRenderingsAreBoundedAcrossTargets(t *testing.T) {
	accounts := map[string]*account{"a": newAccount(t, "key-a-0123456789", 1, nil), "b": newAccount(t, "key-b-0123456789", 2, nil)}
	env := newEnv(0)
	env.Renderings = make(chan struct{}, 1)
	set, _ := loadSet(t, t.TempDir(), accounts, env, "a", "b")
	probeNow := func(name string) int { // a scrape whose deadline has passed: it cannot wait
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		w := httptest.NewRecorder()
		set.ServeProbe(w, httptest.NewRequest(http.MethodGet, "/probe?target="+name, nil).WithContext(ctx))
		return w.Code
	}
	env.Renderings <- struct{}{} // taken by a rendering of another target
	for _, name := range []string{"a", "b"} {
		if code := probeNow(name); code != http.StatusServiceUnavailable {
			t.Errorf("%s with the process' place taken: %d, want 503", name, code)
		}
	}
	<-env.Renderings
	for _, name := range []string{"a", "b"} {
		if code, body := probe(t, set, "target="+name); code != http.StatusOK || !hasUp(t, body) {
			t.Errorf("%s with the place free: %d\n%s", name, code, body)
		}
	}
}

func hasUp(t *testing.T, body string) bool {
	v, ok := samples(t, body).Get("global_stability_up")
	return ok && v == 1
}
