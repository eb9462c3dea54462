{{/*
The chart's name, truncated to 63 characters (a DNS label).
*/}}
{{- define "gse.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
The full name of the release's objects: <release>-<chart>, or the release
name alone when it already holds the chart's name.
*/}}
{{- define "gse.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "gse.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "gse.selectorLabels" -}}
app.kubernetes.io/name: {{ include "gse.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "gse.labels" -}}
helm.sh/chart: {{ include "gse.chart" . }}
{{ include "gse.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- define "gse.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "gse.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "gse.image" -}}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag | toString) }}
{{- end }}
{{- end }}

{{/*
The Secret the key is read from: yours, or the one the chart creates from
apiKey. Empty in demo mode.
*/}}
{{- define "gse.secretName" -}}
{{- if .Values.existingSecret }}
{{- .Values.existingSecret }}
{{- else if .Values.apiKey }}
{{- printf "%s-api-key" (include "gse.fullname" .) }}
{{- end }}
{{- end }}

{{- define "gse.secretKey" -}}
{{- if .Values.existingSecret }}{{ .Values.existingSecretKey }}{{ else }}api-key{{ end }}
{{- end }}

{{/*
The job label of the release's series: the ServiceMonitor sets it, and
every rule and dashboard query selects it, with the namespace, so that two
releases never read each other's series.
*/}}
{{- define "gse.job" -}}
{{- include "gse.fullname" . }}
{{- end }}

{{/*
The PromQL label matchers that select this release's series. The mixin's
selector in files/ is the placeholder __GSE_SELECTOR__.
*/}}
{{- define "gse.promSelector" -}}
job="{{ include "gse.job" . }}", namespace="{{ .Release.Namespace }}"
{{- end }}

{{/*
With targets, the exporter's own series (its API requests per target,
reloads) come from a job of their own; each target's from the probe job,
gse.job.
*/}}
{{- define "gse.exporterJob" -}}
{{- printf "%s-exporter" (include "gse.fullname" .) }}
{{- end }}

{{- define "gse.exporterSelector" -}}
job="{{ include "gse.exporterJob" . }}", namespace="{{ .Release.Namespace }}"
{{- end }}

{{/* Where the exporter reads the targets' file, and each target's key. */}}
{{- define "gse.targetsFile" -}}/etc/global-stability/config/targets.yml{{- end }}
{{- define "gse.targetKeyDir" -}}/etc/global-stability/targets/{{ . }}{{- end }}
{{/* A target's key file in its directory: its Secret's entry of that name. */}}
{{- define "gse.targetKeyFile" -}}{{ default "api-key" .existingSecretKey }}{{- end }}

{{/*
The volume of a target's key: a DNS label whatever the target's name
(which may hold '.', '_' and capitals), unique by its place in the list
(prod.eu, prod_eu and Prod_EU make one readable part). Arguments: index,
name.
*/}}
{{- define "gse.targetVolume" -}}
{{- printf "key-%d-%s" (index . 0) (index . 1 | lower | replace "_" "-" | replace "." "-" | trunc 50 | trimAll "-") }}
{{- end }}

{{/*
gse.fromMixin renders a file of the mixin (JSON from `make mixin`, in
gse.mixinDir) for this release: the placeholders become the release's
selector, dashboard UID prefix and title prefix, each escaped for a JSON
string, and the cluster label. Arguments: (list $ "path.json"), the path
below the mixin's directory.
*/}}
{{- define "gse.fromMixin" -}}
{{- $ := index . 0 }}
{{- $file := index . 1 }}
{{- $uid := printf "gs-%s" (printf "%s/%s" $.Release.Namespace (include "gse.fullname" $) | sha256sum | trunc 12) }}
{{- $title := default (printf "Global Stability (%s/%s) / " $.Release.Namespace (include "gse.fullname" $)) $.Values.dashboards.titlePrefix }}
{{- $own := include "gse.promSelector" $ }}
{{- if $.Values.targets }}
{{- $own = include "gse.exporterSelector" $ }}
{{- end }}
{{- $.Files.Get (printf "%s%s" (include "gse.mixinDir" $) $file)
    | replace "__GSE_CLUSTER_LABEL__" $.Values.clusterLabel
    | replace "__GSE_EXPORTER_SELECTOR__" (include "gse.jsonEscape" $own)
    | replace "__GSE_SELECTOR__" (include "gse.jsonEscape" (include "gse.promSelector" $))
    | replace "__GSE_UID_PREFIX__" $uid
    | replace "__GSE_TITLE_PREFIX__" (include "gse.jsonEscape" $title) }}
{{- end }}

{{/*
Where the mixin's files for this release are: rendered for one Prometheus,
or, with clusterLabel, for a store of several clusters.
*/}}
{{- define "gse.mixinDir" -}}
{{- if .Values.clusterLabel }}files/multicluster/{{ else }}files/{{ end -}}
{{- end }}

{{/* A string escaped for the inside of a JSON string. */}}
{{- define "gse.jsonEscape" -}}
{{- toJson . | trimPrefix "\"" | trimSuffix "\"" }}
{{- end }}

{{/*
The API's port, for the NetworkPolicy: networkPolicy.apiPort, else the
port of apiUrl, else its scheme's.
*/}}
{{- define "gse.apiPort" -}}
{{- if .Values.networkPolicy.apiPort }}
{{- .Values.networkPolicy.apiPort }}
{{- else }}
{{- include "gse.portOf" .Values.apiUrl }}
{{- end }}
{{- end }}

{{/* The ports of every API the release reaches, one per line, each once. */}}
{{- define "gse.apiPorts" -}}
{{- if .Values.networkPolicy.apiPort }}
{{- .Values.networkPolicy.apiPort }}
{{- else if .Values.targets }}
{{- $ports := list }}
{{- range .Values.targets }}
{{- $ports = append $ports (include "gse.portOf" .apiUrl) }}
{{- end }}
{{- $ports | uniq | join "\n" }}
{{- else }}
{{- include "gse.portOf" .Values.apiUrl }}
{{- end }}
{{- end }}

{{/* The port of a URL: its own, or its scheme's. */}}
{{- define "gse.portOf" -}}
{{- $u := urlParse . }}
{{- $hostport := splitList ":" $u.host }}
{{- if gt (len $hostport) 1 }}
{{- last $hostport }}
{{- else if eq $u.scheme "http" }}80
{{- else }}443
{{- end }}
{{- end }}

{{/*
Values that cannot work stop `helm install` with a message naming the value.
*/}}
{{- define "gse.validate" -}}
{{- if and .Values.clusterLabel (not (regexMatch "^[a-zA-Z_][a-zA-Z0-9_]*$" (toString .Values.clusterLabel))) }}
{{- fail (printf "clusterLabel %q is not a Prometheus label name: want letters, digits and '_', e.g. cluster (the external label your Prometheus servers tell their clusters apart by)" (toString .Values.clusterLabel)) }}
{{- end }}
{{- if .Values.targets }}
{{- if or .Values.demo .Values.apiUrl .Values.existingSecret .Values.apiKey }}
{{- fail "targets: each target has its own apiUrl and existingSecret: unset apiUrl, existingSecret, apiKey and demo (the exporter refuses --config.file beside a URL or key of its own)" }}
{{- end }}
{{- $names := list }}
{{- range $i, $t := .Values.targets }}
{{- if not (regexMatch "^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$" (toString $t.name)) }}
{{- fail (printf "targets[%d].name %q: want letters, digits, '_', '.' and '-' (it is /probe?target=NAME and a label value)" $i (toString $t.name)) }}
{{- end }}
{{- if has $t.name $names }}
{{- fail (printf "targets[%d].name %q: another target has it" $i $t.name) }}
{{- end }}
{{- $names = append $names $t.name }}
{{- if not (or (hasPrefix "https://" (toString $t.apiUrl)) (hasPrefix "http://" (toString $t.apiUrl))) }}
{{- fail (printf "targets[%d] (%s).apiUrl %q: want the API's base address with its scheme, https://..." $i $t.name (toString $t.apiUrl)) }}
{{- end }}
{{- if not $t.existingSecret }}
{{- fail (printf "targets[%d] (%s).existingSecret is required: a Secret holding this target's key under existingSecretKey (default api-key)" $i $t.name) }}
{{- end }}
{{- end }}
{{- else if .Values.demo }}
{{- if or .Values.apiUrl .Values.existingSecret .Values.apiKey }}
{{- fail "demo: true runs against the built-in simulator: unset apiUrl, existingSecret and apiKey (the exporter refuses --demo with a real API)" }}
{{- end }}
{{- else }}
{{- if not .Values.apiUrl }}
{{- fail "apiUrl is required: the API's base address, e.g. --set apiUrl=https://api.example.com (or demo=true to try the exporter without an API)" }}
{{- end }}
{{- if not (or (hasPrefix "https://" .Values.apiUrl) (hasPrefix "http://" .Values.apiUrl)) }}
{{- fail (printf "apiUrl %q needs its scheme: https://..." .Values.apiUrl) }}
{{- end }}
{{- if and .Values.existingSecret .Values.apiKey }}
{{- fail "set existingSecret or apiKey, not both" }}
{{- end }}
{{- if not (or .Values.existingSecret .Values.apiKey) }}
{{- fail "the API key is required: existingSecret=<name of a Secret holding it under existingSecretKey (default api-key)>, or apiKey=<the key> for a quick trial" }}
{{- end }}
{{- end }}
{{- end }}

{{/*
Whether to render a kind of the prometheus-operator's API: its value is
true (always: helm template for a GitOps tool that does not pass the
cluster's API versions), false (never), or auto (the default: where the
cluster serves monitoring.coreos.com/v1/<kind>, so that the defaults install
on a cluster without the operator too). Arguments: root context, value,
kind, the value's name for messages, and optionally the API version (v1
unless given). Renders "true" or nothing.
*/}}
{{- define "gse.operatorKind" -}}
{{- $root := index . 0 -}}
{{- $enabled := toString (index . 1) -}}
{{- $kind := index . 2 -}}
{{- $version := "v1" -}}
{{- if gt (len .) 4 }}{{ $version = index . 4 }}{{ end -}}
{{- if eq $enabled "true" -}}
true
{{- else if eq $enabled "auto" -}}
{{- if $root.Capabilities.APIVersions.Has (printf "monitoring.coreos.com/%s/%s" $version $kind) }}true{{ end -}}
{{- else if ne $enabled "false" -}}
{{- fail (printf "%s is %q: want auto (where the cluster has the prometheus-operator's %s), true or false" (index . 3) $enabled $kind) -}}
{{- end -}}
{{- end -}}

{{/* The scheme the exporter serves: https when its web config turns TLS on. */}}
{{- define "gse.scheme" -}}
{{- if .Values.webConfig.tls }}https{{ else }}http{{ end -}}
{{- end -}}

{{/*
A probe as given, its httpGet on the scheme the exporter serves: with TLS
on (webConfig.tls), plain-HTTP probes would fail and restart it forever.
Arguments: root context, the probe.
*/}}
{{- define "gse.probe" -}}
{{- $root := index . 0 -}}
{{- $probe := deepCopy (index . 1) -}}
{{- if and $probe.httpGet $root.Values.webConfig.tls -}}
{{- $_ := set $probe.httpGet "scheme" "HTTPS" -}}
{{- end -}}
{{- toYaml $probe -}}
{{- end -}}

{{/* The targets' file of .Values.targets. */}}
{{- define "gse.targetsYAML" -}}
{{- $targets := list }}
{{- range .Values.targets }}
{{- $t := dict "name" .name "api_url" .apiUrl "api_key_file" (printf "%s/%s" (include "gse.targetKeyDir" .name) (include "gse.targetKeyFile" .)) }}
{{- $targets = append $targets (merge $t (default dict .settings)) }}
{{- end }}
{{- toYaml (dict "targets" $targets) }}
{{- end }}

{{/* What every endpoint of the ServiceMonitor has: port, scheme, timing, TLS, auth. */}}
{{- define "gse.endpointCommon" -}}
port: metrics
scheme: {{ default (include "gse.scheme" .) .Values.serviceMonitor.scheme }}
interval: {{ .Values.serviceMonitor.interval }}
scrapeTimeout: {{ .Values.serviceMonitor.scrapeTimeout }}
{{- with .Values.serviceMonitor.tlsConfig }}
tlsConfig:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.serviceMonitor.basicAuth }}
basicAuth:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}

{{/*
The chart's own relabelings of an endpoint: its job (the rules and
dashboards of the release select it, with the namespace), and the
operator's endpoint target label dropped. Arguments: root, job.
*/}}
{{- define "gse.endpointRelabelings" -}}
- targetLabel: job
  replacement: {{ index . 1 }}
# The operator labels each target endpoint="<port name>". The exporter's
# series carry their own endpoint label (the API endpoint they come from),
# which would then be renamed exported_endpoint, and every rule and panel
# reading it would find nothing.
- action: labeldrop
  regex: endpoint
{{- end }}
