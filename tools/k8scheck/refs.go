package k8scheck

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// index holds what objects refer to one another by: a name that points at
// nothing is accepted by the API server and fails only when a pod starts
// (or, for a selector, never fails: the Service just has no endpoints).
type index struct {
	// "namespace/name" to the keys the object holds.
	configMaps map[string]map[string]bool
	secrets    map[string]map[string]bool
	services   []named[*corev1.Service]
	pdbs       []named[*policyv1.PodDisruptionBudget]
	pods       []podOwner
}

type named[T any] struct {
	name string
	obj  T
}

func newIndex() *index {
	return &index{configMaps: map[string]map[string]bool{}, secrets: map[string]map[string]bool{}}
}

func (x *index) check() []Problem {
	var ps []Problem
	for _, p := range x.pods {
		ps = append(ps, x.podRefs(p)...)
	}
	for _, s := range x.services {
		ps = append(ps, x.serviceRefs(s.name, s.obj)...)
	}
	for _, d := range x.pdbs {
		sel := d.obj.Spec.Selector
		if sel == nil || len(sel.MatchLabels)+len(sel.MatchExpressions) == 0 {
			// policy/v1: every pod of the namespace; nothing to match.
			continue
		}
		if len(x.selected(d.obj.Namespace, sel)) == 0 {
			ps = append(ps, Problem{d.name, "spec.selector", "matches no workload's pods"})
		}
	}
	return ps
}

// podRefs: the ConfigMaps, Secrets and keys the pod reads exist, unless
// marked optional; a StatefulSet's governing Service exists.
func (x *index) podRefs(p podOwner) []Problem {
	var ps []Problem
	add := func(field, msg string) { ps = append(ps, Problem{p.name, field, msg}) }
	ref := func(field, kind string, objs map[string]map[string]bool, name, k string, optional *bool) {
		if optional != nil && *optional {
			return
		}
		keys, ok := objs[key(p.namespace, name)]
		switch {
		case !ok:
			add(field, fmt.Sprintf("names the %s %q, which is not among the rendered objects", kind, name))
		case k != "" && !keys[k]:
			add(field, fmt.Sprintf("names the key %q, which the %s %q does not hold", k, kind, name))
		}
	}
	for _, v := range p.spec.Volumes {
		f := fmt.Sprintf("%s.volumes[name=%s]", p.path, v.Name)
		if s := v.Secret; s != nil {
			ref(f+".secret", "Secret", x.secrets, s.SecretName, "", s.Optional)
			for _, it := range s.Items {
				ref(f+".secret.items", "Secret", x.secrets, s.SecretName, it.Key, s.Optional)
			}
		}
		if c := v.ConfigMap; c != nil {
			ref(f+".configMap", "ConfigMap", x.configMaps, c.Name, "", c.Optional)
			for _, it := range c.Items {
				ref(f+".configMap.items", "ConfigMap", x.configMaps, c.Name, it.Key, c.Optional)
			}
		}
	}
	for i, c := range slices.Concat(p.spec.InitContainers, p.spec.Containers) {
		f := fmt.Sprintf("%s.containers[name=%s]", p.path, c.Name)
		if i < len(p.spec.InitContainers) {
			f = fmt.Sprintf("%s.initContainers[name=%s]", p.path, c.Name)
		}
		for _, e := range c.EnvFrom {
			if r := e.ConfigMapRef; r != nil {
				ref(f+".envFrom.configMapRef", "ConfigMap", x.configMaps, r.Name, "", r.Optional)
			}
			if r := e.SecretRef; r != nil {
				ref(f+".envFrom.secretRef", "Secret", x.secrets, r.Name, "", r.Optional)
			}
		}
		for _, e := range c.Env {
			if e.ValueFrom == nil {
				continue
			}
			ef := fmt.Sprintf("%s.env[name=%s].valueFrom", f, e.Name)
			if r := e.ValueFrom.ConfigMapKeyRef; r != nil {
				ref(ef+".configMapKeyRef", "ConfigMap", x.configMaps, r.Name, r.Key, r.Optional)
			}
			if r := e.ValueFrom.SecretKeyRef; r != nil {
				ref(ef+".secretKeyRef", "Secret", x.secrets, r.Name, r.Key, r.Optional)
			}
		}
	}
	return ps
}

// serviceRefs: the selector matches some workload's pods, and every named
// target port is a port of every pod it matches.
func (x *index) serviceRefs(name string, s *corev1.Service) []Problem {
	if len(s.Spec.Selector) == 0 {
		// Endpoints managed by hand (or an ExternalName): nothing to match.
		return nil
	}
	pods := x.selected(s.Namespace, &metav1.LabelSelector{MatchLabels: s.Spec.Selector})
	if len(pods) == 0 {
		return []Problem{{name, "spec.selector", "matches no workload's pods"}}
	}
	var ps []Problem
	for i, port := range s.Spec.Ports {
		if port.TargetPort.StrVal == "" {
			continue
		}
		for _, p := range pods {
			if !hasPort(p.spec, port.TargetPort.StrVal) {
				ps = append(ps, Problem{name, fmt.Sprintf("spec.ports[%d].targetPort", i),
					fmt.Sprintf("%q: %s has no container port of that name", port.TargetPort.StrVal, p.name)})
			}
		}
	}
	return ps
}

// selected: the workloads of the namespace whose pods the selector matches.
func (x *index) selected(namespace string, sel *metav1.LabelSelector) []podOwner {
	var out []podOwner
	for _, p := range x.pods {
		if p.namespace == namespace && selects(sel, p.labels) == nil {
			out = append(out, p)
		}
	}
	return out
}

// selects is nil when sel matches the labels.
func selects(sel *metav1.LabelSelector, l map[string]string) error {
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return err
	}
	if s.Empty() {
		return fmt.Errorf("is empty: it would select every pod of the namespace")
	}
	if !s.Matches(labels.Set(l)) {
		return fmt.Errorf("%s does not match the pod template's labels %v", s, l)
	}
	return nil
}

func hasPort(spec *corev1.PodSpec, name string) bool {
	for _, c := range spec.Containers {
		for _, p := range c.Ports {
			if p.Name == name {
				return true
			}
		}
	}
	return false
}
