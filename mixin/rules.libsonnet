// Recording rules the dashboards use. Rules the alerts read live in the
// alerts' group (alerts.libsonnet), ahead of them: a group runs its rules in
// order, so the alerts see this evaluation's values, not the last one's.
{
  prometheusRules+:: {
    local c = $._config,
    groups+: [
      {
        name: 'global_stability.recording',
        rules: [
          {
            // API request rate by endpoint and status code. Every label of
            // the counter is kept, so the dashboards' selector still matches.
            record: 'global_stability:api_requests:rate5m',
            expr: 'rate(global_stability_api_requests_total{%(selector)s}[5m])' % c,
          },
        ],
      },
    ],
  },
}
