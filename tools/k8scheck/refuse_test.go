package k8scheck

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A Deployment that passes every rule; the cases of TestCheckRefuses each
// break one thing in it.
const goodDeployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: t
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      securityContext:
        runAsNonRoot: true
        runAsUser: 65532
        seccompProfile: {type: RuntimeDefault}
      containers:
        - name: web
          image: web:1
          ports:
            - {name: http, containerPort: 8080}
          readinessProbe:
            httpGet: {path: /readyz, port: http}
          livenessProbe:
            httpGet: {path: /healthz, port: http}
          resources:
            requests: {cpu: 100m, memory: 64Mi}
            limits: {memory: 128Mi}
          securityContext:
            allowPrivilegeEscalation: false
            readOnlyRootFilesystem: true
            capabilities: {drop: [ALL]}
          volumeMounts:
            - {name: tmp, mountPath: /tmp}
      volumes:
        - name: tmp
          emptyDir: {}
`

const goodService = `apiVersion: v1
kind: Service
metadata:
  name: web
  namespace: t
spec:
  selector: {app: web}
  ports:
    - {name: http, port: 80, targetPort: http}
`

// A Job needs no probes: its container runs to completion.
const goodJob = `apiVersion: batch/v1
kind: Job
metadata:
  name: seed
  namespace: t
spec:
  template:
    spec:
      restartPolicy: OnFailure
      securityContext:
        runAsNonRoot: true
        seccompProfile: {type: RuntimeDefault}
      containers:
        - name: seed
          image: seed:1
          resources:
            requests: {cpu: 10m, memory: 16Mi}
          securityContext:
            allowPrivilegeEscalation: false
            readOnlyRootFilesystem: true
            capabilities: {drop: [ALL]}
`

const goodCertificate = `apiVersion: cert-manager.io/v1
kind: Certificate
metadata:
  name: web
  namespace: t
spec:
  secretName: web-tls
  commonName: web
  usages: [digital signature, server auth]
  duration: 2160h
  privateKey: {algorithm: ECDSA, size: 256}
  issuerRef: {name: ca, kind: Issuer}
`

// TestCheckRefuses feeds manifests through the same Render and Check as
// TestDeployManifests: the good ones pass, each broken one fails with the
// object and field named.
func TestCheckRefuses(t *testing.T) {
	const dep = "Deployment t/web"
	const ctr = "spec.template.spec.containers[name=web]"
	tests := []struct {
		name string
		// The manifest: a good one with each of edits (old, new) applied.
		base  string
		edits [][2]string
		// want: the problems, exactly (Msg: a part of the message).
		want []Problem
	}{
		{name: "good deployment and service", base: goodDeployment + "---\n" + goodService},
		{name: "good job without probes", base: goodJob},
		{name: "good certificate", base: goodCertificate},
		{
			// Only the decoding error: the Service's selector matches the
			// refused Deployment's pods, but no follow-on problem buries it.
			name:  "unknown field",
			base:  goodDeployment + "---\n" + goodService,
			edits: [][2]string{{"  replicas: 2\n", "  replicasx: 2\n"}},
			want:  []Problem{{dep, "", `strict decoding error: unknown field "spec.replicasx"`}},
		},
		{
			name:  "unknown field in a container",
			base:  goodDeployment,
			edits: [][2]string{{"          image: web:1\n", "          image: web:1\n          imagePullPolicyx: Always\n"}},
			want:  []Problem{{dep, "", `unknown field "spec.template.spec.containers[0].imagePullPolicyx"`}},
		},
		{
			// The API server matches field names case-sensitively;
			// encoding/json would not.
			name:  "field in the wrong case",
			base:  goodDeployment,
			edits: [][2]string{{"  replicas: 2\n", "  Replicas: 2\n"}},
			want:  []Problem{{dep, "", `unknown field "spec.Replicas"`}},
		},
		{
			// An unquoted number in a ConfigMap: the API server refuses
			// it (data holds strings only).
			name:  "ConfigMap value not a string",
			base:  "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: env, namespace: t}\ndata:\n  A: \"1\"\n",
			edits: [][2]string{{`A: "1"`, "A: 1"}},
			want:  []Problem{{"ConfigMap t/env", "", "cannot unmarshal number into Go struct field ConfigMap.data of type string"}},
		},
		{
			name:  "wrong type",
			base:  goodDeployment,
			edits: [][2]string{{"  replicas: 2\n", "  replicas: two\n"}},
			want:  []Problem{{dep, "", "replicas"}},
		},
		{
			name:  "unknown kind",
			base:  goodDeployment,
			edits: [][2]string{{"kind: Deployment\n", "kind: Deploymentx\n"}},
			want:  []Problem{{"Deploymentx t/web", "", "no Kubernetes API type for apiVersion apps/v1, kind Deploymentx"}},
		},
		{
			name:  "removed apiVersion",
			base:  goodDeployment,
			edits: [][2]string{{"apiVersion: apps/v1\n", "apiVersion: extensions/v1beta1\n"}},
			want:  []Problem{{dep, "", "apiVersion extensions/v1beta1 is a pre-release version of Deployment (removed in Kubernetes 1.16)"}},
		},
		{
			name:  "unknown field in a cert-manager Certificate",
			base:  goodCertificate,
			edits: [][2]string{{"  commonName: web\n", "  commonname: web\n"}},
			want:  []Problem{{"Certificate t/web", "", `unknown field "spec.commonname"`}},
		},
		{
			name:  "cert-manager key usage",
			base:  goodCertificate,
			edits: [][2]string{{"server auth]", "serverauth]"}},
			want:  []Problem{{"Certificate t/web", "spec.usages[1]", `"serverauth" is not a cert-manager key usage`}},
		},
		{
			name: "no probes",
			base: goodDeployment,
			edits: [][2]string{
				{"          readinessProbe:\n            httpGet: {path: /readyz, port: http}\n", ""},
				{"          livenessProbe:\n            httpGet: {path: /healthz, port: http}\n", ""},
			},
			want: []Problem{
				{dep, ctr + ".readinessProbe", "missing: a long-running server needs one"},
				{dep, ctr + ".livenessProbe", "missing: a long-running server needs one"},
			},
		},
		{
			name:  "probe on a port the container lacks",
			base:  goodDeployment,
			edits: [][2]string{{"path: /healthz, port: http}", "path: /healthz, port: ops}"}},
			want:  []Problem{{dep, ctr + ".livenessProbe", `port "ops": the container has no port of that name`}},
		},
		{
			name: "no security contexts",
			base: goodDeployment,
			edits: [][2]string{
				{"      securityContext:\n        runAsNonRoot: true\n        runAsUser: 65532\n        seccompProfile: {type: RuntimeDefault}\n", ""},
				{"          securityContext:\n            allowPrivilegeEscalation: false\n            readOnlyRootFilesystem: true\n            capabilities: {drop: [ALL]}\n", ""},
			},
			want: []Problem{
				{dep, ctr + ".securityContext", "missing"},
				{dep, ctr + ".securityContext.runAsNonRoot", "must be true"},
				{dep, ctr + ".securityContext.seccompProfile.type", "must be RuntimeDefault or Localhost"},
			},
		},
		{
			name: "weak security context",
			base: goodDeployment,
			edits: [][2]string{
				{"allowPrivilegeEscalation: false", "allowPrivilegeEscalation: true"},
				{"readOnlyRootFilesystem: true", "readOnlyRootFilesystem: false"},
				{"capabilities: {drop: [ALL]}", "capabilities: {drop: [NET_RAW], add: [SYS_ADMIN]}"},
				{"        runAsUser: 65532\n", "        runAsUser: 0\n"},
			},
			want: []Problem{
				{dep, ctr + ".securityContext.allowPrivilegeEscalation", "must be false"},
				{dep, ctr + ".securityContext.readOnlyRootFilesystem", "must be true"},
				{dep, ctr + ".securityContext.capabilities.drop", "must contain ALL"},
				{dep, ctr + ".securityContext.capabilities.add", "SYS_ADMIN is not allowed"},
				{dep, ctr + ".securityContext.runAsUser", "must not be 0"},
			},
		},
		{
			name: "the node's namespaces, files and ports",
			base: goodDeployment,
			edits: [][2]string{
				{"      securityContext:\n        runAsNonRoot", "      hostNetwork: true\n      securityContext:\n        runAsNonRoot"},
				{"          emptyDir: {}\n", "          hostPath: {path: /tmp}\n"},
				{"containerPort: 8080}", "containerPort: 8080, hostPort: 8080}"},
			},
			want: []Problem{
				{dep, "spec.template.spec.hostNetwork", "must not be true"},
				{dep, "spec.template.spec.volumes[name=tmp]", "not allowed by the restricted Pod Security Standard"},
				{dep, ctr + ".ports[0].hostPort", "must not be set"},
			},
		},
		{
			name:  "no resource requests",
			base:  goodDeployment,
			edits: [][2]string{{"            requests: {cpu: 100m, memory: 64Mi}\n", ""}},
			want: []Problem{
				{dep, ctr + ".resources.requests.cpu", "missing"},
				{dep, ctr + ".resources.requests.memory", "missing"},
			},
		},
		{
			name:  "request above limit",
			base:  goodDeployment,
			edits: [][2]string{{"memory: 64Mi}", "memory: 256Mi}"}},
			want:  []Problem{{dep, ctr + ".resources.requests.memory", "256Mi is above the limit 128Mi"}},
		},
		{
			name:  "job: every rule but probes",
			base:  goodJob,
			edits: [][2]string{{"            requests: {cpu: 10m, memory: 16Mi}\n", ""}},
			want: []Problem{
				{"Job t/seed", "spec.template.spec.containers[name=seed].resources.requests.cpu", "missing"},
				{"Job t/seed", "spec.template.spec.containers[name=seed].resources.requests.memory", "missing"},
			},
		},
		{
			name:  "service selects nothing",
			base:  goodDeployment + "---\n" + goodService,
			edits: [][2]string{{"  selector: {app: web}\n  ports:", "  selector: {app: wbe}\n  ports:"}},
			want:  []Problem{{"Service t/web", "spec.selector", "matches no workload's pods"}},
		},
		{
			name:  "service target port the pods lack",
			base:  goodDeployment + "---\n" + goodService,
			edits: [][2]string{{"targetPort: http}", "targetPort: https}"}},
			want:  []Problem{{"Service t/web", "spec.ports[0].targetPort", `"https": Deployment t/web has no container port of that name`}},
		},
		{
			name: "environment from a missing ConfigMap key",
			base: goodDeployment + "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: env, namespace: t}\ndata: {A: a}\n",
			edits: [][2]string{{"          image: web:1\n", "          image: web:1\n          env:\n" +
				"            - name: B\n              valueFrom: {configMapKeyRef: {name: env, key: B}}\n"}},
			want: []Problem{{dep, ctr + ".env[name=B].valueFrom.configMapKeyRef", `names the key "B", which the ConfigMap "env" does not hold`}},
		},
		{
			name:  "volume from a missing Secret",
			base:  goodDeployment,
			edits: [][2]string{{"          emptyDir: {}\n", "          emptyDir: {}\n        - name: tls\n          secret: {secretName: web-tls}\n"}},
			want:  []Problem{{dep, "spec.template.spec.volumes[name=tls].secret", `names the Secret "web-tls", which is not among the rendered objects`}},
		},
		{
			name:  "volume from a Certificate's Secret",
			base:  goodDeployment + "---\n" + goodCertificate,
			edits: [][2]string{{"          emptyDir: {}\n", "          emptyDir: {}\n        - name: tls\n          secret: {secretName: web-tls}\n"}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			manifest := tc.base
			for _, e := range tc.edits {
				if !strings.Contains(manifest, e[0]) {
					t.Fatalf("edit %q: not in the manifest", e[0])
				}
				manifest = strings.Replace(manifest, e[0], e[1], 1)
			}
			dir := t.TempDir()
			write(t, filepath.Join(dir, "kustomization.yaml"), "resources: [m.yaml]\n")
			write(t, filepath.Join(dir, "m.yaml"), manifest)
			objs, err := Render(dir, false)
			if err != nil {
				t.Fatal(err)
			}
			res, err := Check(objs)
			if err != nil {
				t.Fatal(err)
			}
			got := res.Problems
			for _, w := range tc.want {
				found := false
				for _, p := range got {
					found = found || (p.Object == w.Object && p.Field == w.Field && strings.Contains(p.Msg, w.Msg))
				}
				if !found {
					t.Errorf("want a problem %s; got %d:\n%s", w, len(got), problemList(got))
				}
			}
			if len(got) != len(tc.want) {
				t.Errorf("got %d problems, want %d:\n%s", len(got), len(tc.want), problemList(got))
			}
		})
	}
}

// TestRenderRefusesDuplicateKeys: a key given twice never reaches Check:
// kustomize's YAML parser refuses it first.
func TestRenderRefusesDuplicateKeys(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "kustomization.yaml"), "resources: [m.yaml]\n")
	write(t, filepath.Join(dir, "m.yaml"), strings.Replace(goodDeployment, "  replicas: 2\n", "  replicas: 2\n  replicas: 3\n", 1))
	_, err := Render(dir, false)
	if err == nil || !strings.Contains(err.Error(), "replicas") {
		t.Fatalf("Render: %v, want an error about the duplicate replicas", err)
	}
	t.Log(err)
}

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func problemList(ps []Problem) string {
	var b strings.Builder
	for _, p := range ps {
		b.WriteString("  " + p.String() + "\n")
	}
	return b.String()
}
