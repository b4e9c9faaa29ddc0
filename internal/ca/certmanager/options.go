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

package certmanager

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/util/validation"
)

// Kinds of the bundle source.
const (
	BundleFromSecret    = "Secret"
	BundleFromConfigMap = "ConfigMap"
)

// Defaults of Options.
const (
	DefaultIssuerKind   = "Issuer"
	DefaultIssuerGroup  = "cert-manager.io"
	DefaultTimeout      = 30 * time.Second
	DefaultBundleKey    = "ca.crt"
	DefaultRefreshAfter = 10 * time.Second
	DefaultAnchorSecret = "credo-enrollment-issuer-ca"
)

// Options configures the cert-manager CA.
//
//	opts := certmanager.NewOptions()
//	opts.BindFlags(pflag.CommandLine)
//	pflag.Parse()
//	authority, err := certmanager.New(opts, watchingClient)
type Options struct {
	// Namespace where CertificateRequests are created (and, for an Issuer,
	// where the issuer lives).
	Namespace string
	// IssuerName, IssuerKind and IssuerGroup form spec.issuerRef.
	IssuerName  string
	IssuerKind  string
	IssuerGroup string
	// Timeout bounds the wait for the issuer's answer.
	Timeout time.Duration
	// BundleKind is Secret or ConfigMap: where the trust bundle is read.
	BundleKind string
	// BundleName is the Secret's or ConfigMap's name.
	BundleName string
	// BundleNamespace defaults to Namespace.
	BundleNamespace string
	// BundleKey is the key holding the PEM bundle.
	BundleKey string
	// RefreshAfter is how long a bundle read is cached, and how often the
	// Mirror reads it.
	RefreshAfter time.Duration
	// AnchorSecret is the Secret, in the enrollment-controller's
	// namespace, where the Mirror keeps the bundle's certificates: the
	// source of the enrollment CA's TrustAnchor.
	AnchorSecret string
}

// NewOptions returns Options with the defaults.
func NewOptions() Options {
	return Options{
		IssuerKind:   DefaultIssuerKind,
		IssuerGroup:  DefaultIssuerGroup,
		Timeout:      DefaultTimeout,
		BundleKind:   BundleFromSecret,
		BundleKey:    DefaultBundleKey,
		RefreshAfter: DefaultRefreshAfter,
		AnchorSecret: DefaultAnchorSecret,
	}
}

// BindFlags binds the options to fs.
func (o *Options) BindFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Namespace, "cert-manager-namespace", "",
		"The namespace where CertificateRequests for workload certificates are created.")
	fs.StringVar(&o.IssuerName, "cert-manager-issuer-name", "",
		"The cert-manager issuer that signs workload certificates.")
	fs.StringVar(&o.IssuerKind, "cert-manager-issuer-kind", DefaultIssuerKind,
		"The kind of the cert-manager issuer (Issuer, ClusterIssuer, or an external issuer's kind).")
	fs.StringVar(&o.IssuerGroup, "cert-manager-issuer-group", DefaultIssuerGroup,
		"The API group of the cert-manager issuer.")
	fs.DurationVar(&o.Timeout, "cert-manager-timeout", DefaultTimeout,
		"How long to wait for the issuer to answer a CertificateRequest.")
	fs.StringVar(&o.BundleKind, "cert-manager-bundle-kind", BundleFromSecret,
		"Where the trust bundle is read: Secret or ConfigMap.")
	fs.StringVar(&o.BundleName, "cert-manager-bundle-name", "",
		"The Secret or ConfigMap holding the trust bundle (e.g. the CA issuer's Secret).")
	fs.StringVar(&o.BundleNamespace, "cert-manager-bundle-namespace", "",
		"The namespace of the trust bundle's Secret or ConfigMap; default --cert-manager-namespace.")
	fs.StringVar(&o.BundleKey, "cert-manager-bundle-key", DefaultBundleKey,
		"The key of the trust bundle in its Secret or ConfigMap.")
	fs.StringVar(&o.AnchorSecret, "cert-manager-anchor-secret", DefaultAnchorSecret,
		"The Secret, in the controller's namespace, where the trust bundle's certificates are copied: the source of the enrollment CA's TrustAnchor (--enrollment-ca-release).")
}

// Validate reports options the CA cannot work with.
func (o *Options) Validate() error {
	var errs []error
	if o.Namespace == "" {
		errs = append(errs, errors.New("the CertificateRequest namespace is required"))
	}
	if o.IssuerName == "" || o.IssuerKind == "" || o.IssuerGroup == "" {
		errs = append(errs, errors.New("the issuer's name, kind and group are required"))
	}
	if o.Timeout <= 0 || o.RefreshAfter <= 0 {
		errs = append(errs, errors.New("the timeout and refresh period must be positive"))
	}
	if o.BundleKind != BundleFromSecret && o.BundleKind != BundleFromConfigMap {
		errs = append(errs, fmt.Errorf("bundle kind %q: want %s or %s", o.BundleKind, BundleFromSecret, BundleFromConfigMap))
	}
	for _, m := range validation.IsDNS1123Subdomain(o.AnchorSecret) {
		errs = append(errs, fmt.Errorf("anchor Secret name %q: %s", o.AnchorSecret, m))
	}
	if o.BundleName == "" || o.BundleKey == "" {
		errs = append(errs, errors.New("the bundle's name and key are required"))
	}
	return errors.Join(errs...)
}
