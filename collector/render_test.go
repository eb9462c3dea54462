// SPDX-License-Identifier: Apache-2.0

package collector

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/go-kit/log"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"google.golang.org/protobuf/proto"

	"github.com/global-stability/global_stability_exporter/client"
	"github.com/global-stability/global_stability_exporter/endpoint"
	"github.com/global-stability/global_stability_exporter/internal/testutil/pipenet"
	"github.com/global-stability/global_stability_exporter/simulator"
)

const renderKey = "render-test-key-0123"

func family(fams []*dto.MetricFamily, name string) *dto.MetricFamily {
	for _, f := range fams {
		if f.GetName() == name {
			return f
		}
	}
	return nil
}

// newRenderCollections are collections of every endpoint of sim, over
// in-memory connections: call it in a synctest bubble.
func newRenderCollections(t *testing.T, sim *simulator.Simulator, c endpoint.Config) *Collections {
	t.Helper()
	net := pipenet.Serve(sim)
	t.Cleanup(net.Close)
	cl, err := client.New(client.Config{BaseURL: "http://api.test", APIKey: client.StaticKey(renderKey), HTTPClient: net.Client()})
	if err != nil {
		t.Fatal(err)
	}
	return NewCollections(Config{Client: cl, Logger: log.NewNopLogger(), Endpoints: endpoint.All(), Endpoint: c})
}

// TestScrapesThatSawAllShareOneRendering: concurrent scrapes that waited
// for every result of one collection are handed the same families, not a
// copy each (the memory of 40 concurrent scrapes depends on it); a scrape
// cut short by its deadline renders what it saw itself.
func TestScrapesThatSawAllShareOneRendering(t *testing.T) {
	synctest.Test(t, testScrapesThatSawAllShareOneRendering)
}

func testScrapesThatSawAllShareOneRendering(t *testing.T) {
	s := newRenderCollections(t, simulator.New(simulator.Config{Key: renderKey, Latency: 300 * time.Millisecond}), endpoint.Config{})

	var wg sync.WaitGroup
	results := make([][]*dto.MetricFamily, 3)
	for i := range results {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if i == 2 {
				// Too short for the API: it sees failures, not the collection.
				ctx, cancel = context.WithTimeout(context.Background(), 50*time.Millisecond)
				defer cancel()
			}
			var err error
			if results[i], _, err = s.Gather(ctx); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	a, b, short := family(results[0], "global_stability_score"), family(results[1], "global_stability_score"), family(results[2], "global_stability_up")
	// The families are each scrape's own (prometheus.Gatherers joins them
	// with its own series); the metrics in them are the one rendering.
	if a == nil || b == nil || a.Metric[0] != b.Metric[0] {
		t.Errorf("two scrapes of one collection got different renderings (%v, %v)", a, b)
	}
	if short == nil || short.GetMetric()[0].GetGauge().GetValue() != 0 {
		t.Errorf("the scrape cut short should render its own failure: %v", short)
	}
	if family(results[2], "global_stability_score") != nil {
		t.Error("the scrape cut short shows the score it never waited for")
	}
}

// TestGatheringLeavesTheSharedRenderingAsItIs: merging a scrape's series
// with a shared rendering (prometheus.Gatherers) joins families of one name
// without changing the rendering other scrapes are encoding.
func TestGatheringLeavesTheSharedRenderingAsItIs(t *testing.T) {
	f := func(name string, values ...float64) *dto.MetricFamily {
		mf := &dto.MetricFamily{Name: proto.String(name), Type: dto.MetricType_GAUGE.Enum()}
		for _, v := range values {
			mf.Metric = append(mf.Metric, &dto.Metric{Label: []*dto.LabelPair{{Name: proto.String("v"), Value: proto.String(fmt.Sprint(v))}}, Gauge: &dto.Gauge{Value: proto.Float64(v)}})
		}
		return mf
	}
	first := []*dto.MetricFamily{f("a", 1), f("c", 3)}
	second := []*dto.MetricFamily{f("b", 2), f("c", 4)}
	gatherer := func(f []*dto.MetricFamily) prometheus.Gatherer {
		return prometheus.GathererFunc(func() ([]*dto.MetricFamily, error) { return f, nil })
	}
	merged, err := prometheus.Gatherers{gatherer(first), gatherer(second)}.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, mf := range merged {
		names = append(names, mf.GetName())
	}
	if len(merged) != 3 || names[0] != "a" || names[1] != "b" || names[2] != "c" || len(merged[2].Metric) != 2 {
		t.Fatalf("merged = %v, want a, b, c with c's two metrics", names)
	}
	if len(first[1].Metric) != 1 || len(second[1].Metric) != 1 {
		t.Error("merging changed a family it was given: a shared rendering must stay as it is")
	}
}

// TestAWarmStoreSharesOneRendering: scrapes whose collections reuse every
// answer from the store without a request (each scrape a collection of its
// own) share one rendering; once an answer is new, it is rendered anew.
func TestAWarmStoreSharesOneRendering(t *testing.T) {
	synctest.Test(t, testAWarmStoreSharesOneRendering)
}

func testAWarmStoreSharesOneRendering(t *testing.T) {
	sim := simulator.New(simulator.Config{Key: renderKey, CacheControl: "max-age=600"})
	s := newRenderCollections(t, sim, endpoint.Config{Store: endpoint.NewStore(true)})
	gather := func() *dto.Metric {
		fams, _, err := s.Gather(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return family(fams, "global_stability_score").Metric[0]
	}
	fetched := gather()
	first, second := gather(), gather()
	if first != second {
		t.Error("two scrapes of a warm store rendered its answers twice")
	}
	if first == fetched {
		t.Error("the collection that fetched the answers shares its rendering with those reusing them: its durations differ")
	}
	s.Endpoint.Store = endpoint.NewStore(true) // every answer new again
	if third, fourth := gather(), gather(); third == first || fourth == first || fourth == third {
		t.Error("new answers were given an old rendering, or the fetch's rendering was shared")
	}
}
