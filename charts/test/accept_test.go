// SPDX-License-Identifier: Apache-2.0

package charttest

import (
	"fmt"
	"path"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"
)

// refusals lists what the API server would refuse of a rendered object:
// the rules of k8s.io/kubernetes/pkg/apis/core/validation (not importable
// on its own) that values can break: names, labels, ConfigMap and Secret
// entries, and a pod's names, volumes and mounts.
func refusals(kind string, obj metav1.Object) []string {
	var out []string
	refuse := func(what string, errs []string) {
		for _, e := range errs {
			out = append(out, fmt.Sprintf("%s %s: %s", kind, what, e))
		}
	}
	if kind == "Service" {
		refuse("name "+obj.GetName(), validation.IsDNS1035Label(obj.GetName()))
	} else {
		refuse("name "+obj.GetName(), validation.IsDNS1123Subdomain(obj.GetName()))
	}
	if ns := obj.GetNamespace(); ns != "" {
		refuse("namespace "+ns, validation.IsDNS1123Label(ns))
	}
	for k, v := range obj.GetLabels() {
		refuse("label "+k, append(validation.IsQualifiedName(k), validation.IsValidLabelValue(v)...))
	}
	for k := range obj.GetAnnotations() {
		refuse("annotation "+k, validation.IsQualifiedName(strings.ToLower(k)))
	}
	var keys []string
	size := 0
	switch o := obj.(type) {
	case *corev1.ConfigMap:
		for k, v := range o.Data {
			keys, size = append(keys, k), size+len(v)
		}
	case *corev1.Secret:
		for k, v := range o.Data {
			keys, size = append(keys, k), size+len(v)
		}
	case *appsv1.Deployment:
		sel, err := metav1.LabelSelectorAsSelector(o.Spec.Selector)
		if err != nil || sel.Empty() || !sel.Matches(labels.Set(o.Spec.Template.Labels)) {
			out = append(out, fmt.Sprintf("Deployment %s: selector %v does not select its pod's labels %v", o.Name, o.Spec.Selector, o.Spec.Template.Labels))
		}
		out = append(out, podRefusals(o.Spec.Template.Spec)...)
	}
	for _, k := range keys {
		refuse("entry "+k, validation.IsConfigMapKey(k))
	}
	if size > corev1.MaxSecretSize {
		out = append(out, fmt.Sprintf("%s %s: %d bytes of data, more than %d", kind, obj.GetName(), size, corev1.MaxSecretSize))
	}
	return out
}

// podRefusals lists what the API server would refuse of a pod's names,
// volumes and mounts.
func podRefusals(pod corev1.PodSpec) []string {
	var out []string
	refuse := func(what string, errs []string) {
		for _, e := range errs {
			out = append(out, "pod "+what+": "+e)
		}
	}
	volumes := map[string]bool{}
	for _, v := range pod.Volumes {
		refuse("volume name "+v.Name, validation.IsDNS1123Label(v.Name))
		if volumes[v.Name] {
			refuse("volume name "+v.Name, []string{"another volume has it"})
		}
		volumes[v.Name] = true
		var items []corev1.KeyToPath
		var mode *int32
		switch {
		case v.Secret != nil:
			refuse("volume "+v.Name+" Secret "+v.Secret.SecretName, validation.IsDNS1123Subdomain(v.Secret.SecretName))
			items, mode = v.Secret.Items, v.Secret.DefaultMode
		case v.ConfigMap != nil:
			refuse("volume "+v.Name+" ConfigMap "+v.ConfigMap.Name, validation.IsDNS1123Subdomain(v.ConfigMap.Name))
			items, mode = v.ConfigMap.Items, v.ConfigMap.DefaultMode
		}
		if mode != nil && (*mode < 0 || *mode > 0o777) {
			refuse("volume "+v.Name, []string{fmt.Sprintf("mode %o", *mode)})
		}
		var paths []string
		for _, it := range items {
			refuse("volume "+v.Name+" item key "+it.Key, validation.IsConfigMapKey(it.Key))
			refuse("volume "+v.Name+" item path "+it.Path, localPath(it.Path))
			if slices.Contains(paths, it.Path) {
				refuse("volume "+v.Name+" item path "+it.Path, []string{"another item has it"})
			}
			paths = append(paths, it.Path)
		}
	}
	for _, c := range append(slices.Clone(pod.InitContainers), pod.Containers...) {
		refuse("container name "+c.Name, validation.IsDNS1123Label(c.Name))
		for _, p := range c.Ports {
			if p.Name != "" {
				refuse("container "+c.Name+" port "+p.Name, validation.IsValidPortName(p.Name))
			}
		}
		for _, e := range c.Env {
			refuse("container "+c.Name+" env "+e.Name, validation.IsEnvVarName(e.Name))
		}
		var mountPaths []string
		for _, vm := range c.VolumeMounts {
			what := "container " + c.Name + " mount " + vm.Name
			if !volumes[vm.Name] {
				refuse(what, []string{"no such volume"})
			}
			if !path.IsAbs(vm.MountPath) || slices.Contains(mountPaths, vm.MountPath) {
				refuse(what, []string{fmt.Sprintf("mount path %q: want an absolute path no other mount has", vm.MountPath)})
			}
			mountPaths = append(mountPaths, vm.MountPath)
			if vm.SubPath != "" {
				refuse(what+" subPath", localPath(vm.SubPath))
			}
		}
	}
	return out
}

// localPath is the API server's check of an item's path or a subPath:
// relative, and never above where it starts.
func localPath(p string) []string {
	if path.IsAbs(p) || slices.Contains(strings.Split(p, "/"), "..") {
		return []string{fmt.Sprintf("%q: want a relative path without '..'", p)}
	}
	return nil
}
