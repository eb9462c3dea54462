// SPDX-License-Identifier: Apache-2.0

package simulator

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"

	"go.yaml.in/yaml/v2"

	described "github.com/global-stability/global_stability_exporter/endpoint"
)

// Accounts serves several simulated API accounts (at least one) at one
// address, as one service serves its customers: a request is answered by the
// simulator whose key it carries (each its own world, faults and quota), and
// a key that is none of theirs gets the 401 any of them gives.
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
		accounts[0].ServeHTTP(w, r) // refuses the key as a lone simulator would
	})
}

// Load returns the accounts to serve, each as defaults sets it with the
// seeds defaults.Seed, +1, ...: one per key, or, from an accounts' file
// (when file is not empty), one per entry, but for what the entry sets, by
// Config's yaml names:
//
//	accounts:
//	  - key: prod-key-0123456789
//	    trend: rising
//	  - key: staging-key-0123456789
//	    revoked: true
//	  - key: partner-key-0123456789
//	    rate_limit: 60
//	    failing: [conflict]
//
// It reports every problem at once, each with its account.
func Load(defaults Config, keys []string, file string) ([]*Simulator, error) {
	var entries []yaml.MapSlice
	if file == "" {
		for _, key := range keys {
			entries = append(entries, yaml.MapSlice{{Key: "key", Value: key}})
		}
	} else {
		b, err := os.ReadFile(file) //nolint:gosec // G304: the operator's own file
		if err != nil {
			return nil, err
		}
		var doc struct {
			Accounts []yaml.MapSlice `yaml:"accounts"`
		}
		if err := yaml.UnmarshalStrict(b, &doc); err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		entries = doc.Accounts
	}
	var accounts []*Simulator
	var problems []error
	for i, entry := range entries {
		c := defaults
		c.Seed += uint64(i)
		// The entry over a copy of the defaults: what it does not set stays.
		raw, _ := yaml.Marshal(entry)
		if err := errors.Join(yaml.UnmarshalStrict(raw, &c), c.check()); err != nil {
			problems = append(problems, fmt.Errorf("account %d: %w", i+1, err))
		}
		accounts = append(accounts, New(c))
	}
	if len(accounts) == 0 {
		problems = append(problems, errors.New("no account: give a key, or an accounts' file listing some"))
	}
	return accounts, errors.Join(problems...)
}

// check reports what a simulator could not do as c says.
func (c Config) check() error {
	var problems []error
	if c.Key == "" {
		problems = append(problems, errors.New("no key"))
	}
	if c.Trend != "" && !slices.Contains(Trends, c.Trend) {
		problems = append(problems, fmt.Errorf("trend %q: want one of %s", c.Trend, strings.Join(Trends, ", ")))
	}
	for _, f := range c.Failing {
		if !slices.ContainsFunc(described.All(), func(e *described.Endpoint) bool { return e.Label == f }) {
			problems = append(problems, fmt.Errorf("failing: %q is no endpoint label (docs/metrics.md lists them)", f))
		}
	}
	return errors.Join(problems...)
}
