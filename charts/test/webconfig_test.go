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
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// writeWebConfig writes an exporter-toolkit web config at path serving TLS
// with a certificate for localhost, its files beside it (names relative to
// the config, as they would be in the mounted Secret).
func writeWebConfig(t *testing.T, path string) {
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
	dir := filepath.Dir(path)
	for name, block := range map[string]*pem.Block{"tls.crt": {Type: "CERTIFICATE", Bytes: der}, "tls.key": {Type: "EC PRIVATE KEY", Bytes: keyDER}} {
		if err := os.WriteFile(filepath.Join(dir, name), pem.EncodeToMemory(block), 0o400); err != nil {
			t.Fatal(err)
		}
	}
	config := "tls_server_config:\n  cert_file: " + filepath.Join(dir, "tls.crt") + "\n  key_file: " + filepath.Join(dir, "tls.key") + "\n"
	if err := os.WriteFile(path, []byte(config), 0o400); err != nil {
		t.Fatal(err)
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
	dir := t.TempDir()
	exporter := filepath.Join(dir, "exporter")
	build := exec.Command("go", "build", "-o", exporter, ".")
	build.Dir = filepath.Join("..", "..")
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, b)
	}
	addr := freeAddr(t)
	args := containerArgs(t, c, freeAddr(t), addr)
	log := start(t, exporter, []string{"PATH=" + os.Getenv("PATH")}, args...)
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // the test's own certificate
	path := c.ReadinessProbe.HTTPGet.Path
	var resp *http.Response
	var err error
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if resp, err = client.Get("https://" + addr + path); err == nil {
			break
		}
	}
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
