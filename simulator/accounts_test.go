// SPDX-License-Identifier: Apache-2.0

package simulator_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/global-stability/global_stability_exporter/simulator"
)

// TestAccountsAnswerEachKeyWithItsOwnWorld: one server, several accounts:
// each key gets its own world, and any other key the 401 a lone simulator
// gives.
func TestAccountsAnswerEachKeyWithItsOwnWorld(t *testing.T) {
	a := simulator.New(simulator.Config{Key: "key-a", Seed: 1})
	b := simulator.New(simulator.Config{Key: "key-b", Seed: 2})
	srv := httptest.NewServer(simulator.Accounts(a, b))
	defer srv.Close()
	get := func(key string) int {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+"/v1/global-stability", nil)
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		return resp.StatusCode
	}
	codeA, codeB := get("key-a"), get("key-b")
	if codeA != 200 || codeB != 200 {
		t.Fatalf("statuses %d, %d", codeA, codeB)
	}
	if a.Requests("global-stability") != 1 || b.Requests("global-stability") != 1 {
		t.Errorf("each account's requests: %d, %d; want 1 each", a.Requests("global-stability"), b.Requests("global-stability"))
	}
	if code := get("key-c"); code != http.StatusUnauthorized {
		t.Errorf("another key: %d, want 401", code)
	}
}
