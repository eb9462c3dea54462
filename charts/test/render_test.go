// SPDX-License-Identifier: Apache-2.0

// Package charttest proves the Helm chart and the kustomize example without
// a cluster: what `helm template` and `kustomize build` render decodes
// strictly as the Kubernetes kinds it claims to be (an unknown or misplaced
// field is an error, as the API server would reject or silently drop it),
// passes the API server's checks of names and volumes, and carries what
// the values asked for. A module of its own, so that the
// Kubernetes API types stay out of the exporter's go.mod.
package charttest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	monitoringv1alpha1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

const chartDir = "../global-stability-exporter"

// manifests are the objects of one rendering, by kind and then name.
type manifests struct {
	deployments     map[string]*appsv1.Deployment
	services        map[string]*corev1.Service
	serviceAccounts map[string]*corev1.ServiceAccount
	secrets         map[string]*corev1.Secret
	configMaps      map[string]*corev1.ConfigMap
	networkPolicies map[string]*networkingv1.NetworkPolicy
	serviceMonitors map[string]*monitoringv1.ServiceMonitor
	prometheusRules map[string]*monitoringv1.PrometheusRule
	amConfigs       map[string]*monitoringv1alpha1.AlertmanagerConfig
	kinds           []string // in the order rendered
}

// tool finds a command on PATH or in GOPATH/bin (where the Makefile's
// chart-tools target installs it). Missing, it fails the test in CI and
// skips it elsewhere.
func tool(t *testing.T, name string) string {
	t.Helper()
	if p, ok := findTool(name); ok {
		return p
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("%s not found: make chart-tools installs it", name)
	}
	t.Skipf("%s not found: make chart-tools installs it", name)
	return ""
}

func findTool(name string) (string, bool) {
	if p, err := exec.LookPath(name); err == nil {
		return p, true
	}
	if gopath, err := exec.Command("go", "env", "GOPATH").Output(); err == nil {
		p := filepath.Join(strings.TrimSpace(string(gopath)), "bin", name)
		if _, err := os.Stat(p); err == nil {
			return p, true
		}
	}
	return "", false
}

// helmTemplate renders the chart as release name in namespace, with the
// values given as --set-json pairs (key → JSON) and files, and returns the
// decoded objects, or helm's error.
func helmTemplate(t *testing.T, release, namespace string, values map[string]any, valueFiles ...string) (manifests, error) {
	t.Helper()
	return helmTemplateWith(t, operatorAPIs, release, namespace, values, valueFiles...)
}

// operatorAPIs are the prometheus-operator's kinds the chart renders where
// a cluster serves them: what helm sees of a cluster with the operator.
var operatorAPIs = []string{"monitoring.coreos.com/v1/ServiceMonitor", "monitoring.coreos.com/v1/PrometheusRule"}

// helmTemplateWith is helmTemplate on a cluster that serves apis (nil: a
// plain cluster, without the operator's kinds).
func helmTemplateWith(t *testing.T, apis []string, release, namespace string, values map[string]any, valueFiles ...string) (manifests, error) {
	t.Helper()
	args := []string{"template", release, chartDir, "--namespace", namespace}
	for _, api := range apis {
		args = append(args, "--api-versions", api)
	}
	for k, v := range values {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		args = append(args, "--set-json", k+"="+string(b))
	}
	for _, f := range valueFiles {
		args = append(args, "--values", f)
	}
	cmd := exec.Command(tool(t, "helm"), args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return manifests{}, fmt.Errorf("helm %s: %w: %s", strings.Join(args, " "), err, stderr.String())
	}
	return decodeStrictly(t, out), nil
}

// mustTemplate is helmTemplate that fails the test on an error.
func mustTemplate(t *testing.T, release, namespace string, values map[string]any, valueFiles ...string) manifests {
	t.Helper()
	m, err := helmTemplate(t, release, namespace, values, valueFiles...)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// decodeStrictly splits a multi-document YAML stream and decodes each
// document into the type of its kind, refusing unknown fields.
func decodeStrictly(t *testing.T, stream []byte) manifests {
	t.Helper()
	m := manifests{
		deployments: map[string]*appsv1.Deployment{}, services: map[string]*corev1.Service{},
		serviceAccounts: map[string]*corev1.ServiceAccount{}, secrets: map[string]*corev1.Secret{},
		configMaps: map[string]*corev1.ConfigMap{}, networkPolicies: map[string]*networkingv1.NetworkPolicy{},
		serviceMonitors: map[string]*monitoringv1.ServiceMonitor{}, prometheusRules: map[string]*monitoringv1.PrometheusRule{},
		amConfigs: map[string]*monitoringv1alpha1.AlertmanagerConfig{},
	}
	for i, doc := range regexp.MustCompile(`(?m)^---\s*$`).Split(string(stream), -1) {
		js, err := yaml.YAMLToJSON([]byte(doc))
		if err != nil {
			t.Fatalf("document %d is not YAML: %v\n%s", i, err, doc)
		}
		if string(js) == "null" {
			continue // empty, or only comments
		}
		var meta struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
			Metadata   struct {
				Name string `json:"name"`
			} `json:"metadata"`
		}
		if err := json.Unmarshal(js, &meta); err != nil {
			t.Fatalf("document %d: %v", i, err)
		}
		var obj any
		switch meta.APIVersion + " " + meta.Kind {
		case "apps/v1 Deployment":
			obj = put(m.deployments, meta.Metadata.Name)
		case "v1 Service":
			obj = put(m.services, meta.Metadata.Name)
		case "v1 ServiceAccount":
			obj = put(m.serviceAccounts, meta.Metadata.Name)
		case "v1 Secret":
			obj = put(m.secrets, meta.Metadata.Name)
		case "v1 ConfigMap":
			obj = put(m.configMaps, meta.Metadata.Name)
		case "networking.k8s.io/v1 NetworkPolicy":
			obj = put(m.networkPolicies, meta.Metadata.Name)
		case "monitoring.coreos.com/v1 ServiceMonitor":
			obj = put(m.serviceMonitors, meta.Metadata.Name)
		case "monitoring.coreos.com/v1 PrometheusRule":
			obj = put(m.prometheusRules, meta.Metadata.Name)
		case "monitoring.coreos.com/v1alpha1 AlertmanagerConfig":
			obj = put(m.amConfigs, meta.Metadata.Name)
		default:
			t.Fatalf("document %d: %s %s is a kind this test does not know; add it", i, meta.APIVersion, meta.Kind)
		}
		dec := json.NewDecoder(bytes.NewReader(js))
		dec.DisallowUnknownFields()
		if err := dec.Decode(obj); err != nil {
			t.Fatalf("%s %q does not decode strictly as its kind: %v", meta.Kind, meta.Metadata.Name, err)
		}
		if meta.Metadata.Name == "" {
			t.Errorf("document %d: a %s without a name", i, meta.Kind)
		}
		for _, r := range refusals(meta.Kind, obj.(metav1.Object)) {
			t.Errorf("the API server would refuse it: %s", r)
		}
		m.kinds = append(m.kinds, meta.Kind)
	}
	return m
}

func put[T any](into map[string]*T, name string) *T {
	v := new(T)
	into[name] = v
	return v
}

// only returns the one object of a map, failing unless there is exactly one.
func only[T any](t *testing.T, kind string, objs map[string]*T) *T {
	t.Helper()
	if len(objs) != 1 {
		t.Fatalf("%d %ss rendered, want 1", len(objs), kind)
	}
	for _, o := range objs {
		return o
	}
	return nil
}

// errorOf returns the text of helm's error, or "" if rendering succeeded.
func errorOf(_ manifests, err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// repoFile reads a file of the repository.
func repoFile(t *testing.T, rel string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", rel))
	if err != nil {
		t.Fatal(err)
	}
	return b
}
