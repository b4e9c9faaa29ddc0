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

package migrate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/credo-dev/credo/internal/caller"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	credv1 "github.com/credo-dev/credo/api/credentials/v1alpha1"
	"github.com/credo-dev/credo/internal/account"
)

// Flags are the options of `kubectl credo migrate` besides the kubeconfig's.
//
//	f := migrate.Flags{}
//	f.BindFlags(fs)
type Flags struct {
	AllNamespaces     bool
	Release           string
	Apply             bool
	CredentialsSuffix string
	PlatformNamespace string
	AnnotationDomain  string
	ReportConfigMap   string
	Timeout           time.Duration
	Phase             string
}

// BindFlags binds f to fs with the defaults the controllers use.
func (f *Flags) BindFlags(fs *pflag.FlagSet) {
	fs.BoolVarP(&f.AllNamespaces, "all-namespaces", "A", false, "migrate the releases of every namespace")
	fs.StringVar(&f.Release, "release", "", "migrate only the HelmReleases of this name")
	fs.BoolVar(&f.Apply, "apply", false, "write; without it the command prints what it would do and writes nothing")
	fs.StringVar(&f.CredentialsSuffix, "credentials-suffix", DefaultCredentialsSuffix,
		"the chart-rendered Secret of a release is <release><suffix>; its keys are usernames, its values passwords")
	fs.StringVar(&f.PlatformNamespace, "platform-namespace", "credo-system",
		"where the credential-controller keeps platform passwords, and where the report ConfigMap is written")
	fs.StringVar(&f.AnnotationDomain, "annotation-domain", "credentials.cozystack.io",
		"the domain of the account Secrets' annotations, as the credential-controller's --annotation-domain")
	fs.StringVar(&f.ReportConfigMap, "report-configmap", DefaultReportConfigMap, "the ConfigMap listing skipped releases")
	fs.DurationVar(&f.Timeout, "timeout", 10*time.Minute, "how long the whole run may take")
	fs.StringVar(&f.Phase, "phase", string(PhaseAll),
		"all: migrate releases whose charts no longer render their credentials; prepare: before the charts switch, carry tenant accounts over and stamp keep on the Secrets running consumers read (spec.plaintext.secretRef), rotating nothing")
}

// ExitSkipped is the exit status of a run that leaves releases listed in
// the report (skipped by this run or an earlier one in another scope).
const ExitSkipped = 2

// SkippedError is returned when releases stay listed in the report, or
// would be by the same run with --apply.
type SkippedError struct {
	// Listed counts the releases listed in the report (or that would be).
	Listed int
	// Report is the report ConfigMap, namespace/name.
	Report string
	// DryRun: nothing was written, the report included.
	DryRun bool
}

func (e *SkippedError) Error() string {
	if e.DryRun {
		return fmt.Sprintf("dry run: %d release(s) would be skipped and listed in %s; nothing was written", e.Listed, e.reportName())
	}
	return fmt.Sprintf("%d release(s) skipped and listed in %s", e.Listed, e.reportName())
}

func (e *SkippedError) reportName() string {
	if e.Report == "" {
		return "the report"
	}
	return e.Report
}

// ExitCode is ExitSkipped.
func (e *SkippedError) ExitCode() int { return ExitSkipped }

// Command is `kubectl credo migrate`: it parses args (the kubeconfig flags
// kubectl takes, and Flags), runs, and prints the result on stdout. A run
// that leaves releases listed returns a *SkippedError.
func Command(args []string, stdout io.Writer) error {
	fs := pflag.NewFlagSet("migrate", pflag.ContinueOnError)
	kube := genericclioptions.NewConfigFlags(true)
	kube.AddFlags(fs)
	var f Flags
	f.BindFlags(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return errors.New("usage: kubectl credo migrate [-n namespace | -A] [--release name] [--phase all|prepare] [--apply]")
	}
	if p := Phase(f.Phase); p != PhaseAll && p != PhasePrepare {
		return fmt.Errorf("--phase %q: must be %s or %s", f.Phase, PhaseAll, PhasePrepare)
	}
	cfg, err := kube.ToRESTConfig()
	if err != nil {
		return fmt.Errorf("loading kubeconfig: %w", err)
	}
	ns, _, err := kube.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return fmt.Errorf("resolving the namespace: %w", err)
	}
	if f.AllNamespaces {
		ns = ""
	}
	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(credv1.AddToScheme(scheme))
	utilruntime.Must(helmv2.AddToScheme(scheme))
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), f.Timeout)
	defer cancel()
	o := Options{
		Client: c, Keys: account.NewKeys(f.AnnotationDomain), PlatformNamespace: f.PlatformNamespace,
		CredentialsSuffix: f.CredentialsSuffix, ReportConfigMap: f.ReportConfigMap,
		Namespace: ns, Release: f.Release, Apply: f.Apply, Phase: Phase(f.Phase), By: whoAmI(ctx, c),
	}
	res, err := Run(ctx, o)
	if err != nil {
		return err
	}
	report := f.PlatformNamespace + "/" + o.ReportConfigMap
	if err := Print(stdout, res, report); err != nil {
		return err
	}
	if len(res.Listed) > 0 {
		return &SkippedError{Listed: len(res.Listed), Report: report, DryRun: !res.Applied}
	}
	return nil
}

// whoAmI is the caller as kube-apiserver authenticates it (a
// SelfSubjectReview), which the account history records; DefaultBy when the
// review is not served or refused.
func whoAmI(ctx context.Context, c client.Client) string {
	user, err := caller.Username(ctx, c)
	if err != nil {
		return DefaultBy
	}
	return user
}
