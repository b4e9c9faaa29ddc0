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
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	credv1 "github.com/credo-dev/credo/api/credentials/v1alpha1"
	enrollv1 "github.com/credo-dev/credo/api/enrollment/v1alpha1"
	trustv1 "github.com/credo-dev/credo/api/trust/v1alpha1"
	"github.com/credo-dev/credo/controllers/trust"
	"github.com/credo-dev/credo/tests/controlplane"
	"github.com/credo-dev/credo/tests/testenv"
	"github.com/credo-dev/credo/tests/testpki"
)

// ksmBinary is the kube-state-metrics binary `make test-monitoring` builds
// with hack/build-kube-state-metrics.sh and passes as CREDO_KSM.
func ksmBinary(t *testing.T) string {
	t.Helper()
	path := os.Getenv("CREDO_KSM")
	if path == "" {
		t.Fatal("CREDO_KSM is not set: run `make test-monitoring`, which builds kube-state-metrics and sets it")
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("CREDO_KSM=%s: %v", path, err)
	}
	return path
}

// The acceptance test of the kube-state-metrics configuration: kube-state-metrics,
// with only the rights of config/monitoring/kube-state-metrics-rbac.yaml, reads
// credo's objects on the real API server and serves credo_<kind>_resource_info
// with the Ready condition of a Ready and a not-Ready TrustAnchor (made so by the
// real trust-controller reconciler), the suspension of a suspended account, a
// series for every credo kind, and the timestamps the alert rules use.
func TestKubeStateMetricsServesReadinessAndSuspendOfEveryCredoKind(t *testing.T) {
	g := NewWithT(t)
	ksm := ksmBinary(t)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	env := testenv.ControlPlane(t, controlplane.Options{NoControllerManager: true})
	startTrustController(ctx, t, env)

	ns := "tenant-ksm"
	c := env.Client
	g.Expect(c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
	good, key := testpki.CA(t, "good-ca")
	bad, _ := testpki.CA(t, "bad-ca")
	keys := trustv1.NewContractKeys(labelDomain)
	for name, data := range map[string][]byte{"good": good, "bad": append(append([]byte{}, bad...), key...)} {
		g.Expect(c.Create(ctx, testenv.HelmReleaseObject(ns, name, name, nil))).To(Succeed())
		g.Expect(c.Create(ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: name + "-ca", Namespace: ns,
				Labels: map[string]string{keys.PublishCACert: "true", keys.Release: name}},
			Data: map[string][]byte{"ca.crt": data},
		})).To(Succeed())
	}
	secretHash := createOtherKinds(ctx, t, c, ns)

	kubeconfig := kubeconfigWithShippedRole(ctx, t, env)
	port := testenv.FreePort(t)
	proc, err := env.StartProcess("kube-state-metrics", ksm, nil,
		"--kubeconfig="+kubeconfig,
		"--custom-resource-state-config-file="+filepath.Join(controlplane.RepoRoot(), "config", "monitoring", "kube-state-metrics.yaml"),
		"--custom-resource-state-only=true",
		"--host=127.0.0.1", "--port="+strconv.Itoa(port),
		"--telemetry-host=127.0.0.1", "--telemetry-port="+strconv.Itoa(testenv.FreePort(t)))
	g.Expect(err).NotTo(HaveOccurred()) // env.Stop stops it.

	ready := map[string]string{"customresource_kind": "TrustAnchor", "name": "good", "exported_namespace": ns}
	notReady := map[string]string{"customresource_kind": "TrustAnchor", "name": "bad", "exported_namespace": ns}
	var body []byte
	var families map[string]*dto.MetricFamily
	g.Eventually(func() error {
		if err := proc.FailIfExited(); err != nil {
			return StopTrying(fmt.Sprintf("kube-state-metrics exited (log %s)", proc.LogPath())).Wrap(err)
		}
		body, families, err = scrape(port)
		if err != nil {
			return err
		}
		for _, want := range []map[string]string{
			with(ready, "ready", "True", "reason", "Succeeded"),
			with(notReady, "ready", "False", "reason", trustv1.PrivateKeyDetectedReason),
		} {
			if _, ok := find(families, "credo_trustanchor_resource_info", want); !ok {
				return fmt.Errorf("no credo_trustanchor_resource_info%v yet", want)
			}
		}
		return nil
	}, 2*time.Minute, time.Second).Should(Succeed(), "kube-state-metrics log: %s", proc.LogPath())

	m, _ := find(families, "credo_trustanchor_resource_info", with(ready, "ready", "True"))
	g.Expect(m.GetGauge().GetValue()).To(Equal(1.0))
	g.Expect(labelsOf(m)).To(HaveKeyWithValue("release", "good"))
	g.Expect(labelsOf(m)).To(HaveKeyWithValue("source_name", "good-ca"))
	g.Expect(labelsOf(m)).NotTo(HaveKey("suspended"), "suspended is served only when spec.suspend is set")

	var ta trustv1.TrustAnchor
	g.Expect(c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "good"}, &ta)).To(Succeed())
	expiry, ok := find(families, "credo_trustanchor_expiry_timestamp_seconds", ready)
	g.Expect(ok).To(BeTrue(), "the Ready anchor's expiry is served")
	g.Expect(expiry.GetGauge().GetValue()).To(Equal(float64(ta.Status.NotAfter.Unix())))

	_, ok = find(families, "credo_credentialaccount_resource_info",
		map[string]string{"customresource_kind": "CredentialAccount", "name": "paused", "suspended": "true"})
	g.Expect(ok).To(BeTrue(), "a suspended CredentialAccount is served with suspended=true")

	for _, kind := range []string{"TrustAnchor", "TrustSource", "CredentialAccount", "AccountSource", "EnrollmentPolicy", "Workload", "JoinToken"} {
		name := "credo_" + strings.ToLower(kind) + "_resource_info"
		_, ok := find(families, name, map[string]string{"customresource_kind": kind})
		g.Expect(ok).To(BeTrue(), "no %s", name)
	}
	_, ok = find(families, "credo_enrollmentpolicy_resource_info",
		map[string]string{"name": "vms", "exported_namespace": ns, "ready": "True", "reason": "Succeeded"})
	g.Expect(ok).To(BeTrue(), "the EnrollmentPolicy's Ready is served")
	_, ok = find(families, "credo_workload_resource_info",
		map[string]string{"exported_namespace": ns, "ready": "False", "reason": enrollv1.PendingReason, "policy": "vms"})
	g.Expect(ok).To(BeTrue(), "the Workload's Ready is served")
	uses, ok := find(families, "credo_jointoken_uses", map[string]string{"name": "a1b2c3d4e5f6", "policy": "vms"})
	g.Expect(ok).To(BeTrue())
	g.Expect(uses.GetGauge().GetValue()).To(Equal(3.0))
	_, ok = find(families, "credo_jointoken_expiry_timestamp_seconds", map[string]string{"name": "a1b2c3d4e5f6"})
	g.Expect(ok).To(BeTrue())

	for _, secret := range [][]byte{key, []byte("PRIVATE KEY"), []byte(secretHash)} {
		g.Expect(bytes.Contains(body, secret)).To(BeFalse(), "kube-state-metrics serves secret material")
	}
}

const labelDomain = "internal.cozystack.io"

// startTrustController runs the trust-controller's reconcilers in-process,
// as cmd/trust-controller does, so that the TrustAnchors' conditions are
// the controller's own.
func startTrustController(ctx context.Context, t *testing.T, env *controlplane.Environment) {
	t.Helper()
	g := NewWithT(t)
	s, err := testenv.NewSetup(env.Config, env.Scheme, trust.ControllerName, trust.ConfigureCache)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(trust.Setup(ctx, s, trust.Options{LabelDomain: labelDomain, ExpiryWarningWindow: 30 * 24 * time.Hour, Concurrent: 2})).To(Succeed())
	mgr := s.Manager
	go func() { _ = mgr.Start(ctx) }()
}

// createOtherKinds creates one object of every other credo kind, with the
// status its controller would write, and returns the join token's secret hash.
func createOtherKinds(ctx context.Context, t *testing.T, c client.Client, ns string) string {
	t.Helper()
	g := NewWithT(t)
	g.Expect(c.Create(ctx, &trustv1.TrustSource{
		ObjectMeta: metav1.ObjectMeta{Name: "ksm-rule"},
		Spec:       trustv1.TrustSourceSpec{Chart: "nothing", SecretName: "{release}-ca"},
	})).To(Succeed())
	g.Expect(c.Create(ctx, &credv1.AccountSource{
		ObjectMeta: metav1.ObjectMeta{Name: "ksm-accounts"},
		Spec: credv1.AccountSourceSpec{Chart: "nothing", Sources: []credv1.AccountSourceEntry{{
			Kind: credv1.SourceStatic, Static: &credv1.StaticSource{Username: "app"},
			Template: credv1.AccountTemplate{Format: credv1.Format{Name: "scram-sha-256"}},
		}}},
	})).To(Succeed())
	g.Expect(c.Create(ctx, &credv1.CredentialAccount{
		ObjectMeta: metav1.ObjectMeta{Name: "paused", Namespace: ns},
		Spec: credv1.CredentialAccountSpec{Release: "good", Username: "app",
			Format: credv1.Format{Name: "scram-sha-256"}, Suspend: true},
	})).To(Succeed())

	policy := &enrollv1.EnrollmentPolicy{ObjectMeta: metav1.ObjectMeta{Name: "vms", Namespace: ns}}
	g.Expect(c.Create(ctx, policy)).To(Succeed())
	policy.Status.Conditions = []metav1.Condition{readyCondition(metav1.ConditionTrue, "Succeeded")}
	g.Expect(c.Status().Update(ctx, policy)).To(Succeed())

	hash := "sha256:" + fmt.Sprintf("%064x", 0xc0ffee)
	jt := &enrollv1.JoinToken{
		ObjectMeta: metav1.ObjectMeta{Name: "a1b2c3d4e5f6", Namespace: ns},
		Spec: enrollv1.JoinTokenSpec{Policy: "vms", SecretHash: hash,
			ExpiresAt: metav1.NewTime(time.Now().Add(time.Hour))},
	}
	g.Expect(c.Create(ctx, jt)).To(Succeed())
	jt.Status.Uses = 3
	g.Expect(c.Status().Update(ctx, jt)).To(Succeed())

	wl := &enrollv1.Workload{
		ObjectMeta: metav1.ObjectMeta{Name: "0b7f5d0e-3c1a-4e7b-9a55-2f6d1c8e4a90", Namespace: ns},
		Spec:       enrollv1.WorkloadSpec{Policy: "vms", Token: jt.Name},
	}
	g.Expect(c.Create(ctx, wl)).To(Succeed())
	wl.Status.Conditions = []metav1.Condition{readyCondition(metav1.ConditionFalse, enrollv1.PendingReason)}
	g.Expect(c.Status().Update(ctx, wl)).To(Succeed())
	return hash
}

func readyCondition(status metav1.ConditionStatus, reason string) metav1.Condition {
	return metav1.Condition{Type: "Ready", Status: status, Reason: reason, Message: reason, LastTransitionTime: metav1.Now()}
}

// kubeconfigWithShippedRole binds config/monitoring's ClusterRole to a new
// user and returns the user's kubeconfig: kube-state-metrics runs with
// nothing more than what the shipped role grants.
func kubeconfigWithShippedRole(ctx context.Context, t *testing.T, env *controlplane.Environment) string {
	t.Helper()
	g := NewWithT(t)
	raw, err := os.ReadFile(filepath.Join(controlplane.RepoRoot(), "config", "monitoring", "kube-state-metrics-rbac.yaml"))
	g.Expect(err).NotTo(HaveOccurred())
	var role rbacv1.ClusterRole
	g.Expect(yaml.UnmarshalStrict(raw, &role)).To(Succeed())
	g.Expect(env.Client.Create(ctx, &role)).To(Succeed())
	const user = "kube-state-metrics"
	g.Expect(env.Client.Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: role.Name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}},
	})).To(Succeed())
	path, err := env.WriteKubeconfig(user, nil, "kube-state-metrics.kubeconfig")
	g.Expect(err).NotTo(HaveOccurred())
	return path
}

var infoType = regexp.MustCompile(`(?m)^# TYPE (\S+) info$`)

// scrape reads kube-state-metrics' /metrics and parses it as Prometheus
// does: a malformed exposition fails here.
func scrape(port int) ([]byte, map[string]*dto.MetricFamily, error) {
	c := &http.Client{Timeout: 10 * time.Second}
	resp, err := c.Get(fmt.Sprintf("http://127.0.0.1:%d/metrics", port))
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, nil, fmt.Errorf("GET /metrics: %s", resp.Status)
	}
	families, err := parseExposition(body)
	if err != nil {
		return body, nil, fmt.Errorf("parsing /metrics: %w", err)
	}
	return body, families, nil
}

// parseExposition parses the text exposition strictly: every family has one
// HELP and TYPE line and its series together. kube-state-metrics types Info
// metrics "info", an OpenMetrics type Prometheus' own parser accepts and
// expfmt does not: they are read as the gauges of value 1 they are.
func parseExposition(body []byte) (map[string]*dto.MetricFamily, error) {
	text := infoType.ReplaceAll(body, []byte("# TYPE $1 gauge"))
	parser := expfmt.NewTextParser(model.UTF8Validation)
	return parser.TextToMetricFamilies(bytes.NewReader(text))
}

// find returns the first series of the family whose labels include want.
func find(families map[string]*dto.MetricFamily, name string, want map[string]string) (*dto.Metric, bool) {
	mf, ok := families[name]
	if !ok {
		return nil, false
	}
	for _, m := range mf.GetMetric() {
		got := labelsOf(m)
		match := true
		for k, v := range want {
			if got[k] != v {
				match = false
				break
			}
		}
		if match {
			return m, true
		}
	}
	return nil, false
}

// with returns base plus the key/value pairs kv.
func with(base map[string]string, kv ...string) map[string]string {
	out := map[string]string{}
	for k, v := range base {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = kv[i+1]
	}
	return out
}
