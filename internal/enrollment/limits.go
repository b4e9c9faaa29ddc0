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
	"errors"
	"fmt"
	"time"

	"github.com/spf13/pflag"

	enrollv1 "github.com/credo-dev/credo/api/enrollment/v1alpha1"
)

// Defaults of Limits: the platform's maxima when no flag says otherwise.
const (
	// DefaultMaxCertificateTTL keeps a stolen workload key useful for a
	// week at most, whatever a namespace admin writes in a policy.
	DefaultMaxCertificateTTL = 7 * 24 * time.Hour
	// DefaultMaxTokenLifetime keeps a join token, a reusable bearer secret
	// that sits in provisioning channels, usable for a month at most.
	DefaultMaxTokenLifetime = 30 * 24 * time.Hour
	// DefaultMaxRenewalGrace lets a workload that was down a day renew with
	// its expired certificate. With DefaultMaxCertificateTTL it adds up to
	// the embedded CA's default overlap (8 days), so a rotation never
	// strands a certificate that may still renew.
	DefaultMaxRenewalGrace = 24 * time.Hour
	// DefaultMaxPendingPerToken is how many Workloads one token may have
	// registered (step 1) and not yet given a certificate (step 2).
	DefaultMaxPendingPerToken = 10
)

// Limits are the platform-wide maxima of what a policy may ask for, set by
// the platform (flags of the enrollment-controller), not by the namespace
// admins who write policies. Each is at most the CRD's own bound.
type Limits struct {
	// MaxCertificateTTL bounds spec.certificateTTL.
	MaxCertificateTTL time.Duration
	// MaxTokenLifetime bounds spec.tokenLifetime, and how long after its
	// creation any join token enrolls, whatever its expiresAt says.
	MaxTokenLifetime time.Duration
	// MaxRenewalGrace bounds spec.renewalGrace.
	MaxRenewalGrace time.Duration
	// MaxPendingPerToken bounds the Workloads one token has registered and
	// that have no certificate yet.
	MaxPendingPerToken int
}

// DefaultLimits returns the default maxima.
func DefaultLimits() Limits {
	return Limits{
		MaxCertificateTTL:  DefaultMaxCertificateTTL,
		MaxTokenLifetime:   DefaultMaxTokenLifetime,
		MaxRenewalGrace:    DefaultMaxRenewalGrace,
		MaxPendingPerToken: DefaultMaxPendingPerToken,
	}
}

// Flag names of the limits, quoted in messages.
const (
	FlagMaxCertificateTTL  = "max-certificate-ttl"
	FlagMaxTokenLifetime   = "max-token-lifetime"
	FlagMaxRenewalGrace    = "max-renewal-grace"
	FlagMaxPendingPerToken = "max-pending-workloads-per-token"
)

// BindFlags binds the limits to fs.
func (l *Limits) BindFlags(fs *pflag.FlagSet) {
	fs.DurationVar(&l.MaxCertificateTTL, FlagMaxCertificateTTL, l.MaxCertificateTTL,
		fmt.Sprintf("The longest certificateTTL any EnrollmentPolicy may ask for; at most %s. A policy over it is Stalled and nothing is signed under it.", enrollv1.MaxCertificateTTL))
	fs.DurationVar(&l.MaxTokenLifetime, FlagMaxTokenLifetime, l.MaxTokenLifetime,
		fmt.Sprintf("The longest tokenLifetime any EnrollmentPolicy may ask for, and how long after its creation any join token enrolls; at most %s.", enrollv1.MaxTokenLifetime))
	fs.DurationVar(&l.MaxRenewalGrace, FlagMaxRenewalGrace, l.MaxRenewalGrace,
		fmt.Sprintf("The longest renewalGrace any EnrollmentPolicy may ask for; at most %s.", enrollv1.MaxRenewalGrace))
	fs.IntVar(&l.MaxPendingPerToken, FlagMaxPendingPerToken, l.MaxPendingPerToken,
		"How many Workloads one join token may have registered and not yet given a certificate; more registrations are refused (429) until some complete or expire.")
}

// Validate checks that each limit is positive and within the CRD's bound.
func (l Limits) Validate() error {
	var errs []error
	check := func(flag string, v, ceiling time.Duration, minimum time.Duration) {
		if v < minimum || v > ceiling {
			errs = append(errs, fmt.Errorf("--%s %s must be between %s and %s", flag, v, minimum, ceiling))
		}
	}
	check(FlagMaxCertificateTTL, l.MaxCertificateTTL, enrollv1.MaxCertificateTTL, enrollv1.MinCertificateTTL)
	check(FlagMaxTokenLifetime, l.MaxTokenLifetime, enrollv1.MaxTokenLifetime, time.Second)
	check(FlagMaxRenewalGrace, l.MaxRenewalGrace, enrollv1.MaxRenewalGrace, 0)
	if l.MaxPendingPerToken < 1 {
		errs = append(errs, fmt.Errorf("--%s must be at least 1", FlagMaxPendingPerToken))
	}
	return errors.Join(errs...)
}

// PolicyProblems lists what p asks for beyond the limits, as messages
// naming the field, its value and the maximum. A field left out is judged
// by its default. Empty when p is within the limits.
func (l Limits) PolicyProblems(p *enrollv1.EnrollmentPolicy) []string {
	var problems []string
	over := func(field string, set bool, v, maxV time.Duration, flag string) {
		if v <= maxV {
			return
		}
		what := "spec." + field
		if !set {
			what += " (default)"
		}
		problems = append(problems, fmt.Sprintf("%s %s is over the platform maximum of %s (--%s)", what, v, maxV, flag))
	}
	over("certificateTTL", p.Spec.CertificateTTL != nil, p.GetCertificateTTL(), l.MaxCertificateTTL, FlagMaxCertificateTTL)
	over("tokenLifetime", p.Spec.TokenLifetime != nil, p.GetTokenLifetime(), l.MaxTokenLifetime, FlagMaxTokenLifetime)
	over("renewalGrace", p.Spec.RenewalGrace != nil, p.GetRenewalGrace(), l.MaxRenewalGrace, FlagMaxRenewalGrace)
	return problems
}
