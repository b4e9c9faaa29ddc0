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

package agent

import (
	"bytes"
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/credo-dev/credo/pkg/enrollapi"
)

// logTime is how times appear in messages.
const logTime = "2006-01-02T15:04:05.000Z07:00"

// graceOverError ends retries that reached the end of the renewal grace.
type graceOverError struct{ last error }

func (e *graceOverError) Error() string {
	return "the renewal grace ended; last error: " + e.last.Error()
}
func (e *graceOverError) Unwrap() error { return e.last }

// RenewAt returns when a certificate valid from notBefore to notAfter is
// renewed, given r drawn uniformly from [0, 1):
//
//	notBefore + ⌈lifetime×2/3⌉ + r×(span), span ending just before lifetime×5/6
//
// so that the offset from notBefore is always at least 2/3 and less than 5/6
// of the lifetime, hence before notAfter. r outside [0, 1) is clamped.
func RenewAt(notBefore, notAfter time.Time, r float64) time.Time {
	lifetime := notAfter.Sub(notBefore)
	if lifetime <= 0 {
		return notBefore
	}
	lo := enrollapi.RenewalStart(notBefore, notAfter).Sub(notBefore)
	hi := (5*lifetime - 1) / 6 // largest d with 6d < 5L
	if hi <= lo {
		return notBefore.Add(lo)
	}
	if !(r > 0) { // also NaN
		r = 0
	}
	off := lo + time.Duration(r*float64(hi-lo))
	return notBefore.Add(min(max(off, lo), hi))
}

// backoff returns the wait before retry number attempt (from 0): initial
// doubled per attempt up to maxWait, then jittered into [d/2, d) by r.
func backoff(attempt int, initial, maxWait time.Duration, r float64) time.Duration {
	d := initial
	for i := 0; i < attempt && d < maxWait; i++ {
		d *= 2
	}
	d = min(d, maxWait)
	if d < 2 {
		return d
	}
	if !(r > 0) {
		r = 0
	}
	return d/2 + min(time.Duration(r*float64(d/2)), d/2-1)
}

// renewLoop renews each certificate at its renewAt, polling the bundle in between.
func (a *Agent) renewLoop(ctx context.Context) error {
	if a.cfg.BundlePollInterval > 0 {
		a.nextPoll = a.clock.Now().Add(a.cfg.BundlePollInterval)
	}
	for {
		id := a.identity.Load()
		if err := a.wait(ctx, id.renewAt); err != nil {
			return err
		}
		if err := a.renew(ctx, id); err != nil {
			return err
		}
	}
}

// maxFormChanges bounds how many times one renewal is asked again for
// the URI a server names after a change of the install's identity form.
const maxFormChanges = 3

// renew replaces id's certificate, retrying until the end of its grace.
// When the install's identity form changed since id's certificate was
// issued, the server answers IdentityChanged with the workload's URI now,
// and the renewal is asked again for it, with the same certificate and key.
func (a *Agent) renew(ctx context.Context, id *identity) error {
	var want *url.URL
	for changes := 0; ; changes++ {
		csrPEM, uri, err := a.renewalRequest(id, want)
		if err != nil {
			return err
		}
		resp, err := a.sendRenewal(ctx, id, csrPEM)
		var apiErr *enrollapi.Error
		if errors.As(err, &apiErr) && apiErr.Reason == enrollapi.ReasonIdentityChanged && changes < maxFormChanges {
			next, perr := workloadURI(apiErr.URI, id.uuid)
			if perr == nil {
				a.log.Info("the install's identity form changed; renewing as "+next.String(), "previous", uri.String())
				want = next
				continue
			}
			err = fmt.Errorf("%w; the URI named, %q, is unusable: %w", err, apiErr.URI, perr)
		}
		if err != nil {
			return a.renewalFailed(ctx, id, err)
		}
		next, tr, err := a.accept(resp, id.uuid, uri, id.key)
		if err != nil {
			return fmt.Errorf("renewal: %w", err)
		}
		u, err := a.save(next, false, tr)
		if err != nil {
			return fmt.Errorf("renewal: %w", err)
		}
		a.clearPending()
		a.log.Info("renewed, next renewal at "+next.renewAt.Format(logTime), "uri", next.uri().String(),
			"serial", next.leaf.SerialNumber.Text(16), "notAfter", next.leaf.NotAfter)
		if u.Attributes {
			a.log.Info("the registry's labels or hostname of the workload changed", "labels", next.labels, "hostname", next.hostname)
		}
		a.notify(u)
		return nil
	}
}

// sendRenewal sends the renewal of id with csrPEM, retrying until the end
// of its grace.
func (a *Agent) sendRenewal(ctx context.Context, id *identity, csrPEM []byte) (*enrollapi.CertificateResponse, error) {
	// The same request, byte for byte, on every attempt, across restarts:
	// a retry whose first answer was lost gets the certificate already
	// issued.
	req := &enrollapi.RenewalRequest{CSR: string(csrPEM), Host: a.host()}
	var resp enrollapi.CertificateResponse
	err := a.retry(ctx, id.deadline(), "renewing the certificate", transient, func() error {
		resp = enrollapi.CertificateResponse{}
		return a.client.postJSON(ctx, enrollapi.PathRenewal(id.uuid), req, &resp)
	})
	return &resp, err
}

// renewalFailed says what a failed renewal of id means, recording that the
// certificate is refused for good when a new enrollment is needed.
func (a *Agent) renewalFailed(ctx context.Context, id *identity, err error) error {
	var apiErr *enrollapi.Error
	var graceOver *graceOverError
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case errors.As(err, &graceOver):
		msg := fmt.Sprintf("no renewal of %s succeeded before its renewal grace ended at %s; last error: %v",
			id.uri(), id.deadline().Format(logTime), graceOver.last)
		a.markReenrollment(id, enrollapi.ReasonRenewalGraceOver, msg)
		return fmt.Errorf("%w: %w", ErrReenrollmentRequired, &enrollapi.Error{Reason: enrollapi.ReasonRenewalGraceOver, Message: msg})
	case errors.As(err, &apiErr) && apiErr.IsDenied():
		// Nothing is marked: once the denial is lifted, the same
		// certificate renews again.
		return fmt.Errorf("%w: %w", ErrDenied, err)
	case needsReenrollment(err) && errors.As(err, &apiErr):
		a.markReenrollment(id, apiErr.Reason, apiErr.Message)
		return fmt.Errorf("%w: %w", ErrReenrollmentRequired, err)
	default:
		return fmt.Errorf("renewal refused: %w", err)
	}
}

// retry calls fn until it succeeds, fails in a way retryable refuses, ctx is done or, when
// deadline is set, the deadline passes (the error is then a
// *graceOverError wrapping the last failure).
func (a *Agent) retry(ctx context.Context, deadline time.Time, what string, retryable func(error) bool, fn func() error) error {
	for attempt := 0; ; attempt++ {
		err := fn()
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if !retryable(err) {
			return err
		}
		now := a.clock.Now()
		if !deadline.IsZero() && !now.Before(deadline) {
			return &graceOverError{last: err}
		}
		d := backoff(attempt, a.cfg.RetryInitial, a.cfg.RetryMax, a.jitter())
		var se *StatusError
		if errors.As(err, &se) && se.RetryAfter > d {
			d = min(se.RetryAfter, a.cfg.RetryMax)
		}
		if !deadline.IsZero() {
			d = min(d, deadline.Sub(now))
		}
		a.log.Warn(what+" failed; retrying", "error", err.Error(), "attempt", attempt+1, "retryIn", d)
		if err := a.wait(ctx, now.Add(d)); err != nil {
			return err
		}
	}
}

// wait returns at until, or with ctx's error, polling the bundle when due.
func (a *Agent) wait(ctx context.Context, until time.Time) error {
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		now := a.clock.Now()
		if !now.Before(until) {
			return nil
		}
		next := until
		polling := !a.nextPoll.IsZero()
		if polling && a.nextPoll.Before(next) {
			next = a.nextPoll
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-a.clock.After(next.Sub(now)):
		}
		if polling && !a.clock.Now().Before(a.nextPoll) {
			a.pollBundle(ctx)
			a.nextPoll = a.clock.Now().Add(a.cfg.BundlePollInterval)
		}
	}
}

// pollBundle fetches the bundle and writes it when it changed. Failures are
// logged: the next poll or renewal tries again.
func (a *Agent) pollBundle(ctx context.Context) {
	b, err := a.client.getBundle(ctx)
	if err != nil {
		if ctx.Err() == nil {
			a.log.Warn("fetching the trust bundle failed", "error", err.Error())
		}
		return
	}
	certs, err := parseCertificates(b)
	if err != nil {
		a.log.Warn("the trust bundle received is unusable", "error", err.Error())
		return
	}
	pemBytes := encodeCertificates(certs)
	if bytes.Equal(pemBytes, a.trust.Load().bundlePEM) {
		return
	}
	tr := a.newTrust(pemBytes, certs)
	if err := a.saveBundle(tr); err != nil {
		a.log.Error("cannot write the new trust bundle", "error", err.Error())
		return
	}
	a.log.Info("the trust bundle changed", "certificates", len(certs))
	if id := a.identity.Load(); id != nil && !chainsTo(id, tr.bundle) {
		a.log.Warn("the new trust bundle does not include the CA of the current certificate; peers may refuse it until the next renewal",
			"uri", id.uri().String())
	}
	a.notify(Update{Bundle: true})
}

// chainsTo reports whether id's certificate chains to a CA of pool.
func chainsTo(id *identity, pool *x509.CertPool) bool {
	opts := x509.VerifyOptions{
		Roots:         pool,
		Intermediates: x509.NewCertPool(),
		KeyUsages:     []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
		CurrentTime:   id.leaf.NotBefore,
	}
	for _, der := range id.cert.Certificate[1:] {
		if c, err := x509.ParseCertificate(der); err == nil {
			opts.Intermediates.AddCert(c)
		}
	}
	_, err := id.leaf.Verify(opts)
	return err == nil
}
