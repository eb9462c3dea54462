// SPDX-License-Identifier: Apache-2.0

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// apiLoadRows plays one hour of an HA pair (two servers scraping every
// 15 s, 7.5 s out of phase) against a simulator of 1,000 events, through
// collector's TestAPILoad in a testing/synctest bubble, and compares what
// the API was asked for and sent with a response store and without one.
func apiLoadRows(dir string) ([]row, error) {
	out := filepath.Join(dir, "apiload.json")
	cmd := exec.Command("go", "test", "-run", "^TestAPILoad$", "-count=1", "./collector")
	cmd.Env = append(os.Environ(), "BENCH_APILOAD_OUT="+out)
	if b, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("TestAPILoad (it also fails when an exported as_of is older than the API allowed): %w\n%s", err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		return nil, err
	}
	type load struct {
		Requests, Bytes float64
		Scrapes         int
	}
	var r struct {
		Duration    string
		Before      load
		After       load
		PlainBefore load `json:"plain_before"`
		PlainAfter  load `json:"plain_after"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, err
	}
	setup := fmt.Sprintf("%s, HA pair every 15 s (%d scrapes), 1,000 events", r.Duration, r.After.Scrapes)
	return []row{
		{"upstream requests, " + setup + ", API sending validators and max-age=30", "≥ 3× fewer than before",
			fmt.Sprintf("%.0f → %.0f (%.1f× fewer)", r.Before.Requests, r.After.Requests, r.Before.Requests/r.After.Requests), r.After.Requests*3 <= r.Before.Requests},
		{"body bytes received, same hour", "≥ 5× fewer than before",
			fmt.Sprintf("%.1f MB → %.2f MB (%.0f× fewer)", r.Before.Bytes/1e6, r.After.Bytes/1e6, r.Before.Bytes/r.After.Bytes), r.After.Bytes*5 <= r.Before.Bytes},
		{"exported as_of older than the API allowed, any scrape of that hour", "never", "never (TestAPILoad checks each)", true},
		{"upstream requests, same hour, API sending no caching headers", "no more than before",
			fmt.Sprintf("%.0f → %.0f (the summary's 15-minute refresh)", r.PlainBefore.Requests, r.PlainAfter.Requests), r.PlainAfter.Requests <= r.PlainBefore.Requests},
	}, nil
}
