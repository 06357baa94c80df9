package k8scheck

import (
	"fmt"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// Object is one rendered manifest: its identity and its YAML, as kustomize
// wrote it.
type Object struct {
	APIVersion string
	Kind       string
	Namespace  string
	Name       string
	YAML       []byte
}

// String names the object the way a reader finds it: "Deployment fris/auth".
func (o Object) String() string {
	if o.Namespace == "" {
		return o.Kind + " " + o.Name
	}
	return o.Kind + " " + o.Namespace + "/" + o.Name
}

// Render builds the kustomization in dir as `kustomize build dir` does.
// Kustomize's default load restrictions apply (files only from under dir;
// other kustomizations anywhere) unless anyFile is set: an overlay that adds
// a single file of a base's directory, as an operator does by adding it to
// the base's list, needs that. Plugins stay disabled, as in kubectl.
func Render(dir string, anyFile bool) ([]Object, error) {
	opts := krusty.MakeDefaultOptions()
	if anyFile {
		opts.LoadRestrictions = types.LoadRestrictionsNone
	}
	m, err := krusty.MakeKustomizer(opts).Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		return nil, fmt.Errorf("kustomize build %s: %w", dir, err)
	}
	objs := make([]Object, 0, m.Size())
	for _, r := range m.Resources() {
		y, err := r.AsYAML()
		if err != nil {
			return nil, fmt.Errorf("kustomize build %s: %s: %w", dir, r.CurId(), err)
		}
		objs = append(objs, Object{
			APIVersion: r.GetApiVersion(),
			Kind:       r.GetKind(),
			Namespace:  r.GetNamespace(),
			Name:       r.GetName(),
			YAML:       y,
		})
	}
	return objs, nil
}
