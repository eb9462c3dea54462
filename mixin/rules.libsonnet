// Recording rules, for the dashboards. The alerts do not read them: each
// alert computes what it needs from the exporter's own series, with the
// same expression (the hidden _expr below), so an alert neither lags one
// evaluation behind this group (Prometheus runs groups independently) nor
// goes blind when only the alerts are loaded.
{
  // Expressions shared by a recording rule and an alert, so the two cannot
  // drift apart. m: extra label matchers, '' for none.
  _expr+:: {
    local c = $._config,
    local sel(m) = if m == '' then c.selector else '%s, %s' % [c.selector, m],
    // Age of each endpoint's data: of the newest as_of of the gap window,
    // so that an as_of missing from a scrape or two does not blank it.
    dataAge(m=''):: 'time() - max_over_time(global_stability_as_of_timestamp_seconds{%s}[%s])' % [sel(m), c.gapWindow],
    // How far the composite has risen above its lowest point of the past
    // hour: its lowest value of the gap window, so that one high scrape is
    // not a rise, and a scrape without a score does not end one.
    scoreRise1h:: 'min_over_time(global_stability_score{%(selector)s}[%(gapWindow)s]) - min_over_time(global_stability_score{%(selector)s}[1h])' % c,
    // The lowest value of a series over the gap window: above a threshold
    // means every scrape of the window was, and a scrape without it does
    // not reset the alert's clock.
    lowest(metric):: 'min_over_time(%s{%s}[%s])' % [metric, c.selector, c.gapWindow],
  },

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
            expr: 'rate(global_stability_api_requests_total{%(exporterSelector)s}[5m])' % c,
          },
          {
            // Age of each endpoint's data: the data-age panels. The staleness
            // alerts compare the same expression with their thresholds.
            record: 'global_stability:data_age_seconds',
            expr: $._expr.dataAge(),
          },
          {
            // The "rise above the hour's low" panel; GlobalStabilityRapidDeterioration
            // watches the same expression.
            record: 'global_stability:score_rise_1h',
            expr: $._expr.scoreRise1h,
          },
        ],
      },
    ],
  },
}
