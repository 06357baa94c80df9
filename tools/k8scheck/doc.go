// Package k8scheck renders deploy/k8s with kustomize (as `kubectl apply -k`
// would, from the files on disk, without a cluster or network) and checks
// what comes out: every object decodes strictly into its Kubernetes API type
// (an unknown or duplicated field is an error, as the API server's strict
// field validation would make it), every workload's containers carry probes,
// a restricted security context and resource requests, and what the objects
// name (ConfigMaps, Secrets, selectors, ports) exists. Its test runs with
// every other in `make test`; `make k8s-check` runs it alone.
//
// It is a package of tools' module, not of a service's, so the Kubernetes
// and kustomize modules stay out of every binary's dependencies
// (docs/decisions.md#runtime-k8s-manifests-checked).
package k8scheck
