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
	"fmt"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// admissionConfigMap is the parameters of the admission policies; its data
// are the values under admission.
const admissionConfigMap = "credo-admission"

// templateObject replaces, in o, what values set with placeholders of t,
// and records the defaults config/ gives them.
func (g *generator) templateObject(t *template, o object) error {
	switch o.kind() {
	case "CustomResourceDefinition":
		// helm uninstall keeps the CRDs, and with them every object of
		// credo's kinds, as Flux's deletionPolicy Orphan does for the
		// kustomize install.
		annotations, err := o.node.Pipe(yaml.LookupCreate(yaml.MappingNode, "metadata", "annotations"))
		if err != nil {
			return err
		}
		return t.AddLines(annotations, raw(
			"{{- if .Values.crds.keep }}",
			"helm.sh/resource-policy: keep",
			"{{- end }}"))
	case "Deployment":
		c, err := templateDeployment(t, o.node)
		if err != nil {
			return err
		}
		g.controllers = append(g.controllers, c)
	case "ConfigMap":
		if o.name() != admissionConfigMap {
			return nil
		}
		data, err := o.node.Pipe(yaml.Lookup("data"))
		if err != nil || data == nil {
			return fmt.Errorf("no data: %w", err)
		}
		if g.admission, err = g.admissionValues(o.origin, data); err != nil {
			return err
		}
		return t.SetLine(o.node, "data", func(indent, key string) string {
			return raw(key+":",
				"  {{- range $key, $value := .Values.admission }}",
				"  {{ $key }}: {{ tpl (toString $value) $ | quote }}",
				"  {{- end }}")(indent, "")
		})
	case "APIService":
		return templateAPIService(t, o.node)
	case "NetworkPolicy":
		return g.templateNetworkPolicy(t, o.node)
	case "PrometheusRule":
		labels, err := o.node.Pipe(yaml.LookupCreate(yaml.MappingNode, "metadata", "labels"))
		if err != nil {
			return err
		}
		return t.AddLines(labels, func(indent, _ string) string {
			return raw(
				"{{- with .Values.monitoring.prometheusRule.labels }}",
				"{{- toYaml . | nindent "+fmt.Sprint(len(indent))+" }}",
				"{{- end }}")(indent, "")
		})
	}
	return nil
}

// templateAPIService adds what the access API's certificate source asks of
// the APIService: cert-manager's CA injection annotation, or the caBundle of
// an own certificate. With the generated certificate the
// credential-controller keeps caBundle set itself.
func templateAPIService(t *template, a *yaml.RNode) error {
	svc, err := a.Pipe(yaml.Lookup("spec", "service", "name"))
	if err != nil || svc == nil || yaml.GetValue(svc) != accessService {
		return fmt.Errorf("spec.service.name is not %s, which the cert-manager Certificate is for: %w", accessService, err)
	}
	meta, err := a.Pipe(yaml.Lookup(yaml.MetadataField))
	if err != nil {
		return err
	}
	if meta.Field(yaml.AnnotationsField) != nil {
		return fmt.Errorf("has annotations: the chart adds cert-manager's to none")
	}
	if err := t.AddLines(meta, raw(
		`{{- if eq .Values.apiService.certificate.source "cert-manager" }}`,
		"annotations:",
		"  cert-manager.io/inject-ca-from: {{ .Release.Namespace }}/"+accessService,
		"{{- end }}")); err != nil {
		return err
	}
	spec, err := a.Pipe(yaml.Lookup("spec"))
	if err != nil {
		return err
	}
	return t.AddLines(spec, raw(
		`{{- if eq .Values.apiService.certificate.source "secret" }}`,
		`caBundle: {{ required "apiService.certificate.secret.caBundle is required when apiService.certificate.source is secret" .Values.apiService.certificate.secret.caBundle | quote }}`,
		"{{- end }}"))
}

// templateNetworkPolicy makes the peers of the access API's ingress rule
// (its only rule with a from) networkPolicy.apiServerCIDRs and
// networkPolicy.extraFrom.
func (g *generator) templateNetworkPolicy(t *template, np *yaml.RNode) error {
	rules, err := np.Pipe(yaml.Lookup("spec", "ingress"))
	if err != nil || rules == nil {
		return fmt.Errorf("no spec.ingress: %w", err)
	}
	items, err := rules.Elements()
	if err != nil {
		return err
	}
	var rule *yaml.RNode
	for _, r := range items {
		if r.Field("from") != nil {
			if rule != nil {
				return fmt.Errorf("more than one ingress rule has a from")
			}
			rule = r
		}
	}
	if rule == nil {
		return fmt.Errorf("no ingress rule has a from")
	}
	peers, err := rule.Pipe(yaml.Lookup("from"))
	if err != nil {
		return err
	}
	peerItems, err := peers.Elements()
	if err != nil {
		return err
	}
	for _, p := range peerItems {
		cidr, err := p.Pipe(yaml.Lookup("ipBlock", "cidr"))
		if err != nil || cidr == nil || len(p.Content()) != 2 || len(p.Field("ipBlock").Value.Content()) != 2 {
			return fmt.Errorf("a peer of the access API's rule is not an ipBlock of a cidr alone: %w", err)
		}
		g.cidrs = append(g.cidrs, yaml.GetValue(cidr))
	}
	return t.SetLine(rule, "from", func(indent, key string) string {
		return raw(
			key+":",
			"{{- if not (or .Values.networkPolicy.apiServerCIDRs .Values.networkPolicy.extraFrom) }}",
			`{{- fail "networkPolicy: set apiServerCIDRs or extraFrom (an empty from admits everyone)" }}`,
			"{{- end }}",
			"{{- range .Values.networkPolicy.apiServerCIDRs }}",
			"- ipBlock:",
			"    cidr: {{ . | quote }}",
			"{{- end }}",
			"{{- with .Values.networkPolicy.extraFrom }}",
			"{{- toYaml . | nindent "+fmt.Sprint(len(indent))+" }}",
			"{{- end }}")(indent, "")
	})
}
