package k8scheck

import (
	"errors"
	"fmt"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// cert-manager's own Go types would bring its whole module (controllers,
// ACME, cloud SDKs) for two kinds. These structs hold the fields of
// cert-manager.io/v1 Issuer and Certificate that a CA issuer chain uses
// (cert-manager's API reference, v1); a field they lack is an error, like
// any unknown field, and is added here once a manifest needs it.
const certManagerGroup = "cert-manager.io"

type cmIssuer struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		SelfSigned *struct {
			CRLDistributionPoints []string `json:"crlDistributionPoints,omitempty"`
		} `json:"selfSigned,omitempty"`
		CA *struct {
			SecretName             string   `json:"secretName"`
			CRLDistributionPoints  []string `json:"crlDistributionPoints,omitempty"`
			OCSPServers            []string `json:"ocspServers,omitempty"`
			IssuingCertificateURLs []string `json:"issuingCertificateURLs,omitempty"`
		} `json:"ca,omitempty"`
	} `json:"spec"`
}

type cmCertificate struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		SecretName     string   `json:"secretName"`
		CommonName     string   `json:"commonName,omitempty"`
		DNSNames       []string `json:"dnsNames,omitempty"`
		IPAddresses    []string `json:"ipAddresses,omitempty"`
		URIs           []string `json:"uris,omitempty"`
		EmailAddresses []string `json:"emailAddresses,omitempty"`
		IsCA           bool     `json:"isCA,omitempty"`
		Usages         []string `json:"usages,omitempty"`
		Duration       string   `json:"duration,omitempty"`
		RenewBefore    string   `json:"renewBefore,omitempty"`
		PrivateKey     *struct {
			Algorithm      string `json:"algorithm,omitempty"`
			Size           int    `json:"size,omitempty"`
			Encoding       string `json:"encoding,omitempty"`
			RotationPolicy string `json:"rotationPolicy,omitempty"`
		} `json:"privateKey,omitempty"`
		IssuerRef struct {
			Name  string `json:"name"`
			Kind  string `json:"kind,omitempty"`
			Group string `json:"group,omitempty"`
		} `json:"issuerRef"`
		SecretTemplate *struct {
			Annotations map[string]string `json:"annotations,omitempty"`
			Labels      map[string]string `json:"labels,omitempty"`
		} `json:"secretTemplate,omitempty"`
		RevisionHistoryLimit *int32 `json:"revisionHistoryLimit,omitempty"`
	} `json:"spec"`
}

// The values cert-manager's v1 API accepts.
var (
	cmUsages = []string{"signing", "digital signature", "content commitment", "key encipherment",
		"key agreement", "data encipherment", "cert sign", "crl sign", "encipher only",
		"decipher only", "any", "server auth", "client auth", "code signing", "email protection",
		"s/mime", "ipsec end system", "ipsec tunnel", "ipsec user", "timestamping", "ocsp signing",
		"microsoft sgc", "netscape sgc"}
	cmAlgorithms       = []string{"RSA", "ECDSA", "Ed25519"}
	cmRotationPolicies = []string{"Never", "Always"}
	cmIssuerKinds      = []string{"Issuer", "ClusterIssuer"}
)

func decodeCertManager(o Object, gv schema.GroupVersion) (any, error) {
	if gv.Version != "v1" {
		return nil, fmt.Errorf("apiVersion %s: cert-manager serves v1 only", o.APIVersion)
	}
	var v any
	switch o.Kind {
	case "Issuer", "ClusterIssuer":
		v = &cmIssuer{}
	case "Certificate":
		v = &cmCertificate{}
	default:
		return nil, fmt.Errorf("%s %s: k8scheck has no type for this cert-manager kind", o.APIVersion, o.Kind)
	}
	// As the Kubernetes decoder in strict mode: a key given twice is an
	// error (YAMLToJSONStrict), and so is a field the type lacks, matched
	// case-sensitively (encoding/json would take "commonname" for
	// commonName; the API server does not).
	j, err := yaml.YAMLToJSONStrict(o.YAML)
	if err != nil {
		return nil, fmt.Errorf("strict decoding error: %w", err)
	}
	strict, err := kjson.UnmarshalStrict(j, v)
	if err != nil {
		return nil, err
	}
	if len(strict) > 0 {
		return nil, fmt.Errorf("strict decoding error: %w", errors.Join(strict...))
	}
	return v, nil
}

// checkIssuer: exactly one way of issuing.
func checkIssuer(name string, is *cmIssuer) []Problem {
	n := 0
	if is.Spec.SelfSigned != nil {
		n++
	}
	if is.Spec.CA != nil {
		n++
		if is.Spec.CA.SecretName == "" {
			return []Problem{{name, "spec.ca.secretName", "missing"}}
		}
	}
	if n != 1 {
		return []Problem{{name, "spec", "must set exactly one of selfSigned, ca"}}
	}
	return nil
}

// checkCertificate: the values cert-manager would refuse at apply time.
func checkCertificate(name string, c *cmCertificate) []Problem {
	var ps []Problem
	add := func(field, msg string, args ...any) {
		ps = append(ps, Problem{name, field, fmt.Sprintf(msg, args...)})
	}
	s := &c.Spec
	if s.SecretName == "" {
		add("spec.secretName", "missing")
	}
	if s.IssuerRef.Name == "" {
		add("spec.issuerRef.name", "missing")
	}
	if s.IssuerRef.Kind != "" && !slices.Contains(cmIssuerKinds, s.IssuerRef.Kind) {
		add("spec.issuerRef.kind", "%q is none of %v", s.IssuerRef.Kind, cmIssuerKinds)
	}
	for i, u := range s.Usages {
		if !slices.Contains(cmUsages, u) {
			add(fmt.Sprintf("spec.usages[%d]", i), "%q is not a cert-manager key usage", u)
		}
	}
	for _, d := range []struct{ field, value string }{{"spec.duration", s.Duration}, {"spec.renewBefore", s.RenewBefore}} {
		if d.value == "" {
			continue
		}
		if _, err := time.ParseDuration(d.value); err != nil {
			add(d.field, "%v", err)
		}
	}
	if k := s.PrivateKey; k != nil {
		if k.Algorithm != "" && !slices.Contains(cmAlgorithms, k.Algorithm) {
			add("spec.privateKey.algorithm", "%q is none of %v", k.Algorithm, cmAlgorithms)
		}
		if k.RotationPolicy != "" && !slices.Contains(cmRotationPolicies, k.RotationPolicy) {
			add("spec.privateKey.rotationPolicy", "%q is none of %v", k.RotationPolicy, cmRotationPolicies)
		}
	}
	if s.CommonName == "" && len(s.DNSNames)+len(s.IPAddresses)+len(s.URIs)+len(s.EmailAddresses) == 0 {
		add("spec", "names no subject: set commonName or a subject alternative name")
	}
	return ps
}
