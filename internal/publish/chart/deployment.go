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
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// controller is the values of one controller's Deployment, as config/manager
// has them.
type controller struct {
	// Name is the Deployment's name, Key its values key: trust-controller
	// is trustController.
	Name, Key string
	Replicas  int
	Resources *yaml.RNode
	// Flags are the container's args, flag name to value; true stands for a
	// flag without a value (--enable-leader-election).
	Flags [][2]string
	// Image and PullPolicy are the container's.
	Image, PullPolicy string
	// TopologySpread is the pods' topologySpreadConstraints.
	TopologySpread *yaml.RNode
}

// credentialController is the Deployment that serves the access API: the
// certificate source adds flags, a volume and its mount to it.
const credentialController = "credentialController"

// valuesKey is a Deployment's values key: its name in lowerCamelCase.
func valuesKey(name string) string {
	parts := strings.Split(name, "-")
	for i := 1; i < len(parts); i++ {
		parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
	}
	return strings.Join(parts, "")
}

// templateDeployment replaces the parts of a controller's Deployment an
// operator sets by values (replicas, image, args, resources, scheduling)
// with placeholders, and returns the values config/manager gives them.
func templateDeployment(t *template, d *yaml.RNode) (*controller, error) {
	c := &controller{Name: d.GetName(), Key: valuesKey(d.GetName())}
	v := ".Values." + c.Key

	replicas, err := d.Pipe(yaml.Lookup("spec", "replicas"))
	if err != nil || replicas == nil {
		return nil, fmt.Errorf("no spec.replicas: %w", err)
	}
	if err := yaml.Unmarshal([]byte(replicas.MustString()), &c.Replicas); err != nil {
		return nil, fmt.Errorf("spec.replicas: %w", err)
	}
	if err := d.PipeE(yaml.Lookup("spec"), yaml.SetField("replicas", t.Scalar("{{ "+v+".replicas }}"))); err != nil {
		return nil, err
	}

	pod, err := d.Pipe(yaml.Lookup("spec", "template", "spec"))
	if err != nil || pod == nil {
		return nil, fmt.Errorf("no spec.template.spec: %w", err)
	}
	containers, err := pod.Pipe(yaml.Lookup("containers"))
	if err != nil {
		return nil, err
	}
	items, err := containers.Elements()
	if err != nil || len(items) != 1 {
		return nil, fmt.Errorf("want one container, have %d: %w", len(items), err)
	}
	ctr := items[0]

	c.Image = yaml.GetValue(ctr.Field("image").Value)
	if err := ctr.PipeE(yaml.SetField("image", t.Scalar(`{{ include "credo.image" . }}`))); err != nil {
		return nil, err
	}
	c.PullPolicy = yaml.GetValue(ctr.Field("imagePullPolicy").Value)
	if err := ctr.PipeE(yaml.SetField("imagePullPolicy", t.Scalar("{{ .Values.image.pullPolicy }}"))); err != nil {
		return nil, err
	}

	args, err := ctr.Pipe(yaml.Lookup("args"))
	if err != nil || args == nil {
		return nil, fmt.Errorf("no args: %w", err)
	}
	if c.Flags, err = parseFlags(args); err != nil {
		return nil, err
	}
	if err := t.SetLine(ctr, "args", func(indent, key string) string {
		return fmt.Sprintf(`%s%s:%s  {{- include "credo.args" (dict "component" %q "root" $) | nindent %d }}`,
			indent, key, "\n"+indent, c.Key, len(indent)+2)
	}); err != nil {
		return nil, err
	}

	resources, err := ctr.Pipe(yaml.Lookup("resources"))
	if err != nil || resources == nil {
		return nil, fmt.Errorf("no resources: %w", err)
	}
	// A copy: SetLine replaces the node in place.
	c.Resources = resources.Copy()
	if err := t.SetLine(ctr, "resources", toYAMLBlock(v+".resources")); err != nil {
		return nil, err
	}

	if c.Key == credentialController {
		if err := templateCertificateMount(t, pod, ctr); err != nil {
			return nil, err
		}
	}
	spread := pod.Field("topologySpreadConstraints")
	if spread == nil {
		return nil, fmt.Errorf("no spec.template.spec.topologySpreadConstraints: the chart's default is config/'s")
	}
	c.TopologySpread = spread.Value.Copy()
	if err := t.SetLine(pod, "topologySpreadConstraints", withBlock(v+".topologySpreadConstraints")); err != nil {
		return nil, err
	}
	for _, f := range []string{"nodeSelector", "affinity", "tolerations"} {
		if pod.Field(f) != nil {
			return nil, fmt.Errorf("spec.template.spec.%s is set: the chart sets it from values", f)
		}
		if err := t.SetLine(pod, f, withBlock(v+"."+f)); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// parseFlags reads args of the form --name=value or --name (a boolean
// flag, value "true").
func parseFlags(args *yaml.RNode) ([][2]string, error) {
	items, err := args.Elements()
	if err != nil {
		return nil, err
	}
	var values []string
	for _, it := range items {
		values = append(values, yaml.GetValue(it))
	}
	var flags [][2]string
	seen := map[string]bool{}
	for _, a := range values {
		name, ok := strings.CutPrefix(a, "--")
		if !ok {
			return nil, fmt.Errorf("arg %q is not a --flag", a)
		}
		name, value, hasValue := strings.Cut(name, "=")
		if !hasValue {
			value = "true"
		}
		if seen[name] {
			return nil, fmt.Errorf("flag --%s is given twice", name)
		}
		seen[name] = true
		flags = append(flags, [2]string{name, value})
	}
	return flags, nil
}

// certificateVolume is the volume of the access API's serving certificate
// when it does not come from the credential-controller itself, and
// certificateDir where it is mounted (--access-api-cert-dir).
const (
	certificateVolume = "access-api-cert"
	certificateDir    = "/etc/credo/access-api"
)

// templateCertificateMount adds the volume and mount of a cert-manager or
// own serving certificate to the credential-controller's pod, present only
// when apiService.certificate.source is not generated, after the volumes
// and mounts config/ gives it.
func templateCertificateMount(t *template, pod, ctr *yaml.RNode) error {
	cond := `{{- if include "credo.certificateSecret" $ }}`
	if err := appendConditionalItem(t, ctr, "volumeMounts", cond,
		"- name: "+certificateVolume,
		"  mountPath: "+certificateDir,
		"  readOnly: true"); err != nil {
		return err
	}
	return appendConditionalItem(t, pod, "volumes", cond,
		"- name: "+certificateVolume,
		"  secret:",
		`    secretName: {{ include "credo.certificateSecret" $ }}`)
}

// appendConditionalItem makes node's list field its items as they are and
// then item, rendered only when cond holds. Without items, the whole field
// is rendered only when cond holds.
func appendConditionalItem(t *template, node *yaml.RNode, field, cond string, item ...string) error {
	var existing []string
	if f := node.Field(field); f != nil {
		s, err := f.Value.String()
		if err != nil {
			return err
		}
		existing = strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	}
	return t.SetLine(node, field, func(indent, key string) string {
		lines := []string{cond, key + ":"}
		lines = append(lines, indentAll("  ", item)...)
		lines = append(lines, "{{- end }}")
		if existing != nil {
			lines = append([]string{key + ":"}, indentAll("  ", existing)...)
			lines = append(lines, cond)
			lines = append(lines, indentAll("  ", item)...)
			lines = append(lines, "{{- end }}")
		}
		return raw(lines...)(indent, "")
	})
}

func indentAll(prefix string, lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = prefix + l
	}
	return out
}
