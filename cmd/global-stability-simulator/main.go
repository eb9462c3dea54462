// SPDX-License-Identifier: Apache-2.0

// Command global-stability-simulator serves the simulated Global Stability
// Intelligence Service on its own, for curl, for other clients and for the
// bench harness.
//
//	go run ./cmd/global-stability-simulator --listen-address=127.0.0.1:10111 --key=demo-key-0123456789
//	curl -H 'Authorization: Bearer demo-key-0123456789' http://127.0.0.1:10111/v1/global-stability
//
// Each --key (or entry of --accounts-file) is an account with a world of its own (seeds
// --seed, --seed+1, ...), misbehaving on request: --trend, --revoked, --rate-limit, --fail-endpoint.
package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/alecthomas/kingpin/v2"

	"github.com/global-stability/global_stability_exporter/simulator"
)

func main() {
	app := kingpin.New("global-stability-simulator", "A simulated Global Stability Intelligence Service, for trying clients out. Its data is made up.")
	var cfg simulator.Config
	listen := app.Flag("listen-address", "Address to serve on.").Default("127.0.0.1:10111").String()
	// The simulator's key is a shared test value, not a secret: a flag is fine here.
	keys := app.Flag("key", "Bearer key the simulator accepts; repeat it for several accounts, each with a world of its own.").Envar("GLOBAL_STABILITY_SIMULATOR_KEY").Default("demo-key-0123456789").Strings()
	app.Flag("seed", "Seed of the simulated world.").Default("1").Uint64Var(&cfg.Seed)
	app.Flag("events", "Conflict events per hour window.").Default(fmt.Sprint(simulator.DefaultEvents)).IntVar(&cfg.Events)
	app.Flag("briefings", "Daily briefings served.").Default(fmt.Sprint(simulator.DefaultBriefings)).IntVar(&cfg.Briefings)
	app.Flag("page-size", "Items per page of the paged endpoints.").Default(fmt.Sprint(simulator.DefaultPageSize)).IntVar(&cfg.PageSize)
	app.Flag("cursor-param", "Query parameter carrying the pagination cursor.").Default(simulator.DefaultCursorParam).StringVar(&cfg.CursorParam)
	app.Flag("page-size-param", "Query parameter a client may use to set the page size (off when empty).").Default("").StringVar(&cfg.PageSizeParam)
	app.Flag("latency", "Delay added before every response.").Default("0s").DurationVar(&cfg.Latency)
	app.Flag("validators", "Send ETag and Last-Modified, and answer 304 Not Modified when they still hold (--no-validators: never).").Default("true").BoolVar(&cfg.Validators)
	app.Flag("cache-control", `Cache-Control header of every answer; "" sends none.`).Default(simulator.DemoCacheControl).StringVar(&cfg.CacheControl)
	app.Flag("rate-limit", "Requests allowed per clock hour, announced in RateLimit and X-RateLimit-* headers and enforced with 429 until the hour is over (a small one runs out in minutes); 0: no quota.").Default("0").IntVar(&cfg.RateLimit)
	app.Flag("trend", "Scripted course of the scores from the start: rising or falling a point a minute, or steady; empty: they wander.").Default("").StringVar(&cfg.Trend)
	app.Flag("revoked", "Refuse the key with 401, as for a revoked key.").BoolVar(&cfg.Revoked)
	app.Flag("fail-endpoint", "An endpoint (label, e.g. conflict) that answers 500 to every request; repeat it for several.").StringsVar(&cfg.Failing)
	accounts := app.Flag("accounts-file", "YAML file of accounts (instead of --key): accounts: [{key: ..., trend: rising, revoked: true, rate_limit: 60, failing: [conflict]}], each as the flags set it but for what it says.").String()
	kingpin.MustParse(app.Parse(os.Args[1:]))

	sims, err := simulator.Load(cfg, *keys, *accounts)
	app.FatalIfError(err, "accounts")
	// Bound first, so that the line saying where it serves is true. It
	// serves until a signal ends it: nothing it answers needs finishing.
	ln, err := new(net.ListenConfig).Listen(context.Background(), "tcp", *listen)
	app.FatalIfError(err, "--listen-address=%s", *listen)
	fmt.Fprintf(os.Stderr, "simulated Global Stability Intelligence Service on http://%s (data is made up)\n", ln.Addr())
	srv := &http.Server{Handler: simulator.Accounts(sims...), ReadHeaderTimeout: 10 * time.Second}
	app.FatalIfError(srv.Serve(ln), "serve")
}
