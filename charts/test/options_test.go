// SPDX-License-Identifier: Apache-2.0

package charttest

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// everyOption sets every value of values.yaml to something other than its
// default.
const everyOption = `
apiUrl: http://api.internal.example:8443/base
existingSecret: my-key
existingSecretKey: token
image:
  repository: registry.example.com/gse
  digest: sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
  pullPolicy: Always
imagePullSecrets: [{name: pull}]
fullnameOverride: gsx
replicas: 2
extraArgs: [--log.level=debug, --api.timeout=5s, --no-collector.briefings]
env: [{name: GLOBAL_STABILITY_API_MAX_PAGES, value: "3"}]
resources: {requests: {cpu: 20m, memory: 64Mi}, limits: {memory: 128Mi}}
goMemLimit: 100MiB
serviceAccount: {create: true, name: gsx-sa, annotations: {team: risk}}
podAnnotations: {note: hello}
podLabels: {tier: monitoring}
podSecurityContext: {runAsNonRoot: true, runAsUser: 1000, runAsGroup: 1000, fsGroup: 1000, seccompProfile: {type: RuntimeDefault}}
livenessProbe: {httpGet: {path: /, port: metrics}, periodSeconds: 45}
readinessProbe: {httpGet: {path: /, port: metrics}, periodSeconds: 15}
service: {type: NodePort, port: 9999, annotations: {a: b}, labels: {c: d}}
nodeSelector: {kubernetes.io/os: linux}
tolerations: [{key: dedicated, operator: Equal, value: monitoring, effect: NoSchedule}]
affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: zone, operator: In, values: [a]}]}]}}}
priorityClassName: low
serviceMonitor:
  interval: 30s
  scrapeTimeout: 10s
  labels: {release: kps}
  relabelings: [{targetLabel: env, replacement: prod}]
  metricRelabelings: [{action: drop, sourceLabels: [__name__], regex: go_.*}]
prometheusRule:
  labels: {release: kps}
  additionalAlertLabels: {team: risk}
dashboards:
  label: my_dashboard
  labelValue: "yes"
  folderAnnotation: my_folder
  folder: Risk
  namespace: grafana
  titlePrefix: "Risk / "
networkPolicy:
  enabled: true
  ingressFrom: [{namespaceSelector: {matchLabels: {name: monitoring}}}]
  apiTo: [{ipBlock: {cidr: 10.0.0.0/8}}]
`

// TestEveryOption: each value reaches its place in the manifests, which
// still decode strictly as their kinds.
func TestEveryOption(t *testing.T) {
	m := mustTemplate(t, "r", "risk", nil, writeValues(t, everyOption))
	d := only(t, "Deployment", m.deployments)
	pod := d.Spec.Template.Spec
	c := pod.Containers[0]
	check := func(what string, ok bool, got any) {
		t.Helper()
		if !ok {
			t.Errorf("%s: got %+v", what, got)
		}
	}
	check("fullnameOverride", d.Name == "gsx", d.Name)
	check("image.digest", c.Image == "registry.example.com/gse@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", c.Image)
	check("image.pullPolicy", c.ImagePullPolicy == corev1.PullAlways, c.ImagePullPolicy)
	check("imagePullSecrets", len(pod.ImagePullSecrets) == 1 && pod.ImagePullSecrets[0].Name == "pull", pod.ImagePullSecrets)
	check("replicas", *d.Spec.Replicas == 2, *d.Spec.Replicas)
	check("apiUrl", slices.Contains(c.Args, "--api.url=http://api.internal.example:8443/base"), c.Args)
	check("existingSecretKey", slices.Contains(c.Args, "--api.key-file=/etc/global-stability/token") && pod.Volumes[0].Secret.SecretName == "my-key" && pod.Volumes[0].Secret.Items[0].Key == "token", pod.Volumes)
	check("extraArgs", slices.Contains(c.Args, "--log.level=debug") && slices.Contains(c.Args, "--no-collector.briefings"), c.Args)
	check("env", envValue(c.Env, "GLOBAL_STABILITY_API_MAX_PAGES") == "3", c.Env)
	check("goMemLimit", envValue(c.Env, "GOMEMLIMIT") == "100MiB", c.Env)
	check("resources", c.Resources.Limits.Memory().String() == "128Mi" && c.Resources.Requests.Cpu().String() == "20m", c.Resources)
	check("serviceAccount.name", pod.ServiceAccountName == "gsx-sa" && m.serviceAccounts["gsx-sa"] != nil && m.serviceAccounts["gsx-sa"].Annotations["team"] == "risk", pod.ServiceAccountName)
	check("podAnnotations", d.Spec.Template.Annotations["note"] == "hello", d.Spec.Template.Annotations)
	check("podLabels", d.Spec.Template.Labels["tier"] == "monitoring", d.Spec.Template.Labels)
	check("podSecurityContext", *pod.SecurityContext.RunAsUser == 1000, pod.SecurityContext)
	check("livenessProbe", c.LivenessProbe.PeriodSeconds == 45, c.LivenessProbe)
	check("readinessProbe", c.ReadinessProbe.PeriodSeconds == 15, c.ReadinessProbe)
	check("nodeSelector", pod.NodeSelector["kubernetes.io/os"] == "linux", pod.NodeSelector)
	check("tolerations", len(pod.Tolerations) == 1 && pod.Tolerations[0].Key == "dedicated", pod.Tolerations)
	check("affinity", pod.Affinity != nil && pod.Affinity.NodeAffinity != nil, pod.Affinity)
	check("priorityClassName", pod.PriorityClassName == "low", pod.PriorityClassName)

	svc := m.services["gsx"]
	check("service", svc != nil && svc.Spec.Type == corev1.ServiceTypeNodePort && svc.Spec.Ports[0].Port == 9999 && svc.Annotations["a"] == "b" && svc.Labels["c"] == "d", svc)
	check("service.port reaches the container", c.Ports[0].ContainerPort == 9999 && slices.Contains(c.Args, "--web.listen-address=:9999"), c.Ports)

	sm := only(t, "ServiceMonitor", m.serviceMonitors)
	ep := sm.Spec.Endpoints[0]
	check("serviceMonitor.interval", string(ep.Interval) == "30s" && string(ep.ScrapeTimeout) == "10s", ep)
	check("serviceMonitor.labels", sm.Labels["release"] == "kps", sm.Labels)
	check("serviceMonitor.relabelings appended to the chart's", len(ep.RelabelConfigs) == 3 && ep.RelabelConfigs[2].TargetLabel == "env", ep.RelabelConfigs)
	check("serviceMonitor.metricRelabelings", len(ep.MetricRelabelConfigs) == 1 && ep.MetricRelabelConfigs[0].Regex == "go_.*", ep.MetricRelabelConfigs)

	pr := only(t, "PrometheusRule", m.prometheusRules)
	check("prometheusRule.labels", pr.Labels["release"] == "kps", pr.Labels)
	alerts := 0
	for _, g := range pr.Spec.Groups {
		for _, r := range g.Rules {
			if r.Alert != "" {
				alerts++
				check("additionalAlertLabels on "+r.Alert, r.Labels["team"] == "risk" && r.Labels["severity"] != "", r.Labels)
			} else {
				check("no alert labels on recording rule "+r.Record, len(r.Labels) == 0, r.Labels)
			}
		}
	}
	check("alerts", alerts >= 15, alerts)

	for name, cm := range m.configMaps {
		check("dashboards.namespace of "+name, cm.Namespace == "grafana", cm.Namespace)
		check("dashboards.label of "+name, cm.Labels["my_dashboard"] == "yes" && cm.Labels["grafana_dashboard"] == "", cm.Labels)
		check("dashboards.folder of "+name, cm.Annotations["my_folder"] == "Risk", cm.Annotations)
		for _, text := range cm.Data {
			var dash struct{ Title string }
			_ = json.Unmarshal([]byte(text), &dash)
			check("dashboards.titlePrefix", strings.HasPrefix(dash.Title, "Risk / "), dash.Title)
		}
	}

	np := m.networkPolicies["gsx"]
	if np == nil {
		t.Fatal("networkPolicy.enabled: no NetworkPolicy")
	}
	check("networkPolicy selects the pod", np.Spec.PodSelector.MatchLabels["app.kubernetes.io/instance"] == "r", np.Spec.PodSelector)
	check("networkPolicy.ingressFrom", len(np.Spec.Ingress) == 1 && len(np.Spec.Ingress[0].From) == 1 && np.Spec.Ingress[0].Ports[0].Port.String() == "metrics", np.Spec.Ingress)
	var ports []string
	for _, e := range np.Spec.Egress {
		for _, p := range e.Ports {
			ports = append(ports, fmt.Sprintf("%s/%s", *p.Protocol, p.Port.String()))
		}
	}
	check("networkPolicy egress: DNS and the API's port from apiUrl, nothing else", strings.Join(ports, ",") == "UDP/53,TCP/53,TCP/8443", ports)
	check("networkPolicy.apiTo", len(np.Spec.Egress) == 2 && np.Spec.Egress[1].To[0].IPBlock.CIDR == "10.0.0.0/8", np.Spec.Egress)

	checkRelease(t, m, "gsx", "risk")
}

// TestNetworkPolicyAPIPort: without networkPolicy.apiPort, the port egress
// allows is apiUrl's, or its scheme's.
func TestNetworkPolicyAPIPort(t *testing.T) {
	for url, want := range map[string]string{
		"https://api.example.com":         "443",
		"http://api.example.com/v2":       "80",
		"https://api.example.com:9443/x":  "9443",
		"https://user@api.example.com:81": "81",
	} {
		m := mustTemplate(t, "r", "ns", map[string]any{"apiUrl": url, "existingSecret": "k", "networkPolicy": map[string]any{"enabled": true}})
		np := only(t, "NetworkPolicy", m.networkPolicies)
		if got := np.Spec.Egress[len(np.Spec.Egress)-1].Ports[0].Port.String(); got != want {
			t.Errorf("apiUrl %s: egress to port %s, want %s", url, got, want)
		}
	}
	m := mustTemplate(t, "r", "ns", map[string]any{"apiUrl": "https://api.example.com", "existingSecret": "k", "networkPolicy": map[string]any{"enabled": true, "apiPort": 8080}})
	if got := only(t, "NetworkPolicy", m.networkPolicies).Spec.Egress[1].Ports[0].Port.String(); got != "8080" {
		t.Errorf("networkPolicy.apiPort 8080: egress to %s", got)
	}
}

// chartTestKey is the key of the API accounts of the tests that run the
// exporter.
const chartTestKey = "gsk_chart_test_0123456789abcdef"

// TestDeploymentRunsTheExporter: the container's args and environment,
// from the defaults and from every option, start the real exporter (an
// unknown or misspelt flag stops it), which reads its key from the file
// where the pod's Secret volume puts it and collects from a simulator of
// the API.
func TestDeploymentRunsTheExporter(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the exporter")
	}
	api := startSimulator(t, chartTestKey, exampleKey)
	for name, render := range map[string]func(t *testing.T) manifests{
		"defaults":     func(t *testing.T) manifests { return mustTemplate(t, "r", "ns", required) },
		"every option": func(t *testing.T) manifests { return mustTemplate(t, "r", "ns", nil, writeValues(t, everyOption)) },
		"kustomize":    kustomizeExample,
	} {
		t.Run(name, func(t *testing.T) {
			m := render(t)
			secrets := secretData{"gse-key": {"api-key": chartTestKey}, "my-key": {"token": chartTestKey}}
			addr, log := runPod(t, m, secrets, map[string]string{"--api.url": api})
			if up := sample(t, "http://"+addr+"/metrics", "global_stability_up", log); up != "1" {
				t.Errorf("global_stability_up %s\n%s", up, log)
			}
		})
	}
}
