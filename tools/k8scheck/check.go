package k8scheck

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
)

// Problem is one finding: the object, the field (empty when the object as a
// whole is refused) and what is wrong.
type Problem struct {
	Object string
	Field  string
	Msg    string
}

func (p Problem) String() string {
	if p.Field == "" {
		return p.Object + ": " + p.Msg
	}
	return p.Object + ": " + p.Field + ": " + p.Msg
}

// Result is what Check found, and what it looked at: a check that saw no
// workload would pass on nothing.
type Result struct {
	Problems []Problem
	// Workloads lists every object with a pod template, as Object.String
	// names it.
	Workloads []string
}

// Check decodes every object strictly and checks the workloads and what
// the objects refer to among themselves.
func Check(objs []Object) (Result, error) {
	d, err := NewDecoder()
	if err != nil {
		return Result{}, err
	}
	var res Result
	idx := newIndex()
	refused := 0
	for _, o := range objs {
		name := o.String()
		v, err := d.Decode(o)
		if err != nil {
			res.Problems = append(res.Problems, Problem{Object: name, Msg: err.Error()})
			refused++
			continue
		}
		switch v := v.(type) {
		case *cmIssuer:
			res.Problems = append(res.Problems, checkIssuer(name, v)...)
		case *cmCertificate:
			res.Problems = append(res.Problems, checkCertificate(name, v)...)
			// What cert-manager writes into the Secret it makes.
			idx.secrets[key(v.Namespace, v.Spec.SecretName)] = keySet("tls.crt", "tls.key", "ca.crt")
		case *corev1.ConfigMap:
			keys := keySet()
			for k := range v.Data {
				keys[k] = true
			}
			for k := range v.BinaryData {
				keys[k] = true
			}
			idx.configMaps[key(v.Namespace, v.Name)] = keys
		case *corev1.Secret:
			keys := keySet()
			for k := range v.Data {
				keys[k] = true
			}
			for k := range v.StringData {
				keys[k] = true
			}
			idx.secrets[key(v.Namespace, v.Name)] = keys
		case *corev1.Service:
			idx.services = append(idx.services, named[*corev1.Service]{name, v})
		case *policyv1.PodDisruptionBudget:
			idx.pdbs = append(idx.pdbs, named[*policyv1.PodDisruptionBudget]{name, v})
		}
		if p, ok := podOwnerOf(name, v); ok {
			res.Workloads = append(res.Workloads, name)
			res.Problems = append(res.Problems, checkPod(p)...)
			idx.pods = append(idx.pods, p)
		}
	}
	// An object that did not decode is missing from the index: every
	// reference to it would be reported too, burying the one real problem.
	if refused > 0 {
		return res, nil
	}
	res.Problems = append(res.Problems, idx.check()...)
	return res, nil
}

func key(namespace, name string) string { return fmt.Sprintf("%s/%s", namespace, name) }

func keySet(keys ...string) map[string]bool {
	m := make(map[string]bool, len(keys))
	for _, k := range keys {
		m[k] = true
	}
	return m
}
