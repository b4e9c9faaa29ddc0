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

package controllers

import (
	"context"
	"fmt"
	"io"
	"os"
	"testing"
	"time"

	fluxcontroller "github.com/fluxcd/pkg/runtime/controller"
	"github.com/fluxcd/pkg/runtime/events"
	"github.com/fluxcd/pkg/runtime/metrics"
	"go.uber.org/zap/zapcore"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/credo-dev/credo/internal/enrollment"
	"github.com/credo-dev/credo/tests/controlplane"
	"github.com/credo-dev/credo/tests/testlog"
)

const testDomain = "internal.cozystack.io"

// controllerLogs holds every log line of the reconcilers, searched for secrets.
var controllerLogs testlog.Buffer

var (
	// env is the real control plane every test of this package runs on,
	// with the reconcilers running in-process against it.
	env       *controlplane.Environment
	k8sClient client.Client
	testKeys  = NewLabelKeys(testDomain)

	testAccountKeys       = NewAccountKeys("credentials.cozystack.io")
	testPlatformNamespace = "credo-system"

	// reconcileMetrics records the gotk_* metrics of every reconciler of
	// the suite, as the recorder each binary registers does.
	reconcileMetrics = metrics.NewRecorder()

	// testPendingTimeout is the WorkloadReconciler's PendingTimeout here:
	// short, so that the collection of pending workloads is seen.
	testPendingTimeout = 4 * time.Second
)

func TestMain(m *testing.M) {
	os.Exit(runSuite(m))
}

func runSuite(m *testing.M) int {
	// Every log line of the reconcilers, at debug level, is kept so that
	// tests can search it for secret material; CREDO_TEST_LOG also prints it.
	var sink io.Writer = &controllerLogs
	if os.Getenv("CREDO_TEST_LOG") != "" {
		sink = io.MultiWriter(&controllerLogs, os.Stderr)
	}
	ctrl.SetLogger(zap.New(zap.WriteTo(sink), zap.UseDevMode(true), zap.Level(zapcore.Level(-5))))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	startCtx, startCancel := context.WithTimeout(ctx, 5*time.Minute)
	var err error
	env, err = controlplane.Start(startCtx, controlplane.Options{})
	startCancel()
	if err != nil {
		fmt.Fprintf(os.Stderr, "starting the control plane: %v\n", err)
		return 1
	}
	defer env.Stop()
	k8sClient = env.Client

	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{
		Scheme:  env.Scheme,
		Metrics: metricsserver.Options{BindAddress: "0"},
		Cache:   cache.Options{DefaultTransform: cache.TransformStripManagedFields()},
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "creating manager: %v\n", err)
		return 1
	}
	recorder, err := events.NewRecorder(ctrl.Log, "", "trust-controller", events.WithManager(mgr))
	if err != nil {
		fmt.Fprintf(os.Stderr, "creating recorder: %v\n", err)
		return 1
	}
	r := &TrustAnchorReconciler{
		Client:              mgr.GetClient(),
		APIReader:           mgr.GetAPIReader(),
		EventRecorder:       recorder,
		Metrics:             fluxcontroller.NewMetrics(mgr, reconcileMetrics),
		Keys:                testKeys,
		ExpiryWarningWindow: 30 * 24 * time.Hour,
	}
	// Benchmarks run a manager of their own on namespaces labelled benchNamespaceLabel.
	notBench, err := labels.Parse("!" + benchNamespaceLabel)
	if err != nil {
		fmt.Fprintf(os.Stderr, "parsing selector: %v\n", err)
		return 1
	}
	r.NamespaceSelector = notBench
	if err := r.SetupWithManager(ctx, mgr, TrustAnchorReconcilerOptions{MaxConcurrentReconciles: 4}); err != nil {
		fmt.Fprintf(os.Stderr, "setting up TrustAnchor controller: %v\n", err)
		return 1
	}
	if err := (&TrustSourceReconciler{Client: mgr.GetClient(), Metrics: fluxcontroller.NewMetrics(mgr, reconcileMetrics)}).SetupWithManager(mgr); err != nil {
		fmt.Fprintf(os.Stderr, "setting up TrustSource controller: %v\n", err)
		return 1
	}
	if err := k8sClient.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: testPlatformNamespace}}); err != nil {
		fmt.Fprintf(os.Stderr, "creating platform namespace: %v\n", err)
		return 1
	}
	ar := &CredentialAccountReconciler{
		Client:            mgr.GetClient(),
		APIReader:         mgr.GetAPIReader(),
		EventRecorder:     recorder,
		Metrics:           fluxcontroller.NewMetrics(mgr, reconcileMetrics, CredentialFinalizer),
		AccountKeys:       testAccountKeys,
		PlatformNamespace: testPlatformNamespace,
	}
	if err := ar.SetupWithManager(ctx, mgr); err != nil {
		fmt.Fprintf(os.Stderr, "setting up CredentialAccount controller: %v\n", err)
		return 1
	}
	if err := (&AccountSourceReconciler{Client: mgr.GetClient(), Metrics: fluxcontroller.NewMetrics(mgr, reconcileMetrics)}).SetupWithManager(mgr); err != nil {
		fmt.Fprintf(os.Stderr, "setting up AccountSource controller: %v\n", err)
		return 1
	}
	if err := setupEnrollment(ctx, mgr, recorder); err != nil {
		fmt.Fprintf(os.Stderr, "setting up the enrollment controllers: %v\n", err)
		return 1
	}
	go func() {
		if err := mgr.Start(ctx); err != nil {
			fmt.Fprintf(os.Stderr, "manager: %v\n", err)
		}
	}()
	return m.Run()
}

// setupEnrollment registers the enrollment controllers as
// cmd/enrollment-controller does, with a short PendingTimeout.
func setupEnrollment(ctx context.Context, mgr ctrl.Manager, recorder events.Recorder) error {
	if err := IndexEnrollmentFields(ctx, mgr.GetFieldIndexer()); err != nil {
		return err
	}
	opts := EnrollmentReconcilerOptions{MaxConcurrentReconciles: 2}
	if err := (&EnrollmentPolicyReconciler{
		Client:        mgr.GetClient(),
		EventRecorder: recorder,
		Metrics:       fluxcontroller.NewMetrics(mgr, reconcileMetrics),
		Limits:        enrollment.DefaultLimits(),
	}).SetupWithManager(mgr, opts); err != nil {
		return fmt.Errorf("EnrollmentPolicy controller: %w", err)
	}
	if err := (&WorkloadReconciler{
		Client:         mgr.GetClient(),
		EventRecorder:  recorder,
		Metrics:        fluxcontroller.NewMetrics(mgr, reconcileMetrics),
		PendingTimeout: testPendingTimeout,
	}).SetupWithManager(mgr, opts); err != nil {
		return fmt.Errorf("Workload controller: %w", err)
	}
	return nil
}
