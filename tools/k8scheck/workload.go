package k8scheck

import (
	"fmt"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// podOwner is a workload's pod template, wherever its kind keeps it.
type podOwner struct {
	name      string // "Deployment fris/auth"
	namespace string
	path      string // the field path of the pod spec
	labels    map[string]string
	// selector is the workload's own (nil for Pods, Jobs and CronJobs,
	// whose selector Kubernetes sets itself).
	selector *metav1.LabelSelector
	spec     *corev1.PodSpec
	// batch: the containers run to completion (Job, CronJob). Readiness
	// gates no Service's traffic for them and liveness has nothing to keep
	// alive, so they need no probes.
	batch bool
	// claims: a StatefulSet's volumeClaimTemplates, volumes of every pod.
	claims []string
}

func podOwnerOf(name string, obj any) (podOwner, bool) {
	p := podOwner{name: name, path: "spec.template.spec"}
	var t *corev1.PodTemplateSpec
	switch o := obj.(type) {
	case *appsv1.Deployment:
		p.namespace, p.selector, t = o.Namespace, o.Spec.Selector, &o.Spec.Template
	case *appsv1.StatefulSet:
		p.namespace, p.selector, t = o.Namespace, o.Spec.Selector, &o.Spec.Template
		for _, c := range o.Spec.VolumeClaimTemplates {
			p.claims = append(p.claims, c.Name)
		}
	case *appsv1.DaemonSet:
		p.namespace, p.selector, t = o.Namespace, o.Spec.Selector, &o.Spec.Template
	case *appsv1.ReplicaSet:
		p.namespace, p.selector, t = o.Namespace, o.Spec.Selector, &o.Spec.Template
	case *batchv1.Job:
		p.namespace, p.batch, t = o.Namespace, true, &o.Spec.Template
	case *batchv1.CronJob:
		p.namespace, p.batch, t = o.Namespace, true, &o.Spec.JobTemplate.Spec.Template
		p.path = "spec.jobTemplate.spec.template.spec"
	case *corev1.Pod:
		p.namespace, p.path, p.labels, p.spec = o.Namespace, "spec", o.Labels, &o.Spec
		// A bare Pod is a server unless it is meant to end.
		p.batch = o.Spec.RestartPolicy == corev1.RestartPolicyNever || o.Spec.RestartPolicy == corev1.RestartPolicyOnFailure
		return p, true
	default:
		return podOwner{}, false
	}
	p.labels, p.spec = t.Labels, &t.Spec
	return p, true
}

// checkPod holds every container of the pod to the rules of the restricted
// Pod Security Standard that namespace.yaml enforces, and to what running
// it well needs: probes for servers and resource requests.
func checkPod(p podOwner) []Problem {
	var ps []Problem
	add := func(field, msg string) { ps = append(ps, Problem{p.name, field, msg}) }
	if p.selector != nil {
		if err := selects(p.selector, p.labels); err != nil {
			add("spec.selector", err.Error())
		}
	}
	s := p.spec
	for _, host := range []struct {
		field string
		on    bool
	}{{"hostNetwork", s.HostNetwork}, {"hostPID", s.HostPID}, {"hostIPC", s.HostIPC}} {
		if host.on {
			add(p.path+"."+host.field, "must not be true: the pod would share the node's namespaces")
		}
	}
	volumes := keySet(p.claims...)
	for _, v := range s.Volumes {
		volumes[v.Name] = true
		if !restrictedVolume(&v.VolumeSource) {
			add(fmt.Sprintf("%s.volumes[name=%s]", p.path, v.Name), "its type is not allowed by the restricted Pod Security Standard "+
				"(configMap, csi, downwardAPI, emptyDir, ephemeral, persistentVolumeClaim, projected, secret)")
		}
	}
	if len(s.Containers) == 0 {
		add(p.path+".containers", "missing")
	}
	for i := range s.InitContainers {
		c := &s.InitContainers[i]
		// A sidecar (an init container restarted always) runs as long as
		// the pod: it is a server like the main containers.
		sidecar := c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways
		ps = append(ps, checkContainer(p, fmt.Sprintf("%s.initContainers[name=%s]", p.path, c.Name), c, sidecar, volumes)...)
	}
	for i := range s.Containers {
		c := &s.Containers[i]
		ps = append(ps, checkContainer(p, fmt.Sprintf("%s.containers[name=%s]", p.path, c.Name), c, !p.batch, volumes)...)
	}
	return ps
}

func checkContainer(p podOwner, field string, c *corev1.Container, server bool, volumes map[string]bool) []Problem {
	var ps []Problem
	add := func(f, msg string) { ps = append(ps, Problem{p.name, field + f, msg}) }

	if server {
		if c.ReadinessProbe == nil {
			add(".readinessProbe", "missing: a long-running server needs one, so that its Service sends traffic only to pods that answer")
		}
		if c.LivenessProbe == nil {
			add(".livenessProbe", "missing: a long-running server needs one, so that a hung process is restarted")
		}
	}
	for _, pr := range []struct {
		field string
		probe *corev1.Probe
	}{{".startupProbe", c.StartupProbe}, {".readinessProbe", c.ReadinessProbe}, {".livenessProbe", c.LivenessProbe}} {
		if pr.probe == nil {
			continue
		}
		for _, msg := range probeProblems(pr.probe, c.Ports) {
			add(pr.field, msg)
		}
	}

	sc, psc := c.SecurityContext, p.spec.SecurityContext
	if sc == nil {
		add(".securityContext", "missing: set allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: {drop: [ALL]}")
		sc = &corev1.SecurityContext{}
	} else {
		if sc.Privileged != nil && *sc.Privileged {
			add(".securityContext.privileged", "must not be true")
		}
		if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
			add(".securityContext.allowPrivilegeEscalation", "must be false")
		}
		if sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
			add(".securityContext.readOnlyRootFilesystem", "must be true: mount an emptyDir or a volume where the service writes")
		}
		if sc.Capabilities == nil || !slices.Contains(sc.Capabilities.Drop, "ALL") {
			add(".securityContext.capabilities.drop", "must contain ALL")
		}
		if sc.Capabilities != nil {
			for _, c := range sc.Capabilities.Add {
				// The only one the restricted standard allows.
				if c != "NET_BIND_SERVICE" {
					add(".securityContext.capabilities.add", fmt.Sprintf("%s is not allowed (only NET_BIND_SERVICE)", c))
				}
			}
		}
	}
	// These two may come from the pod's securityContext; the container's
	// own wins where both are set.
	var podNonRoot *bool
	var podUser *int64
	var podSeccomp *corev1.SeccompProfile
	if psc != nil {
		podNonRoot, podUser, podSeccomp = psc.RunAsNonRoot, psc.RunAsUser, psc.SeccompProfile
	}
	if nonRoot := firstSet(sc.RunAsNonRoot, podNonRoot); nonRoot == nil || !*nonRoot {
		add(".securityContext.runAsNonRoot", "must be true, here or in the pod's securityContext")
	}
	if uid := firstSet(sc.RunAsUser, podUser); uid != nil && *uid == 0 {
		add(".securityContext.runAsUser", "must not be 0 (root)")
	}
	if sp := firstSet(sc.SeccompProfile, podSeccomp); sp == nil ||
		(sp.Type != corev1.SeccompProfileTypeRuntimeDefault && sp.Type != corev1.SeccompProfileTypeLocalhost) {
		add(".securityContext.seccompProfile.type", "must be RuntimeDefault or Localhost, here or in the pod's "+
			"securityContext: the restricted Pod Security Standard (namespace.yaml enforces it) refuses the pod otherwise")
	}

	for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		q, ok := c.Resources.Requests[r]
		if !ok || q.IsZero() {
			add(".resources.requests."+string(r), "missing: the scheduler places pods by their requests, and evicts pods without them first")
			continue
		}
		if l, ok := c.Resources.Limits[r]; ok && q.Cmp(l) > 0 {
			add(".resources.requests."+string(r), fmt.Sprintf("%s is above the limit %s", q.String(), l.String()))
		}
	}

	for i, port := range c.Ports {
		if port.HostPort != 0 {
			add(fmt.Sprintf(".ports[%d].hostPort", i), "must not be set: the pod would take a port of the node")
		}
	}
	for i, m := range c.VolumeMounts {
		if !volumes[m.Name] {
			add(fmt.Sprintf(".volumeMounts[%d]", i), fmt.Sprintf("names the volume %q, which the pod does not have", m.Name))
		}
	}
	return ps
}

// probeProblems: one handler, and a port the container has.
func probeProblems(p *corev1.Probe, ports []corev1.ContainerPort) []string {
	var msgs []string
	n := 0
	var port *intstr.IntOrString
	if p.Exec != nil {
		n++
	}
	if p.HTTPGet != nil {
		n++
		port = &p.HTTPGet.Port
	}
	if p.TCPSocket != nil {
		n++
		port = &p.TCPSocket.Port
	}
	if p.GRPC != nil {
		n++
		port = &intstr.IntOrString{IntVal: p.GRPC.Port}
	}
	if n != 1 {
		msgs = append(msgs, "must set exactly one of exec, httpGet, tcpSocket, grpc")
	}
	if port == nil {
		return msgs
	}
	if port.Type == intstr.String {
		found := false
		for _, cp := range ports {
			found = found || cp.Name == port.StrVal
		}
		if !found {
			msgs = append(msgs, fmt.Sprintf("port %q: the container has no port of that name", port.StrVal))
		}
	} else if port.IntVal < 1 || port.IntVal > 65535 {
		msgs = append(msgs, fmt.Sprintf("port %d: not a port number", port.IntVal))
	}
	return msgs
}

// restrictedVolume: one of the volume types the restricted standard allows
// (the others reach the node or outside storage directly).
func restrictedVolume(v *corev1.VolumeSource) bool {
	return v.ConfigMap != nil || v.CSI != nil || v.DownwardAPI != nil || v.EmptyDir != nil ||
		v.Ephemeral != nil || v.PersistentVolumeClaim != nil || v.Projected != nil || v.Secret != nil
}

func firstSet[T any](ps ...*T) *T {
	for _, p := range ps {
		if p != nil {
			return p
		}
	}
	return nil
}
