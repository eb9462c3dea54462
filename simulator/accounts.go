// SPDX-License-Identifier: Apache-2.0

package simulator

import (
	"net/http"
	"strings"
)

// Accounts serves several simulated API accounts at one address, as one
// service serves its customers: a request is answered by the simulator
// whose key it carries (each its own world, faults and quota), and a key
// that is none of theirs gets the 401 any of them gives.
func Accounts(accounts ...*Simulator) http.Handler {
	byKey := map[string]*Simulator{}
	for _, a := range accounts {
		byKey[a.cfg.Key] = a
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if a, ok := byKey[key]; ok {
			a.ServeHTTP(w, r)
			return
		}
		if len(accounts) > 0 {
			accounts[0].ServeHTTP(w, r) // refuses the key as a lone simulator would
			return
		}
		http.Error(w, `{"error":"unauthorized","message":"no such key"}`, http.StatusUnauthorized)
	})
}
