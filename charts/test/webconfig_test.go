// SPDX-License-Identifier: Apache-2.0

package charttest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net/http"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// webConfigSecret is a Secret's entries holding an exporter-toolkit web
// config, web-config.yml, serving TLS with a certificate for localhost
// whose files it names relative to itself, as they sit beside it when the
// Secret is mounted.
func webConfigSecret(t *testing.T) map[string]string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "localhost"}, DNSNames: []string{"localhost"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return map[string]string{
		"tls.crt":        string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})),
		"tls.key":        string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})),
		"web-config.yml": "tls_server_config:\n  cert_file: tls.crt\n  key_file: tls.key\n",
	}
}

// TestWebConfigServesTLS: a web config from an existing Secret reaches the
// exporter as --web.config.file, mounted as a directory (a renewed
// certificate is seen); the probes and the ServiceMonitor use https; and the
// real exporter, run with the Deployment's args, serves the probes' path
// over TLS and refuses plain HTTP.
func TestWebConfigServesTLS(t *testing.T) {
	values := map[string]any{"webConfig": map[string]any{"existingSecret": "gse-web", "tls": true},
		"serviceMonitor.tlsConfig": map[string]any{"serverName": "localhost", "insecureSkipVerify": true}}
	for k, v := range required {
		values[k] = v
	}
	m := mustTemplate(t, "gse", "monitoring", values)
	pod := only(t, "Deployment", m.deployments).Spec.Template.Spec
	c := pod.Containers[0]
	if !slices.Contains(c.Args, "--web.config.file=/etc/global-stability-web/web-config.yml") {
		t.Errorf("args %q lack --web.config.file", c.Args)
	}
	var mounted bool
	for _, vm := range c.VolumeMounts {
		if vm.Name == "web-config" {
			mounted = vm.MountPath == "/etc/global-stability-web" && vm.ReadOnly && vm.SubPath == ""
		}
	}
	var fromSecret bool
	for _, v := range pod.Volumes {
		if v.Name == "web-config" && v.Secret != nil {
			fromSecret = v.Secret.SecretName == "gse-web"
		}
	}
	if !mounted || !fromSecret {
		t.Errorf("the web config: mounted whole at /etc/global-stability-web %v, from the Secret gse-web %v", mounted, fromSecret)
	}
	for name, p := range map[string]*corev1.Probe{"liveness": c.LivenessProbe, "readiness": c.ReadinessProbe} {
		if p == nil || p.HTTPGet == nil || p.HTTPGet.Scheme != corev1.URISchemeHTTPS {
			t.Errorf("%s probe %+v: want HTTPS, or the kubelet restarts a healthy exporter", name, p)
		}
	}
	ep := only(t, "ServiceMonitor", m.serviceMonitors).Spec.Endpoints[0]
	if ep.Scheme == nil || *ep.Scheme != "https" || ep.TLSConfig == nil || ep.TLSConfig.ServerName == nil || *ep.TLSConfig.ServerName != "localhost" {
		t.Errorf("ServiceMonitor endpoint scheme %v, tlsConfig %+v: want https and the tlsConfig given", ep.Scheme, ep.TLSConfig)
	}

	if testing.Short() {
		return
	}
	// The probes' path never calls the API: no simulator behind --api.url.
	secrets := secretData{"gse-key": {"api-key": chartTestKey}, "gse-web": webConfigSecret(t)}
	addr, log := runPod(t, m, secrets, map[string]string{"--api.url": "http://" + freeAddr(t)})
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // the test's own certificate
	path := c.ReadinessProbe.HTTPGet.Path
	resp, err := client.Get("https://" + addr + path)
	if err != nil {
		t.Fatalf("https://%s%s: %v\n%s", addr, path, err, log)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("the probe's path over https: %d", resp.StatusCode)
	}
	if resp, err := http.Get("http://" + addr + path); err == nil {
		resp.Body.Close()
		if resp.StatusCode == 200 {
			t.Errorf("plain HTTP is served beside TLS")
		}
	}
}
