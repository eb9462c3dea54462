// The one place to adapt the mixin to your set-up. Override any field:
//
//   (import 'mixin.libsonnet') + { _config+:: { selector: 'job="gsx", env="prod"' } }
//
// then render as the Makefile's mixin target does.
{
  _config+:: {
    // Label matchers that select the series of the API accounts, in every
    // rule, alert and panel query: the job that scrapes /metrics with one
    // account, or the job that scrapes /probe?target=NAME with several (a
    // targets' file, README "Several accounts": each target an instance,
    // named by it). Also applied to up{}, so use target labels (job, env,
    // ...), not metric labels.
    selector: 'job="global_stability"',

    // Label matchers that select the exporter's own series (its API
    // requests, quota and reloads per account, whether it runs --demo):
    // its /metrics, which is the job of selector with one account and a
    // job of its own beside the probes with several. The default matches
    // both of the README's scrape configurations, so the rendered files
    // work unchanged with one account or several. With a selector of your
    // own, set this too: the same selector with one account, your
    // exporter's job with several.
    exporterSelector: 'job=~"global_stability|global_stability_exporter"',

    // Several clusters in one store (Thanos, Mimir, Cortex, or a Prometheus
    // receiving the others' remote write), each Prometheus telling its
    // series apart by an external label, clusterLabel. With
    // showMultiCluster, every rule and alert keeps that label where it
    // aggregates or matches across series, so that a fault in one cluster
    // fires for that cluster only, and every dashboard gets a cluster
    // variable before the others, its queries selecting it. Off, the
    // rendered rules and dashboards are those of one Prometheus.
    clusterLabel: 'cluster',
    showMultiCluster: false,

    // How long a value the alerts read may go missing without resetting
    // them: an endpoint failing every other scrape, a score null one
    // scrape in ten, an as_of missing every fourth. The threshold alerts
    // read the lowest value of this window (one high scrape alone never
    // pages), the staleness alerts the newest as_of in it. A few scrape
    // intervals: raise it with a scrape interval above a minute.
    gapWindow: '5m',

    // Composite score thresholds (0-100, lower is more stable). The overview
    // dashboard's gauge colours at the same two values.
    scoreWarning: 60,
    scoreCritical: 75,
    scoreFor: '15m',
    // A single pillar's score.
    pillarScoreHigh: 80,
    pillarScoreFor: '15m',
    // Rise of the composite above its lowest value of the past hour, and
    // how long the rise must last: one sample is not a trend.
    rapidRise: 10,
    rapidRiseFor: '5m',
    // A pillar's delta_24h above this. The spec does not give delta_24h a
    // unit; the reference API and the simulator use score points. If your
    // API reports a ratio or a percentage, change the threshold to match.
    pillarSurge: 15,
    pillarSurgeFor: '15m',
    // Age of as_of beyond which the data counts as stale.
    dataStaleSeconds: 3600,  // every as_of but the summary's
    summaryStaleSeconds: 1800,  // the summary refreshes every 15 minutes: two missed
    staleFor: '5m',
    // The exporter and the API.
    // An input of the alerts absent while the exporter answers, whatever the
    // reason (its endpoint failing, its value invalid or missing): the alerts
    // that read it are blind.
    scoreUnavailableFor: '10m',  // the composite score: every score alert is blind
    pillarScoreUnavailableFor: '15m',  // one pillar's score, from the overview
    asOfUnavailableFor: '15m',  // an as_of that DataStale or SummaryStale reads
    endpointFailingFor: '15m',  // any other endpoint failing
    exporterDownFor: '5m',
    configReloadFailedFor: '10m',  // the targets' file (--config.file) did not load
    exporterAbsentFor: '10m',
    invalidDataFor: '30m',
    // The API's quota, where it announces one (rate-limit headers): warn
    // while less than this share of it is left, unless it resets within a
    // minute anyway.
    quotaLowPercent: 10,
    quotaLowFor: '5m',
    demoDataFor: '5m',

    // Where each alert's runbook_url points: this base, then #<alertname in lower case>.
    runbookURL: 'https://github.com/global-stability/global_stability_exporter/blob/main/docs/runbooks.md',

    // Dashboards.
    dashboardUIDPrefix: 'global-stability',
    dashboardTitlePrefix: 'Global Stability / ',
    dashboardTags: ['global-stability', 'prometheus'],
    dashboardRefresh: '1m',
    dashboardTimeFrom: 'now-6h',
  },

  // A selector changed alone would leave the exporter's own series (the
  // quota, demo and reload alerts, the API panels) on the default jobs.
  assert self._config.selector == 'job="global_stability"' || self._config.exporterSelector != 'job=~"global_stability|global_stability_exporter"' :
         'mixin config: with a selector of your own, set exporterSelector as well (your selector with one account; the job of the exporter\'s own /metrics with several)',
}
