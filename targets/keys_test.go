// SPDX-License-Identifier: Apache-2.0

package targets_test

import (
	"net/http"
	"sync"
	"testing"

	"github.com/global-stability/global_stability_exporter/internal/redact"
)

// TestEveryKeyIsHeldFromBuildToLastProbe: the process's Redactor holds a
// target's key from the moment the target is built, before it sends
// anything (another target's API may echo it first); through a reload
// that replaces the target (the new one holds it too) or removes it while
// a probe of it is in flight; and lets go of it once that probe has ended.
func TestEveryKeyIsHeldFromBuildToLastProbe(t *testing.T) {
	release, arrived, once := make(chan struct{}), make(chan struct{}), sync.Once{}
	stay := newAccount(t, "key-stay-0123456789abcdef", 1, nil)
	leave := newAccount(t, "key-leave-0123456789abcdef", 2, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			once.Do(func() { close(arrived) })
			<-release
			h.ServeHTTP(w, r)
		})
	})
	accounts := map[string]*account{"stay": stay, "leave": leave}
	env := newEnv(40)
	dir := t.TempDir()
	set, err := newSet(targetsFile(t, dir, accounts, nil, "stay", "leave"), defaults(), env.Env)
	if err != nil {
		t.Fatal(err)
	}
	held := func(key string) bool { return env.Keys.Redact("echo "+key) == "echo "+redact.Mark }
	for _, a := range accounts {
		if n, _ := a.requests(); n > 0 || !held(a.key) {
			t.Fatalf("before any request (%d sent), a target's key is not held: %q", n, env.Keys.Redact(a.key))
		}
	}

	probed := make(chan struct{})
	go func() {
		defer close(probed)
		probe(t, set, "target=leave")
	}()
	<-arrived // the probe is in flight
	// stay changes (a new target, the same key); leave goes.
	targetsFile(t, dir, accounts, map[string]string{"stay": "    timeout: 20s\n"}, "stay")
	if err := set.Reload(); err != nil {
		t.Fatal(err)
	}
	if !held(leave.key) || !held(stay.key) {
		t.Errorf("after the reload, with a probe of the removed target in flight: held %v (removed), %v (changed); want both",
			held(leave.key), held(stay.key))
	}
	close(release)
	<-probed // the probe's end is the target's: nothing is left for later
	if held(leave.key) {
		t.Error("the removed target's key is still held after its last probe ended")
	}
	if !held(stay.key) {
		t.Error("the changed target's key was let go with the target it replaced")
	}
}
