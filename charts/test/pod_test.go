// SPDX-License-Identifier: Apache-2.0

package charttest

import (
	"cmp"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// secretData are Secrets that exist beside a release (existingSecret), by
// name, each its entries by key.
type secretData map[string]map[string]string

// runPod runs the real exporter as the Deployment's container would run:
// its args and environment, its volumes laid out by podDir from the
// rendering's Secrets and ConfigMaps and from secrets, every path below a
// mount path in the args and in a ConfigMap's entries pointing there, each
// flag of flags set to its value (added where the container lacks it) and
// listening on a free address, which it returns once the exporter listens.
func runPod(t *testing.T, m manifests, secrets secretData, flags map[string]string) (string, *syncBuffer) {
	t.Helper()
	exporter := binary(t, "exporter")
	c := only(t, "Deployment", m.deployments).Spec.Template.Spec.Containers[0]
	inPod := podDir(t, m, secrets)
	addr := freeAddr(t)
	flags = maps.Clone(flags)
	if flags == nil {
		flags = map[string]string{}
	}
	flags["--web.listen-address"] = addr
	var args []string
	for _, a := range c.Args {
		flag, _, _ := strings.Cut(a, "=")
		if v, ok := flags[flag]; ok {
			a = flag + "=" + v
			delete(flags, flag)
		}
		args = append(args, inPod.Replace(a))
	}
	for _, flag := range slices.Sorted(maps.Keys(flags)) {
		args = append(args, flag+"="+flags[flag])
	}
	env := []string{"PATH=" + os.Getenv("PATH")}
	for _, e := range c.Env {
		if e.ValueFrom != nil {
			t.Fatalf("env %s: valueFrom is not laid out here", e.Name)
		}
		env = append(env, e.Name+"="+e.Value)
	}
	return addr, start(t, exporter, env, addr, args...)
}

// podDir writes, below a new temporary directory, what the Deployment's
// container sees through its volume mounts, as the kubelet writes a Secret
// or ConfigMap volume: the entries (its items, at their paths, or all of
// them) in a timestamped directory that ..data links to, a link to each
// beside it; a subPath mount, the file or directory it names. A Secret or
// ConfigMap comes from the rendering, else from secrets; an item of an
// entry it lacks fails the test, as the pod would never start. It returns
// what turns a path in the pod into the same file here, which has been
// applied to the ConfigMaps' entries already (a targets' file names its
// key files by their paths in the pod).
func podDir(t *testing.T, m manifests, secrets secretData) *strings.Replacer {
	t.Helper()
	pod := only(t, "Deployment", m.deployments).Spec.Template.Spec
	mounts := pod.Containers[0].VolumeMounts
	root := t.TempDir()
	var pairs []string
	for _, vm := range slices.SortedFunc(slices.Values(mounts), func(a, b corev1.VolumeMount) int {
		return cmp.Compare(len(b.MountPath), len(a.MountPath)) // the longest first: a mount below another wins
	}) {
		pairs = append(pairs, vm.MountPath, filepath.Join(root, vm.MountPath))
	}
	inPod := strings.NewReplacer(pairs...)

	volumes := map[string]corev1.Volume{}
	for _, v := range pod.Volumes {
		volumes[v.Name] = v
	}
	for i, vm := range mounts {
		v, ok := volumes[vm.Name]
		if !ok {
			t.Fatalf("volume mount %s: no such volume", vm.Name)
		}
		var data map[string]string
		var items []corev1.KeyToPath
		mode := fs.FileMode(0o644)
		switch {
		case v.Secret != nil:
			data, items = secrets[v.Secret.SecretName], v.Secret.Items
			if s, ok := m.secrets[v.Secret.SecretName]; ok {
				data = map[string]string{}
				for k, b := range s.Data {
					data[k] = string(b)
				}
			}
			if data == nil {
				t.Fatalf("volume %s: no Secret %s; the pod would never start", v.Name, v.Secret.SecretName)
			}
			if v.Secret.DefaultMode != nil {
				mode = fs.FileMode(*v.Secret.DefaultMode)
			}
		case v.ConfigMap != nil:
			cm, ok := m.configMaps[v.ConfigMap.Name]
			if !ok {
				t.Fatalf("volume %s: the rendering has no ConfigMap %s", v.Name, v.ConfigMap.Name)
			}
			data, items = map[string]string{}, v.ConfigMap.Items
			for k, text := range cm.Data {
				data[k] = inPod.Replace(text)
			}
		default:
			t.Fatalf("volume %s: only Secret and ConfigMap volumes are laid out here", v.Name)
		}
		if items == nil {
			for _, k := range slices.Sorted(maps.Keys(data)) {
				items = append(items, corev1.KeyToPath{Key: k, Path: k})
			}
		}
		dir := filepath.Join(root, vm.MountPath)
		if vm.SubPath != "" {
			dir = filepath.Join(root, "..volumes", fmt.Sprint(i))
		}
		writeVolume(t, dir, data, items, mode)
		if vm.SubPath != "" {
			resolved, err := filepath.EvalSymlinks(filepath.Join(dir, vm.SubPath))
			if err != nil {
				t.Fatalf("volume mount %s: subPath %s: %v", vm.Name, vm.SubPath, err)
			}
			if err := os.MkdirAll(filepath.Dir(filepath.Join(root, vm.MountPath)), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(resolved, filepath.Join(root, vm.MountPath)); err != nil {
				t.Fatal(err)
			}
		}
	}
	return inPod
}

// writeVolume writes a Secret's or ConfigMap's items into dir as the
// kubelet's atomic writer does: dir/..<timestamp>/<path>, dir/..data
// linking to that, and dir/<first element of path> linking into ..data.
func writeVolume(t *testing.T, dir string, data map[string]string, items []corev1.KeyToPath, mode fs.FileMode) {
	t.Helper()
	const ts = "..2026_01_02_03_04_05.000000001"
	for _, it := range items {
		text, ok := data[it.Key]
		if !ok {
			t.Fatalf("the volume at %s lists the entry %s, which its Secret or ConfigMap lacks: the pod would never start", dir, it.Key)
		}
		p := filepath.Join(dir, ts, it.Path)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		itemMode := mode
		if it.Mode != nil {
			itemMode = fs.FileMode(*it.Mode)
		}
		if err := os.WriteFile(p, []byte(text), itemMode); err != nil {
			t.Fatal(err)
		}
		top, _, _ := strings.Cut(it.Path, "/")
		if err := os.Symlink(filepath.Join("..data", top), filepath.Join(dir, top)); err != nil && !os.IsExist(err) {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(ts, filepath.Join(dir, "..data")); err != nil {
		t.Fatal(err)
	}
}
