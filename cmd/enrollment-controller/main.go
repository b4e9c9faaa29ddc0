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

// Command enrollment-controller enrolls workloads: it keeps the status of
// EnrollmentPolicies and Workloads (leader-elected), and on every replica
// serves the enrollment HTTPS listener agents call and keeps the embedded CA
// fresh. Join tokens are minted through the access API (credential-controller).
package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"os"

	"github.com/spf13/pflag"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	controllers "github.com/credo-dev/credo/controllers/enrollment"
	"github.com/credo-dev/credo/internal/ca"
	"github.com/credo-dev/credo/internal/ca/certmanager"
	"github.com/credo-dev/credo/internal/ca/embedded"
	"github.com/credo-dev/credo/internal/enrollment"
	credomanager "github.com/credo-dev/credo/internal/manager"
)

// listenerOptions configure the enrollment HTTPS listener.
type listenerOptions struct {
	addr     string
	hosts    []string
	certFile string
	keyFile  string
}

func main() {
	var (
		opts       credomanager.Options
		listen     listenerOptions
		namespace  string
		enrollOpts controllers.Options
	)
	srvOpts := enrollment.NewOptions()
	caOpts := embedded.NewOptions()
	cmOpts := certmanager.NewOptions()
	var authorityKind string
	opts.BindFlags(pflag.CommandLine)
	enrollOpts.BindFlags(pflag.CommandLine)
	caOpts.BindFlags(pflag.CommandLine)
	cmOpts.BindFlags(pflag.CommandLine)
	srvOpts.BindFlags(pflag.CommandLine)
	pflag.StringVar(&authorityKind, "certificate-authority", authorityEmbedded,
		"Who signs workload certificates: embedded (a CA kept in a Secret of the controller's namespace) or cert-manager (a CertificateRequest per certificate; needs --cert-manager-* and --enrollment-tls-cert-file).")
	pflag.StringVar(&namespace, "namespace", os.Getenv("RUNTIME_NAMESPACE"),
		"The controller's namespace, where the embedded CA Secret is kept (default $RUNTIME_NAMESPACE).")
	pflag.StringVar(&listen.addr, "enrollment-addr", ":9443", "The address the enrollment HTTPS listener binds to.")
	pflag.StringSliceVar(&listen.hosts, "enrollment-hosts", []string{"localhost", "127.0.0.1"},
		"The DNS names and IP addresses agents reach the enrollment listener by: the SANs of its serving certificate, issued by the embedded CA.")
	pflag.StringVar(&listen.certFile, "enrollment-tls-cert-file", "",
		"A serving certificate for the enrollment listener (e.g. from cert-manager); default: one issued by the embedded CA.")
	pflag.StringVar(&listen.keyFile, "enrollment-tls-key-file", "", "The key of --enrollment-tls-cert-file.")
	pflag.Parse()
	caOpts.Namespace = namespace
	if (listen.certFile == "") != (listen.keyFile == "") {
		fail(errors.New("--enrollment-tls-cert-file and --enrollment-tls-key-file go together"), "bad flags")
	}
	if err := srvOpts.Validate(); err != nil {
		fail(err, "bad flags")
	}
	if err := checkOverlap(authorityKind, caOpts, srvOpts.Limits); err != nil {
		fail(err, "bad flags")
	}

	enrollOpts.Limits = srvOpts.Limits
	setup, err := credomanager.New(controllers.ControllerName, controllers.NewScheme(), opts, controllers.ConfigureCache)
	if err != nil {
		fail(err, "unable to set up manager")
	}
	mgr := setup.Manager
	ctx := ctrl.SetupSignalHandler()
	if err := controllers.Setup(ctx, setup, enrollOpts); err != nil {
		fail(err, "unable to set up the controllers")
	}

	authority, getCert, err := certificateAuthority(setup, authorityKind, caOpts, cmOpts, listen)
	if err != nil {
		fail(err, "unable to set up the certificate authority")
	}
	srvOpts.Log = ctrl.Log.WithName("enrollment-server")
	srv, err := controllers.NewServer(setup, authority, srvOpts)
	if err != nil {
		fail(err, "unable to set up the enrollment server")
	}
	if err := mgr.Add(manager.RunnableFunc(func(ctx context.Context) error {
		// Agents are answered only once the caches hold tokens and workloads.
		if !mgr.GetCache().WaitForCacheSync(ctx) {
			return errors.New("caches did not sync")
		}
		ctrl.Log.Info("starting the enrollment listener", "address", listen.addr)
		return srv.Serve(ctx, listen.addr, enrollment.TLSConfig(getCert))
	})); err != nil {
		fail(err, "unable to add the enrollment listener")
	}

	ctrl.Log.Info("starting manager")
	if err := mgr.Start(ctx); err != nil {
		fail(err, "manager stopped with an error")
	}
}

// checkOverlap refuses an embedded CA whose overlap after a rotation is
// shorter than the longest certificate plus the longest renewal grace the
// limits allow: a certificate issued just before a rotation must still
// authenticate its renewal until its grace ends.
func checkOverlap(kind string, caOpts embedded.Options, limits enrollment.Limits) error {
	if kind != authorityEmbedded {
		return nil
	}
	if need := limits.MaxCertificateTTL + limits.MaxRenewalGrace; caOpts.Overlap < need {
		return fmt.Errorf("--enrollment-ca-overlap %s is shorter than --%s plus --%s (%s): raise it or lower them",
			caOpts.Overlap, enrollment.FlagMaxCertificateTTL, enrollment.FlagMaxRenewalGrace, need)
	}
	return nil
}

const (
	authorityEmbedded    = "embedded"
	authorityCertManager = "cert-manager"
)

type getCertificateFunc = func(*tls.ClientHelloInfo) (*tls.Certificate, error)

// certificateAuthority builds the signer the enrollment server talks to
// through ca.CertificateAuthority, and the listener's serving certificate:
// the files given (reloaded when they change) or, with the embedded CA, one
// it issues and renews. The embedded CA publishes its trust anchor; with
// cert-manager, the anchor an embedded CA published before is withdrawn.
func certificateAuthority(setup *credomanager.Setup, kind string, caOpts embedded.Options, cmOpts certmanager.Options,
	listen listenerOptions) (ca.CertificateAuthority, getCertificateFunc, error) {
	mgr := setup.Manager
	var fromFiles getCertificateFunc
	if listen.certFile != "" {
		var err error
		if fromFiles, err = enrollment.FileCertificate(listen.certFile, listen.keyFile); err != nil {
			return nil, nil, err
		}
	}
	switch kind {
	case authorityEmbedded:
		authority, err := controllers.NewEmbeddedCA(setup, caOpts)
		if err != nil {
			return nil, nil, err
		}
		if fromFiles == nil {
			fromFiles = authority.GetCertificate(listen.hosts)
		}
		return authority, fromFiles, nil
	case authorityCertManager:
		if fromFiles == nil {
			return nil, nil, errors.New("--certificate-authority=cert-manager needs --enrollment-tls-cert-file and --enrollment-tls-key-file (a cert-manager Certificate mounted into the pod)")
		}
		if err := controllers.WithdrawEmbeddedCA(setup, caOpts); err != nil {
			return nil, nil, err
		}
		watching, err := client.NewWithWatch(mgr.GetConfig(), client.Options{Scheme: mgr.GetScheme()})
		if err != nil {
			return nil, nil, err
		}
		authority, err := certmanager.New(cmOpts, watching)
		if err != nil {
			return nil, nil, err
		}
		return authority, fromFiles, nil
	default:
		return nil, nil, fmt.Errorf("--certificate-authority %q: want %s or %s", kind, authorityEmbedded, authorityCertManager)
	}
}

func fail(err error, msg string) { credomanager.Exit(controllers.ControllerName, err, msg) }
