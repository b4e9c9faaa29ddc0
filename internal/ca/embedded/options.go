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

package embedded

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/util/validation"
)

// Defaults of Options.
const (
	DefaultSecretName   = "credo-enrollment-ca"
	DefaultLifetime     = 10 * 365 * 24 * time.Hour
	DefaultOverlap      = 8 * 24 * time.Hour
	DefaultLabelDomain  = "internal.cozystack.io"
	DefaultRelease      = "credo"
	DefaultInterval     = time.Minute
	DefaultRefreshAfter = 10 * time.Second
)

// Options configures the embedded CA.
//
//	opts := embedded.NewOptions()
//	opts.BindFlags(pflag.CommandLine)
//	pflag.Parse()
//	opts.Namespace = os.Getenv("RUNTIME_NAMESPACE")
//	authority, err := embedded.New(opts, kubeClient, apiReader, recorder)
type Options struct {
	// Namespace of the CA Secret: the controller's own. Required; not a flag.
	Namespace string
	// SecretName is the name of the CA Secret.
	SecretName string
	// Lifetime of a generated CA certificate. A CA rotates by itself once
	// two thirds of it have passed.
	Lifetime time.Duration
	// Overlap is how long a previous CA stays trusted after a rotation: at
	// least the longest workload certificate lifetime plus the renewal grace.
	Overlap time.Duration
	// LabelDomain is the domain of the trust-anchor contract labels
	// (<domain>/publish-ca-cert and friends) that earlier versions put on
	// the Secret, and that are removed from it.
	LabelDomain string
	// Release names the TrustAnchor the CA is published by (Anchor), in
	// the Secret's namespace, and its projection <release>.tenant-ca. No
	// HelmRelease of the name is needed.
	Release string
	// Interval is how often Run reconciles the Secret.
	Interval time.Duration
	// RefreshAfter is the age after which Sign re-reads the Secret.
	RefreshAfter time.Duration
	// Keys, when not nil, keeps the CA keys (a PKCS#11 token): the Secret
	// then holds certificates only. Not a flag: the enrollment-controller
	// opens the token its --enrollment-ca-pkcs11-* flags name.
	Keys KeyStore
}

// NewOptions returns Options with the defaults and no namespace.
func NewOptions() Options {
	return Options{
		SecretName:   DefaultSecretName,
		Lifetime:     DefaultLifetime,
		Overlap:      DefaultOverlap,
		LabelDomain:  DefaultLabelDomain,
		Release:      DefaultRelease,
		Interval:     DefaultInterval,
		RefreshAfter: DefaultRefreshAfter,
	}
}

// BindFlags binds the options, except Namespace, to fs.
func (o *Options) BindFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.SecretName, "enrollment-ca-secret", DefaultSecretName,
		"The Secret, in the controller's namespace, that holds the embedded enrollment CA.")
	fs.DurationVar(&o.Lifetime, "enrollment-ca-lifetime", DefaultLifetime,
		"The lifetime of a generated enrollment CA; it rotates by itself after two thirds of it.")
	fs.DurationVar(&o.Overlap, "enrollment-ca-overlap", DefaultOverlap,
		"How long a previous enrollment CA stays trusted after a rotation: at least the longest certificate TTL plus the renewal grace.")
	fs.StringVar(&o.LabelDomain, "enrollment-ca-label-domain", DefaultLabelDomain,
		"The domain of the trust-anchor labels (<domain>/publish-ca-cert) that earlier versions put on the enrollment CA Secret; they are removed from it.")
	_ = fs.MarkDeprecated("enrollment-ca-label-domain",
		"the enrollment CA is published by a declared TrustAnchor, not by labels; the flag only names the labels removed from the CA Secret")
	fs.StringVar(&o.Release, "enrollment-ca-release", DefaultRelease,
		"The name of the TrustAnchor, in the controller's namespace, the enrollment CA is published by, and of its projection <release>.tenant-ca. No HelmRelease of the name is needed.")
}

// Validate reports options the CA cannot work with.
func (o *Options) Validate() error {
	var errs []error
	if o.Namespace == "" {
		errs = append(errs, errors.New("the CA Secret's namespace is required"))
	}
	for _, m := range validation.IsDNS1123Subdomain(o.SecretName) {
		errs = append(errs, fmt.Errorf("secret name %q: %s", o.SecretName, m))
	}
	for _, m := range validation.IsDNS1123Subdomain(o.LabelDomain) {
		errs = append(errs, fmt.Errorf("label domain %q: %s", o.LabelDomain, m))
	}
	for _, m := range validation.IsValidLabelValue(o.Release) {
		errs = append(errs, fmt.Errorf("release %q: %s", o.Release, m))
	}
	if o.Release == "" {
		errs = append(errs, errors.New("the release is required"))
	}
	if o.Lifetime < time.Minute {
		errs = append(errs, fmt.Errorf("CA lifetime %s is shorter than a minute", o.Lifetime))
	}
	if o.Overlap <= 0 {
		errs = append(errs, fmt.Errorf("overlap %s must be positive", o.Overlap))
	}
	if o.Interval <= 0 || o.RefreshAfter <= 0 {
		errs = append(errs, errors.New("interval and refresh period must be positive"))
	}
	return errors.Join(errs...)
}
