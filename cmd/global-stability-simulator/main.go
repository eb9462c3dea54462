// Command global-stability-simulator serves the simulated Global Stability
// Intelligence Service on its own, for curl, for other clients and for the
// bench harness.
//
//	go run ./cmd/global-stability-simulator --listen-address=127.0.0.1:10111 --key=demo-key-0123456789
//	curl -H 'Authorization: Bearer demo' http://127.0.0.1:10111/v1/global-stability
//
// With --key repeated, it serves one account per key, each with a world of
// its own (seeds --seed, --seed+1, ...), as one service serves several
// customers: try the exporter's targets' file against it.
package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/alecthomas/kingpin/v2"

	"github.com/global-stability/global_stability_exporter/simulator"
)

func main() {
	app := kingpin.New("global-stability-simulator", "A simulated Global Stability Intelligence Service, for trying clients out. Its data is made up.")
	listen := app.Flag("listen-address", "Address to serve on.").Default("127.0.0.1:10111").String()
	// The simulator's key is a shared test value, not a secret: a flag is fine here.
	keys := app.Flag("key", "Bearer key the simulator accepts; repeat it for several accounts, each with a world of its own.").Envar("GLOBAL_STABILITY_SIMULATOR_KEY").Default("demo-key-0123456789").Strings()
	seed := app.Flag("seed", "Seed of the simulated world.").Default("1").Uint64()
	events := app.Flag("events", "Conflict events per hour window.").Default(fmt.Sprint(simulator.DefaultEvents)).Int()
	briefings := app.Flag("briefings", "Daily briefings served.").Default(fmt.Sprint(simulator.DefaultBriefings)).Int()
	pageSize := app.Flag("page-size", "Items per page of /v1/conflict and /v1/briefings.").Default(fmt.Sprint(simulator.DefaultPageSize)).Int()
	cursorParam := app.Flag("cursor-param", "Query parameter carrying the pagination cursor.").Default(simulator.DefaultCursorParam).String()
	pageSizeParam := app.Flag("page-size-param", "Query parameter a client may use to set the page size (off when empty).").Default("").String()
	latency := app.Flag("latency", "Delay added before every response.").Default("0s").Duration()
	validators := app.Flag("validators", "Send ETag and Last-Modified, and answer 304 Not Modified when they still hold (--no-validators: never).").Default("true").Bool()
	cacheControl := app.Flag("cache-control", `Cache-Control header of every answer; "" sends none.`).Default(simulator.DemoCacheControl).String()
	rateLimit := app.Flag("rate-limit", "Requests allowed per clock hour, announced in RateLimit and X-RateLimit-* headers and enforced with 429; 0: no quota.").Default("0").Int()
	kingpin.MustParse(app.Parse(os.Args[1:]))

	var sims []*simulator.Simulator
	for i, key := range *keys {
		sims = append(sims, simulator.New(simulator.Config{
			Key: key, Seed: *seed + uint64(i), Events: *events, Briefings: *briefings,
			PageSize: *pageSize, CursorParam: *cursorParam, PageSizeParam: *pageSizeParam,
			Latency: *latency, Validators: *validators, CacheControl: *cacheControl, RateLimit: *rateLimit,
		}))
	}
	os.Exit(serve(*listen, simulator.Accounts(sims...)))
}

// serve binds first, so the line that says where it serves is printed only
// once that is true, and runs until SIGINT or SIGTERM, letting requests in
// flight finish.
func serve(addr string, handler http.Handler) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ln, err := new(net.ListenConfig).Listen(ctx, "tcp", addr)
	if err != nil {
		fmt.Fprintf(os.Stderr, "--listen-address=%s: %v\n", addr, err)
		return 1
	}
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	fmt.Fprintf(os.Stderr, "simulated Global Stability Intelligence Service on http://%s (data is made up)\n", ln.Addr())
	select {
	case err := <-served:
		fmt.Fprintln(os.Stderr, err)
		return 1
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		fmt.Fprintf(os.Stderr, "shutdown: %v\n", err)
		return 1
	}
	return 0
}
