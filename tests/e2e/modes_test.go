//go:build e2e

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

package e2e

import (
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/credo-dev/credo/tests/devenv"
)

// The suite runs in one of two modes; a test that needs one runs only in
// it (on the node here and on kind for the cluster mode), the others in
// both:
//
//   - local (make test-e2e): credo's controllers, agents and the Flux
//     controllers are processes beside a control plane started here; every
//     test runs except clusterOnlyTests.
//   - cluster (E2E_KUBECONFIG, hack/ci/e2e.sh): credo is installed from
//     config/ in pods, on the node tests/node runs here or on kind; every
//     test runs except localOnlyTests.
//
// TestMain excludes the other mode's tests itself (it adds them to
// -test.skip and prints them), so no script keeps a list that can drift;
// needLocal and needCluster fail a test that needs its mode but is not in
// the list, in the mode that runs it.

// localOnlyTests need the local environment: agents and restarts of
// local processes, the Flux controllers (helm-controller deploys the test
// charts), metrics of local processes, the docs' commands.
var localOnlyTests = []string{
	"TestDocs",
	"TestHeadlessPipelineGuide",
	"TestFluxEventsShowReleaseWarnings",
	"TestNotificationControllerDeliversReleaseWarnings",
	"TestMintReachesTheRunningRelease",
	"TestMintIsReportedAppliedOnceTheReleaseCarriesIt",
	"TestSuspendedReleaseIsReportedAndNotUpgraded",
	"TestAgentsEnrollRenewAndSurviveARestartAndACARotation",
	"TestExpiredAgentRenewsWithinTheGraceAndReenrollsBeyondIt",
	"TestAgentRefusalsAreClear",
	"TestEnrollmentCAIsPublishedAsATrustAnchor",
	"TestDeniedAgentStopsAndRenewsAgainOnceLifted",
	"TestOneWorkloadAuthorizesAnotherByLabelAndStopsWhenItIsRemoved",
	"TestClonedAgentsAreDetectedAndHandledAsThePolicySays",
	"TestLostRenewalAnswerIsAnsweredWithTheSameCertificate",
	"TestRelabelIsReflectedOnTheNextRenewalWithoutReenrollment",
	"TestSpiffeFormEnrollsRenews",
	"TestAnAgentRenewsIntoTheNewIdentityFormWithoutAToken",
	"TestEveryControllerServesReconcileDurationsAndCredoCounters",
	"TestAFluxEditTenantCannotSetThePlatformRootPassword",
	"TestShadowedPlatformValuesAreRestoredAndReported",
	"TestValuesShadowedInGitAreNeverReportedApplied",
	"TestAForgedReleaseStatusNeverMakesAPlatformAccountApplied",
	"TestEveryWriteCarriesItsBinarysOneName",
	"TestAPlatformShapedReleaseBesideThePlatformsControllers",
	"TestAccountSecretExistsBeforeHelmControllerInstalls",
	"TestAccountAndReleaseTogether",
	"TestDeletedAccountBeforeReleaseLeavesNoSecret",
}

// clusterOnlyTests need credo installed as users install it: Deployments,
// pods, Services.
var clusterOnlyTests = []string{
	"TestAKilledControllerPodIsReplacedAndWorkResumes",
	"TestMintsDuringARollout",
	"TestMintsWhileACredentialControllerReplicaIsKilled",
	"TestARotationLandsWhenTheTrustLeaderIsKilled",
	"TestAgentsRenewWhileAnEnrollmentReplicaIsKilled",
	"TestANamespaceDeletedWhileTheAccessAPIIsDownGoesOnceItIsBack",
	"TestEvictionsLeaveEveryControllerAReplica",
}

// excludeOtherMode adds the tests the current mode cannot run to
// -test.skip and says which. Call it after flag.Parse.
func excludeOtherMode(local bool) error {
	names, mode := localOnlyTests, "local"
	if local {
		names, mode = clusterOnlyTests, "cluster"
	}
	re := "^(" + strings.Join(names, "|") + ")$"
	if cur := flag.Lookup("test.skip").Value.String(); cur != "" {
		re = cur + "|" + re
	}
	if err := flag.Set("test.skip", re); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "e2e: not run in this mode (%s-only, run by the other): %s\n", mode, strings.Join(names, " "))
	return nil
}

// needLocal returns the local environment, for a test in localOnlyTests.
func needLocal(t testing.TB) *devenv.Environment {
	t.Helper()
	if !slices.Contains(localOnlyTests, rootName(t)) {
		t.Fatalf("%s needs the local environment but is not in localOnlyTests: add it there", rootName(t))
	}
	if dev == nil {
		t.Fatal("needs the local environment, not E2E_KUBECONFIG")
	}
	return dev
}

// needCluster fails unless the suite runs against an installed credo
// (E2E_KUBECONFIG), for a test in clusterOnlyTests.
func needCluster(t testing.TB) {
	t.Helper()
	if !slices.Contains(clusterOnlyTests, rootName(t)) {
		t.Fatalf("%s needs an installed credo but is not in clusterOnlyTests: add it there", rootName(t))
	}
	if dev != nil {
		t.Fatal("needs credo installed in a cluster (E2E_KUBECONFIG), not the local environment")
	}
}

// rootName is the name of the top-level test t belongs to.
func rootName(t testing.TB) string {
	name, _, _ := strings.Cut(t.Name(), "/")
	return name
}
