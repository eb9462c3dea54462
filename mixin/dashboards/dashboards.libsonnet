{
  grafanaDashboards+:: {
    'global-stability-overview.json': (import 'overview.libsonnet')($._config),
    'global-stability-pillar.json': (import 'pillar.libsonnet')($._config),
  },
}
