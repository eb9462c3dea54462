// Renders the mixin into the files the repository ships, keyed by their
// path from the repository's root (jsonnet -S -m writes each):
//
//   jsonnet -S -m . --tla-code config='{}' mixin/render.jsonnet
//
// (-c as well creates the directories, for an output directory of your own.)
//
// config overrides fields of config.libsonnet, e.g.
//   --tla-code config='{selector: "job=\"gsx\", env=\"prod\""}'
function(config={})
  local mixin = (import 'mixin.libsonnet') + { _config+:: config };
  local c = mixin._config;
  local groups = mixin.prometheusRules.groups + mixin.prometheusAlerts.groups;
  local yaml(doc) = std.manifestYamlDoc(doc, indent_array_in_object=true, quote_keys=false) + '\n';
  local generated = |||
    # Generated from mixin/ by `make mixin`: do not edit by hand. Change
    # mixin/config.libsonnet (or pass your own config, see
    # docs/mixin.md#rendering-your-own) and render again.
  |||;
  local thresholds = |||
    #
    # Thresholds (mixin/config.libsonnet):
    #   composite score warning above %(scoreWarning)s, critical above %(scoreCritical)s, for %(scoreFor)s
    #   pillar score above %(pillarScoreHigh)s for %(pillarScoreFor)s
    #   composite more than %(rapidRise)s above its low of the past hour, for %(rapidRiseFor)s
    #   pillar delta_24h above %(pillarSurge)s (the API's units) for %(pillarSurgeFor)s
    #   data older than %(dataStaleSeconds)ss (summary: %(summaryStaleSeconds)ss) for %(staleFor)s
    #   while the exporter answers: composite score absent for %(scoreUnavailableFor)s (critical),
    #   a pillar score absent for %(pillarScoreUnavailableFor)s, an as_of absent for %(asOfUnavailableFor)s
    # Selectors: the accounts' series %(selector)s, the exporter's own %(exporterSelector)s
  ||| % c;
  // The Helm chart's copies: the same mixin with placeholders that the
  // chart's templates replace with each release's own selector, dashboard
  // UIDs and titles (charts/global-stability-exporter/templates/_helpers.tpl).
  local chart = (import 'mixin.libsonnet') + { _config+:: config + {
    selector: '__GSE_SELECTOR__',
    exporterSelector: '__GSE_EXPORTER_SELECTOR__',
    dashboardUIDPrefix: '__GSE_UID_PREFIX__',
    dashboardTitlePrefix: '__GSE_TITLE_PREFIX__',
  } };
  // And for a release whose Prometheus shares a store with other clusters'
  // (the chart's clusterLabel): the label's name is a placeholder too.
  local chartMultiCluster = chart { _config+:: { showMultiCluster: true, clusterLabel: '__GSE_CLUSTER_LABEL__' } };
  local chartDir = 'charts/global-stability-exporter/files/';
  local json(doc) = std.manifestJsonEx(doc, '  ') + '\n';
  local chartFiles(m, dir) = {
    [dir + 'rules.json']: json({ groups: m.prometheusRules.groups + m.prometheusAlerts.groups }),
  } + {
    [dir + 'dashboards/' + name]: json(m.grafanaDashboards[name])
    for name in std.objectFields(m.grafanaDashboards)
  };
  // The dashboards once, in dashboards/: Grafana's provisioning and the
  // kustomize example (dashboards/kustomization.yaml) read them there.
  chartFiles(chart, chartDir) + chartFiles(chartMultiCluster, chartDir + 'multicluster/') + {
    ['dashboards/' + name]: json(mixin.grafanaDashboards[name])
    for name in std.objectFields(mixin.grafanaDashboards)
  } + {
    'alerts/global_stability.rules.yml': generated + thresholds + yaml({ groups: groups }),
    'examples/kubernetes/prometheusrule.yaml': generated + |||
      #
      # The alerting and recording rules of alerts/global_stability.rules.yml, for
      # the prometheus-operator. A Prometheus loads only the PrometheusRules its
      # ruleSelector matches; kube-prometheus-stack's default selects the label
      # release: <your Helm release name>.
    ||| + yaml({
      apiVersion: 'monitoring.coreos.com/v1',
      kind: 'PrometheusRule',
      metadata: {
        name: 'global-stability-exporter',
        labels: {
          'app.kubernetes.io/name': 'global-stability-exporter',
          release: 'kube-prometheus-stack',
        },
      },
      spec: { groups: groups },
    }),
  }
