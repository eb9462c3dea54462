// The global_stability_exporter monitoring mixin: alerts, recording rules
// and dashboards from one config (config.libsonnet).
(import 'config.libsonnet') +
(import 'rules.libsonnet') +
(import 'alerts.libsonnet') +
(import 'dashboards/dashboards.libsonnet')
