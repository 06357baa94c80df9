package k8scheck

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/client-go/kubernetes/scheme"
)

// Decoder turns a rendered manifest into its typed object, refusing what the
// type does not hold.
type Decoder struct {
	k8s *json.Serializer
}

// NewDecoder knows every built-in Kubernetes API group and version of
// client-go's scheme, and cert-manager's Issuer and Certificate.
func NewDecoder() (*Decoder, error) {
	s := runtime.NewScheme()
	if err := scheme.AddToScheme(s); err != nil {
		return nil, err
	}
	// Strict: an unknown field or a key given twice is an error, not
	// dropped. Without it a misspelt field (spec.replicasx) decodes into
	// nothing and the cluster silently runs the default.
	opts := json.SerializerOptions{Yaml: true, Strict: true}
	return &Decoder{k8s: json.NewSerializerWithOptions(json.DefaultMetaFactory, s, s, opts)}, nil
}

// Decode returns the object as its Go type: a runtime.Object of k8s.io/api
// for the built-in kinds, a *cmIssuer or *cmCertificate for cert-manager's.
// A kind it has no type for is an error: checking such an object would pass
// on nothing.
func (d *Decoder) Decode(o Object) (any, error) {
	gv, err := schema.ParseGroupVersion(o.APIVersion)
	if err != nil {
		return nil, fmt.Errorf("apiVersion %q: %w", o.APIVersion, err)
	}
	if gv.Group == certManagerGroup {
		return decodeCertManager(o, gv)
	}
	obj, _, err := d.k8s.Decode(o.YAML, nil, nil)
	if runtime.IsNotRegisteredError(err) {
		return nil, fmt.Errorf("no Kubernetes API type for apiVersion %s, kind %s: "+
			"a misspelt or removed version, or a custom resource k8scheck has no type for", o.APIVersion, o.Kind)
	}
	if err != nil {
		return nil, err
	}
	// The scheme still holds removed versions (extensions/v1beta1
	// Deployments) for old clients; a cluster of today refuses them. Only
	// the GA versions (which carry no lifecycle) are taken, so a manifest
	// does not break on the next upgrade of the cluster either.
	if pre, ok := obj.(prerelease); ok {
		major, minor := pre.APILifecycleRemoved()
		return nil, fmt.Errorf("apiVersion %s is a pre-release version of %s (removed in Kubernetes %d.%d): use its GA version",
			o.APIVersion, o.Kind, major, minor)
	}
	return obj, nil
}

// prerelease is what k8s.io/api generates for alpha and beta types.
type prerelease interface {
	APILifecycleIntroduced() (major, minor int)
	APILifecycleRemoved() (major, minor int)
}
