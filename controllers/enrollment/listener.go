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

package enrollment

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"os"

	"github.com/spf13/pflag"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/credo-dev/credo/internal/ca"
	"github.com/credo-dev/credo/internal/ca/certmanager"
	"github.com/credo-dev/credo/internal/ca/embedded"
	"github.com/credo-dev/credo/internal/ca/pkcs11"
	"github.com/credo-dev/credo/internal/enrollment"
	"github.com/credo-dev/credo/internal/manager"
)

// Who signs workload certificates (--certificate-authority).
const (
	AuthorityEmbedded    = "embedded"
	AuthorityCertManager = "cert-manager"
)

// ListenerOptions configure the enrollment HTTPS listener agents call, the
// server behind it and the CA it signs with.
type ListenerOptions struct {
	// Addr is the address the listener binds to.
	Addr string
	// Hosts are the names and addresses of the embedded CA's serving
	// certificate for the listener.
	Hosts []string
	// CertFile and KeyFile are a serving certificate of one's own,
	// reloaded when they change.
	CertFile, KeyFile string
	// Authority is AuthorityEmbedded or AuthorityCertManager.
	Authority string
	// Server are the enrollment server's options, Limits among them.
	Server enrollment.Options
	// CA are the embedded CA's options; CertManager cert-manager's.
	CA          embedded.Options
	CertManager certmanager.Options
	// PKCS11 names the token the embedded CA keeps its keys in, if any.
	PKCS11 pkcs11.Options
}

// NewListenerOptions returns ListenerOptions with their defaults.
func NewListenerOptions() *ListenerOptions {
	return &ListenerOptions{
		Addr: ":9443", Hosts: []string{"localhost", "127.0.0.1"}, Authority: AuthorityEmbedded,
		Server: enrollment.NewOptions(), CA: embedded.NewOptions(), CertManager: certmanager.NewOptions(),
	}
}

// BindFlags registers the options on fs.
func (o *ListenerOptions) BindFlags(fs *pflag.FlagSet) {
	o.CA.BindFlags(fs)
	o.PKCS11.BindFlags(fs)
	o.CertManager.BindFlags(fs)
	o.Server.BindFlags(fs)
	fs.StringVar(&o.Authority, "certificate-authority", o.Authority,
		"Who signs workload certificates: embedded (a CA kept in a Secret of the controller's namespace) or cert-manager (a CertificateRequest per certificate; needs --cert-manager-* and --enrollment-tls-cert-file).")
	fs.StringVar(&o.CA.Namespace, "namespace", os.Getenv("RUNTIME_NAMESPACE"),
		"The controller's namespace, where the embedded CA Secret is kept (default $RUNTIME_NAMESPACE).")
	fs.StringVar(&o.Addr, "enrollment-addr", o.Addr, "The address the enrollment HTTPS listener binds to.")
	fs.StringSliceVar(&o.Hosts, "enrollment-hosts", o.Hosts,
		"The DNS names and IP addresses agents reach the enrollment listener by: the SANs of its serving certificate, issued by the embedded CA.")
	fs.StringVar(&o.CertFile, "enrollment-tls-cert-file", "",
		"A serving certificate for the enrollment listener (e.g. from cert-manager); default: one issued by the embedded CA.")
	fs.StringVar(&o.KeyFile, "enrollment-tls-key-file", "", "The key of --enrollment-tls-cert-file.")
}

// Validate refuses options that cannot work together.
func (o *ListenerOptions) Validate() error {
	if (o.CertFile == "") != (o.KeyFile == "") {
		return errors.New("--enrollment-tls-cert-file and --enrollment-tls-key-file go together")
	}
	if err := o.Server.Validate(); err != nil {
		return err
	}
	if err := checkKeyStore(o.Authority, o.PKCS11); err != nil {
		return err
	}
	return checkOverlap(o.Authority, o.CA, o.Server.Limits)
}

// checkOverlap refuses an embedded CA whose overlap after a rotation is
// shorter than the longest certificate plus the longest renewal grace the
// limits allow: a certificate issued just before a rotation must still
// authenticate its renewal until its grace ends.
func checkOverlap(kind string, caOpts embedded.Options, limits enrollment.Limits) error {
	if kind != AuthorityEmbedded {
		return nil
	}
	if need := limits.MaxCertificateTTL + limits.MaxRenewalGrace; caOpts.Overlap < need {
		return fmt.Errorf("--enrollment-ca-overlap %s is shorter than --%s plus --%s (%s): raise it or lower them",
			caOpts.Overlap, enrollment.FlagMaxCertificateTTL, enrollment.FlagMaxRenewalGrace, need)
	}
	return nil
}

// AddListener adds the enrollment listener to the manager of s, on every
// replica, with the CA o names: agents are answered only once the caches
// hold tokens and workloads.
func AddListener(s *manager.Setup, o *ListenerOptions) error {
	authority, getCert, err := certificateAuthority(s, o)
	if err != nil {
		return fmt.Errorf("setting up the certificate authority: %w", err)
	}
	srvOpts := o.Server
	srvOpts.Log = ctrl.Log.WithName("enrollment-server")
	srv, err := NewServer(s, authority, srvOpts)
	if err != nil {
		return fmt.Errorf("setting up the enrollment server: %w", err)
	}
	mgr := s.Manager
	return mgr.Add(manager.EveryReplica(func(ctx context.Context) error {
		if !mgr.GetCache().WaitForCacheSync(ctx) {
			return errors.New("caches did not sync")
		}
		ctrl.Log.Info("starting the enrollment listener", "address", o.Addr)
		return srv.Serve(ctx, o.Addr, enrollment.TLSConfig(getCert))
	}))
}

type getCertificateFunc = func(*tls.ClientHelloInfo) (*tls.Certificate, error)

// certificateAuthority builds the signer the enrollment server talks to
// through ca.CertificateAuthority, and the listener's serving certificate:
// the files given (reloaded when they change) or, with the embedded CA, one
// it issues and renews. Either CA publishes its trust anchor.
func certificateAuthority(s *manager.Setup, o *ListenerOptions) (ca.CertificateAuthority, getCertificateFunc, error) {
	var fromFiles getCertificateFunc
	if o.CertFile != "" {
		var err error
		if fromFiles, err = enrollment.FileCertificate(o.CertFile, o.KeyFile); err != nil {
			return nil, nil, err
		}
	}
	switch o.Authority {
	case AuthorityEmbedded:
		caOpts, err := withKeyStore(o.CA, o.PKCS11)
		if err != nil {
			return nil, nil, err
		}
		authority, err := NewEmbeddedCA(s, caOpts)
		if err != nil {
			return nil, nil, err
		}
		if fromFiles == nil {
			fromFiles = authority.GetCertificate(o.Hosts)
		}
		return authority, fromFiles, nil
	case AuthorityCertManager:
		if fromFiles == nil {
			return nil, nil, errors.New("--certificate-authority=cert-manager needs --enrollment-tls-cert-file and --enrollment-tls-key-file (a cert-manager Certificate mounted into the pod)")
		}
		authority, err := NewCertManagerCA(s, o.CertManager, o.CA)
		if err != nil {
			return nil, nil, err
		}
		return authority, fromFiles, nil
	default:
		return nil, nil, fmt.Errorf("--certificate-authority %q: want %s or %s", o.Authority, AuthorityEmbedded, AuthorityCertManager)
	}
}
