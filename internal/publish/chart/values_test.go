/*
Copyright 2026 The credo Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package chart

import (
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestControllerValuesLandInTheirDeployments(t *testing.T) {
	g := NewWithT(t)
	objs := render(g, "platform-credo", map[string]any{
		"trustController": map[string]any{
			"replicas":     int64(3),
			"resources":    map[string]any{"limits": map[string]any{"memory": "2Gi"}},
			"flags":        map[string]any{"log-level": "debug", "enable-leader-election": nil, "label-domain": "example.com"},
			"extraArgs":    []any{"--shard={{ .Release.Name }}"},
			"nodeSelector": map[string]any{"kubernetes.io/os": "linux"},
			"tolerations":  []any{map[string]any{"operator": "Exists"}},
			"topologySpreadConstraints": []any{map[string]any{"maxSkew": int64(1), "topologyKey": "kubernetes.io/hostname",
				"whenUnsatisfiable": "DoNotSchedule", "labelSelector": map[string]any{"matchLabels": map[string]any{"app.kubernetes.io/name": "trust-controller"}}}},
		},
	})
	d := deployment(g, objs, "trust-controller")
	replicas, _, _ := unstructured.NestedInt64(d.Object, "spec", "replicas")
	g.Expect(replicas).To(BeEquivalentTo(3))
	c := container(g, objs, "trust-controller")
	// Helm merges maps: the other defaults stay.
	g.Expect(c["resources"]).To(HaveKeyWithValue("limits", map[string]any{"cpu": "1000m", "memory": "2Gi"}))
	g.Expect(args(g, objs, "trust-controller")).To(Equal([]string{
		"--health-addr=:9440", "--label-domain=example.com",
		"--leader-election-lease-duration=15s", "--leader-election-renew-deadline=10s", "--leader-election-retry-period=2s",
		"--log-encoding=json", "--log-level=debug", "--metrics-addr=:8080", "--shard=credo",
	}))
	sel, _, _ := unstructured.NestedStringMap(d.Object, "spec", "template", "spec", "nodeSelector")
	g.Expect(sel).To(Equal(map[string]string{"kubernetes.io/os": "linux"}))
	spread, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "topologySpreadConstraints")
	g.Expect(spread).To(ConsistOf(HaveKeyWithValue("whenUnsatisfiable", "DoNotSchedule")), "the values' spread replaces config/'s")
	tol, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "tolerations")
	g.Expect(tol).To(HaveLen(1))
	// The others keep their defaults.
	g.Expect(args(g, objs, "credential-controller")).To(ContainElement("--enable-leader-election"))
}

func TestImageDigestPinsTheImage(t *testing.T) {
	g := NewWithT(t)
	const digest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	objs := render(g, DefaultNamespace, map[string]any{"image": map[string]any{"digest": digest, "tag": "v9.9.9"}})
	for _, name := range []string{"trust-controller", "credential-controller", "enrollment-controller"} {
		g.Expect(container(g, objs, name)["image"]).To(Equal("ghcr.io/credo-dev/credo@" + digest))
	}
	objs = render(g, DefaultNamespace, map[string]any{"image": map[string]any{"repository": "registry.example/credo", "tag": "v9.9.9"}})
	g.Expect(container(g, objs, "trust-controller")["image"]).To(Equal("registry.example/credo:v9.9.9"))
}

func TestMonitoringAddsConfigMonitoringsObjects(t *testing.T) {
	g := NewWithT(t)
	off := render(g, DefaultNamespace, nil)
	on := render(g, DefaultNamespace, map[string]any{"monitoring": map[string]any{
		"enabled":          true,
		"prometheusRule":   map[string]any{"labels": map[string]any{"release": "kube-prometheus-stack"}},
		"kubeStateMetrics": map[string]any{"serviceAccount": map[string]any{"name": "kube-state-metrics", "namespace": "monitoring"}},
	}})
	var added []string
	for _, o := range on[len(off):] {
		added = append(added, key(o))
	}
	g.Expect(on).To(HaveLen(len(off) + 4))
	g.Expect(byKind(on, "PrometheusRule")).To(HaveLen(1))
	rule := byKind(on, "PrometheusRule")[0]
	g.Expect(rule.GetNamespace()).To(Equal(DefaultNamespace))
	g.Expect(rule.GetLabels()).To(HaveKeyWithValue("release", "kube-prometheus-stack"))
	// The alerts' annotations keep Prometheus' own templates.
	groups, _, _ := unstructured.NestedSlice(rule.Object, "spec", "groups")
	g.Expect(groups).NotTo(BeEmpty())
	rules := groups[0].(map[string]any)["rules"].([]any)
	g.Expect(rules[0].(map[string]any)["annotations"].(map[string]any)["summary"]).To(ContainSubstring("{{ $labels.name }}"))

	var cm *unstructured.Unstructured
	for _, o := range byKind(on, "ConfigMap") {
		if o.GetName() == "credo-kube-state-metrics" {
			cm = o
		}
	}
	g.Expect(cm).NotTo(BeNil())
	config, _, _ := unstructured.NestedString(cm.Object, "data", "config.yaml")
	g.Expect(config).To(ContainSubstring("kind: CustomResourceStateMetrics"))
	var binding *unstructured.Unstructured
	for _, o := range byKind(on, "ClusterRoleBinding") {
		if o.GetName() == "credo-kube-state-metrics" {
			binding = o
		}
	}
	g.Expect(binding).NotTo(BeNil(), "added: %v", added)
	subjects, _, _ := unstructured.NestedSlice(binding.Object, "subjects")
	g.Expect(subjects).To(ConsistOf(HaveKeyWithValue("namespace", "monitoring")))
}

func TestCertManagerServesTheAccessAPI(t *testing.T) {
	g := NewWithT(t)
	objs := render(g, "platform-credo", map[string]any{"apiService": map[string]any{"certificate": map[string]any{"source": "cert-manager"}}})
	apisvc := byKind(objs, "APIService")[0]
	g.Expect(apisvc.GetAnnotations()).To(HaveKeyWithValue("cert-manager.io/inject-ca-from", "platform-credo/credo-access"))
	certs := byKind(objs, "Certificate")
	g.Expect(certs).To(HaveLen(1))
	g.Expect(byKind(objs, "Issuer")).To(HaveLen(1), "no issuerRef: a self-signed Issuer")
	dns, _, _ := unstructured.NestedStringSlice(certs[0].Object, "spec", "dnsNames")
	g.Expect(dns).To(ConsistOf("credo-access.platform-credo.svc"))
	secret, _, _ := unstructured.NestedString(certs[0].Object, "spec", "secretName")

	g.Expect(args(g, objs, "credential-controller")).To(ContainElements(
		"--access-api-serving-secret=", "--access-api-inject-ca=false",
		"--access-api-cert-dir="+certificateDir, "--access-api-cert-pair-name=tls"))
	c := container(g, objs, "credential-controller")
	g.Expect(c["volumeMounts"]).To(ConsistOf(And(HaveKeyWithValue("name", certificateVolume), HaveKeyWithValue("mountPath", certificateDir)),
		And(HaveKeyWithValue("name", "temp"), HaveKeyWithValue("mountPath", "/tmp"))), "the certificate's after config/'s own")
	volumes, _, _ := unstructured.NestedSlice(deployment(g, objs, "credential-controller").Object, "spec", "template", "spec", "volumes")
	g.Expect(volumes).To(ConsistOf(HaveKeyWithValue("secret", HaveKeyWithValue("secretName", secret)), HaveKeyWithValue("name", "temp")))

	// An issuer of one's own: no Issuer.
	objs = render(g, "platform-credo", map[string]any{"apiService": map[string]any{"certificate": map[string]any{
		"source": "cert-manager", "certManager": map[string]any{"issuerRef": map[string]any{"name": "ca", "kind": "ClusterIssuer"}},
	}}})
	g.Expect(byKind(objs, "Issuer")).To(BeEmpty())
}

func TestOwnSecretServesTheAccessAPI(t *testing.T) {
	g := NewWithT(t)
	_, err := Render(chartDir, DefaultNamespace, map[string]any{"apiService": map[string]any{"certificate": map[string]any{"source": "secret"}}})
	g.Expect(err).To(MatchError(ContainSubstring("apiService.certificate.secret.name is required")))

	objs := render(g, DefaultNamespace, map[string]any{"apiService": map[string]any{"certificate": map[string]any{
		"source": "secret", "secret": map[string]any{"name": "my-tls", "caBundle": "Q0E="},
	}}})
	ca, _, _ := unstructured.NestedString(byKind(objs, "APIService")[0].Object, "spec", "caBundle")
	g.Expect(ca).To(Equal("Q0E="))
	g.Expect(args(g, objs, "credential-controller")).To(ContainElement("--access-api-inject-ca=false"))
	g.Expect(byKind(objs, "Certificate")).To(BeEmpty())
}

func TestAPIServiceOffTurnsTheServerOff(t *testing.T) {
	g := NewWithT(t)
	objs := render(g, DefaultNamespace, map[string]any{"apiService": map[string]any{"enabled": false}})
	g.Expect(byKind(objs, "APIService")).To(BeEmpty())
	g.Expect(args(g, objs, "credential-controller")).To(ContainElement("--access-api-secure-port=0"))
}

func TestNetworkPolicyAdmitsTheGivenCIDRs(t *testing.T) {
	g := NewWithT(t)
	g.Expect(byKind(render(g, DefaultNamespace, nil), "NetworkPolicy")).To(BeEmpty())
	objs := render(g, DefaultNamespace, map[string]any{"networkPolicy": map[string]any{
		"enabled": true, "apiServerCIDRs": []any{"10.0.0.1/32", "10.0.0.2/32"},
	}})
	np := byKind(objs, "NetworkPolicy")
	g.Expect(np).To(HaveLen(1))
	ingress, _, _ := unstructured.NestedSlice(np[0].Object, "spec", "ingress")
	g.Expect(ingress[0].(map[string]any)["from"]).To(Equal([]any{
		map[string]any{"ipBlock": map[string]any{"cidr": "10.0.0.1/32"}},
		map[string]any{"ipBlock": map[string]any{"cidr": "10.0.0.2/32"}},
	}))
	_, err := Render(chartDir, DefaultNamespace, map[string]any{"networkPolicy": map[string]any{"enabled": true, "apiServerCIDRs": []any{}}})
	g.Expect(err).To(MatchError(ContainSubstring("an empty from admits everyone")))
}

func TestAdmissionValuesLandInTheConfigMap(t *testing.T) {
	g := NewWithT(t)
	objs := render(g, "platform-credo", map[string]any{"admission": map[string]any{
		"labelDomain": "example.com", "releaseStatusUsers": "system:serviceaccount:gitops:helm",
	}})
	var data map[string]string
	for _, o := range byKind(objs, "ConfigMap") {
		if o.GetName() == admissionConfigMap {
			data, _, _ = unstructured.NestedStringMap(o.Object, "data")
		}
	}
	g.Expect(data).To(HaveKeyWithValue("labelDomain", "example.com"))
	g.Expect(data).To(HaveKeyWithValue("releaseStatusUsers", "system:serviceaccount:gitops:helm"))
	g.Expect(data).To(HaveKeyWithValue("projectionUsers", "system:serviceaccount:platform-credo:credo-trust-controller"))

	_, err := Render(chartDir, DefaultNamespace, map[string]any{"admission": map[string]any{"labelDomian": "x"}})
	g.Expect(err).To(MatchError(ContainSubstring("labelDomian")), "the schema refuses a misspelt key")
}

func TestCRDsAreKeptAndCanBeLeftOut(t *testing.T) {
	g := NewWithT(t)
	crds := byKind(render(g, DefaultNamespace, nil), "CustomResourceDefinition")
	g.Expect(crds).NotTo(BeEmpty())
	for _, c := range crds {
		g.Expect(c.GetAnnotations()).To(HaveKeyWithValue("helm.sh/resource-policy", "keep"))
	}
	crds = byKind(render(g, DefaultNamespace, map[string]any{"crds": map[string]any{"keep": false}}), "CustomResourceDefinition")
	g.Expect(crds[0].GetAnnotations()).NotTo(HaveKey("helm.sh/resource-policy"))
	g.Expect(byKind(render(g, DefaultNamespace, map[string]any{"crds": map[string]any{"enabled": false}}), "CustomResourceDefinition")).To(BeEmpty())
}
