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

package credentials

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/credo-dev/credo/internal/helmrecord"
)

// writeHelmRecord writes Helm's storage Secret of release version as Helm
// does (base64 of the gzipped JSON record), with config as its values.
// The tests' stand-in for what helm-controller deploys; tests/e2e runs the
// real one.
func writeHelmRecord(g Gomega, ns, release string, version int, config map[string]any) {
	ctx := context.Background()
	body, err := json.Marshal(map[string]any{"name": release, "namespace": ns, "version": version, "config": config})
	g.Expect(err).NotTo(HaveOccurred())
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	_, err = zw.Write(body)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(zw.Close()).To(Succeed())
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: helmrecord.SecretName(release, version), Namespace: ns, Labels: map[string]string{"owner": "helm", "name": release}},
		Type:       helmrecord.SecretType,
		Data:       map[string][]byte{"release": []byte(base64.StdEncoding.EncodeToString(buf.Bytes()))},
	}
	err = env.Client.Create(ctx, s)
	if apierrors.IsAlreadyExists(err) {
		err = env.Client.Update(ctx, s)
	}
	g.Expect(err).NotTo(HaveOccurred())
}

// deployedConfig is what helm-controller composes from hr's valuesFrom for
// the tests' releases: each account Secret entry's value at its
// targetPath, read now.
func deployedConfig(g Gomega, hr *helmv2.HelmRelease) map[string]any {
	config := map[string]any{}
	for _, v := range hr.Spec.ValuesFrom {
		if v.Kind != "Secret" || v.TargetPath == "" {
			continue
		}
		var s corev1.Secret
		if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: hr.Namespace, Name: v.Name}, &s); err != nil {
			continue
		}
		setPath(config, v.TargetPath, string(s.Data[v.ValuesKey]))
	}
	return config
}

// setPath sets a dotted path in values, making the maps on the way.
func setPath(values map[string]any, path, value string) {
	segs := pathSegments(path)
	m := values
	for _, seg := range segs[:len(segs)-1] {
		next, ok := m[seg].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[seg] = next
		}
		m = next
	}
	m[segs[len(segs)-1]] = value
}
