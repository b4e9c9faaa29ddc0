//go:build monitoring

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

package monitoring

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/credo-dev/credo/tests/controlplane"
	"github.com/credo-dev/credo/tests/testenv"
)

// The outage CredoAccessAPIUnavailable and CredoNamespaceDeletionBlocked are
// about, on the real components: config/apiservice's APIService and Service
// with no replica behind them, and a namespace deleted meanwhile.
// kube-apiserver serves aggregator_unavailable_apiservice for the APIService
// at 1, kube-controller-manager sets NamespaceDeletionDiscoveryFailure on the
// namespace and keeps it Terminating, and kube-state-metrics serves that as
// kube_namespace_status_condition at 1, each metric with exactly the labels
// platformMetrics lists. Then the runbook's emergency lever: deleting the
// APIService lets the namespace go and removes the gauge's series.
func TestKubernetesServesThePlatformMetricsTheRulesRead(t *testing.T) {
	g := NewWithT(t)
	ksm := ksmBinary(t)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	env := testenv.ControlPlane(t, controlplane.Options{Aggregation: true})
	c := env.Client
	cs, err := kubernetes.NewForConfig(env.Config)
	g.Expect(err).NotTo(HaveOccurred())

	g.Expect(c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "credo-system"}})).To(Succeed())
	for _, file := range []string{"service.yaml", "apiservice.yaml"} {
		g.Expect(env.ApplyFile(ctx, filepath.Join(controlplane.RepoRoot(), "config", "apiservice", file), "credo-test")).To(Succeed())
	}

	apiServerGauge := func() (*dto.Metric, bool, error) {
		raw, err := cs.Discovery().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
		if err != nil {
			return nil, false, err
		}
		families, err := parseExposition(raw)
		if err != nil {
			return nil, false, fmt.Errorf("parsing kube-apiserver's /metrics: %w", err)
		}
		m, ok := find(families, "aggregator_unavailable_apiservice", map[string]string{"name": accessAPIService})
		return m, ok, nil
	}
	g.Eventually(func() error {
		m, ok, err := apiServerGauge()
		if err != nil {
			return err
		}
		if !ok || m.GetGauge().GetValue() != 1 {
			return fmt.Errorf("no aggregator_unavailable_apiservice{name=%q} 1 yet", accessAPIService)
		}
		return nil
	}, time.Minute, time.Second).Should(Succeed())
	gauge, _, err := apiServerGauge()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(labelNames(gauge)).To(Equal(sortedLabels("aggregator_unavailable_apiservice")))

	const doomed = "doomed"
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: doomed}}
	g.Expect(c.Create(ctx, ns)).To(Succeed())
	g.Expect(c.Delete(ctx, ns)).To(Succeed())
	var failure *corev1.NamespaceCondition
	g.Eventually(func() *corev1.NamespaceCondition {
		g.Expect(c.Get(ctx, client.ObjectKey{Name: doomed}, ns)).To(Succeed())
		for _, cond := range ns.Status.Conditions {
			if cond.Type == corev1.NamespaceDeletionDiscoveryFailure && cond.Status == corev1.ConditionTrue {
				failure = &cond
			}
		}
		return failure
	}, time.Minute, time.Second).ShouldNot(BeNil(), "kube-controller-manager sets NamespaceDeletionDiscoveryFailure")
	g.Expect(ns.Status.Phase).To(Equal(corev1.NamespaceTerminating))
	g.Expect(failure.Message).To(ContainSubstring("access.credo.dev/v1alpha1"), "the condition names the failing group")
	t.Logf("namespace %s: %s=%s (%s): %s", doomed, failure.Type, failure.Status, failure.Reason, failure.Message)

	port := testenv.FreePort(t)
	proc, err := env.StartProcess("kube-state-metrics-namespaces", ksm, nil,
		"--kubeconfig="+env.Kubeconfig, "--resources=namespaces",
		"--host=127.0.0.1", "--port="+strconv.Itoa(port),
		"--telemetry-host=127.0.0.1", "--telemetry-port="+strconv.Itoa(testenv.FreePort(t)))
	g.Expect(err).NotTo(HaveOccurred()) // env.Stop stops it.
	want := map[string]string{"namespace": doomed, "condition": string(corev1.NamespaceDeletionDiscoveryFailure), "status": "true"}
	var condition *dto.Metric
	g.Eventually(func() error {
		if err := proc.FailIfExited(); err != nil {
			return StopTrying(fmt.Sprintf("kube-state-metrics exited (log %s)", proc.LogPath())).Wrap(err)
		}
		_, families, err := scrape(port)
		if err != nil {
			return err
		}
		var ok bool
		if condition, ok = find(families, "kube_namespace_status_condition", want); !ok {
			return fmt.Errorf("no kube_namespace_status_condition%v yet", want)
		}
		return nil
	}, 2*time.Minute, time.Second).Should(Succeed(), "kube-state-metrics log: %s", proc.LogPath())
	g.Expect(condition.GetGauge().GetValue()).To(Equal(1.0))
	g.Expect(labelNames(condition)).To(Equal(sortedLabels("kube_namespace_status_condition")))

	// The emergency lever: the namespace controller retries at least once a
	// minute, and the next retry deletes the namespace.
	apiService := &unstructured.Unstructured{}
	apiService.SetGroupVersionKind(apiregistrationv1.SchemeGroupVersion.WithKind("APIService"))
	apiService.SetName(accessAPIService)
	deleted := time.Now()
	g.Expect(c.Delete(ctx, apiService)).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(c.Get(ctx, client.ObjectKey{Name: doomed}, &corev1.Namespace{}))
	}, 90*time.Second, time.Second).Should(BeTrue(), "the namespace goes once the APIService is deleted")
	t.Logf("the namespace was deleted %s after the APIService", time.Since(deleted).Round(time.Second))
	g.Eventually(func() error {
		_, ok, err := apiServerGauge()
		if err != nil {
			return err
		}
		if ok {
			return fmt.Errorf("aggregator_unavailable_apiservice{name=%q} is still served", accessAPIService)
		}
		return nil
	}, time.Minute, time.Second).Should(Succeed())
}

func labelNames(m *dto.Metric) []string {
	return slices.Sorted(maps.Keys(labelsOf(m)))
}

func sortedLabels(metric string) []string {
	return slices.Sorted(slices.Values(platformMetrics[metric].labels))
}
