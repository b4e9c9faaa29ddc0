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
	"bytes"
	"context"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	enrollv1 "github.com/credo-dev/credo/api/enrollment/v1alpha1"
	"github.com/credo-dev/credo/internal/ca"
	"github.com/credo-dev/credo/internal/metrics"
	"github.com/credo-dev/credo/internal/reconciler"
	"github.com/credo-dev/credo/pkg/enrollapi"
)

// Backdate is how far before now a certificate's notBefore is set: enough
// for a clock a little behind, bounded by max and by a twentieth of the TTL
// so that short lifetimes keep their shape.
func Backdate(ttl, max time.Duration) time.Duration {
	if max <= 0 {
		max = DefaultMaxBackdate
	}
	return min(max, ttl/20)
}

// maxRecordedCertificates is the most of a certificate and its chain, PEM,
// a Workload's status keeps (the CRD's bound).
const maxRecordedCertificates = 32768

// issue signs csr for wl under policy, checks what came back, and records
// the new serial with a conditional update of the Workload's status. Only
// after that write is the certificate returned: the registry always names
// the one certificate that may renew. When the write conflicts, wl is read
// again from the API server and check judges it: a refusal is returned
// with wl holding that version.
func (s *Server) issue(ctx context.Context, wl *enrollv1.Workload, policy *enrollv1.EnrollmentPolicy, csr *x509.CertificateRequest,
	peer enrollv1.WorkloadPeer, check workloadCheck) (*enrollapi.CertificateResponse, *apiError) {
	// Step 2 issues the first certificate; a renewal replaces one.
	renewal := wl.Status.Serial != ""
	now := s.now()
	ttl := policy.GetCertificateTTL()
	maxTTL := s.Limits.MaxCertificateTTL
	if maxTTL > 0 && ttl > maxTTL {
		// usablePolicy refused such a policy already; never sign it.
		return nil, &apiError{status: http.StatusForbidden, reason: enrollapi.ReasonPolicyExceedsLimits,
			msg: fmt.Sprintf("certificateTTL %s is over the platform maximum of %s", ttl, maxTTL)}
	}
	backdate := Backdate(ttl, s.MaxBackdate)
	if maxTTL > 0 {
		// The whole requested lifetime stays within the maximum: an issuer
		// that starts it at its own clock (cert-manager) ends it by
		// now + the maximum too.
		backdate = max(0, min(backdate, maxTTL-ttl))
	}
	// CheckCSR let through only the workload's own URI: sign that one.
	uri := csr.URIs[0]
	issued, err := s.CA.Sign(ctx, ca.SigningRequest{
		CSR: csr.Raw, PublicKey: csr.PublicKey, URI: uri,
		NotBefore: now.Add(-backdate), NotAfter: now.Add(ttl),
	})
	if err != nil {
		if errors.Is(err, ca.ErrUnavailable) {
			return nil, unavailable("signing the certificate", err)
		}
		s.Log.Info("the certificate authority refused to sign", "workload", wl.Name, "error", err.Error())
		return nil, &apiError{status: http.StatusBadGateway, reason: enrollapi.ReasonSigningRefused,
			msg: fmt.Sprintf("the certificate authority refused to sign: %v", err)}
	}
	cert := issued.Certificate
	if err := checkIssued(cert, csr, uri.String()); err != nil {
		s.Log.Error(err, "the certificate authority returned a certificate that was not asked for", "workload", wl.Name)
		return nil, unavailable("signing the certificate", err)
	}
	// Whatever the issuer did, nothing valid beyond now + the platform's
	// maximum reaches the agent or the registry.
	if limit := s.now().Add(maxTTL); maxTTL > 0 && cert.NotAfter.After(limit) {
		s.Log.Info("the certificate authority signed beyond the platform's maximum certificate lifetime; the certificate is discarded",
			"workload", wl.Name, "notAfter", cert.NotAfter.UTC().Format(time.RFC3339), "maximum", maxTTL.String())
		return nil, &apiError{status: http.StatusBadGateway, reason: enrollapi.ReasonSigningRefused,
			msg: fmt.Sprintf("the certificate authority returned a certificate valid until %s, beyond the platform's maximum lifetime of %s; it was discarded",
				cert.NotAfter.UTC().Format(time.RFC3339), maxTTL)}
	}
	bundle, err := s.CA.Bundle(ctx)
	if err != nil {
		return nil, unavailable("reading the trust bundle", err)
	}

	nb, na := metav1.NewTime(cert.NotBefore), metav1.NewTime(cert.NotAfter)
	ra := metav1.NewTime(enrollapi.RenewalStart(cert.NotBefore, cert.NotAfter))
	at := metav1.NewTime(now)
	// Kept so that a retry of this request, its answer lost, gets the same
	// certificate; a certificate too large for the record only loses that.
	certificates := string(issued.CertificatePEM) + string(issued.ChainPEM)
	if len(certificates) > maxRecordedCertificates {
		certificates = ""
	}
	peer.At = &at
	digest := requestDigest(csr)
	// record writes the certificate into a copy of base, conditionally on
	// base's version, and returns the copy: wl itself changes only once a
	// write succeeded, so a refusal is never judged on a record that was
	// not stored.
	record := func(base *enrollv1.Workload) (*enrollv1.Workload, error) {
		next := base.DeepCopy()
		next.Status.PreviousSerial = next.Status.Serial
		next.Status.Serial = serialHex(cert)
		next.Status.URI = uri.String()
		next.Status.Certificate, next.Status.RequestSHA256, next.Status.IssuedTo = certificates, digest, &peer
		// check refused a denied workload: a denial the Workload
		// reconciler saw is over.
		next.Status.DeniedAt, next.Status.DeniedBy = nil, ""
		next.Status.NotBefore, next.Status.NotAfter, next.Status.RenewAfter = &nb, &na, &ra
		if renewal {
			next.Status.LastRenewal = &at
			next.Status.Renewals++
			reconciler.MarkState(next, metav1.ConditionTrue, enrollv1.RenewedReason, "certificate renewed")
		} else {
			next.Status.EnrolledAt = &at
			// The attributes step 1 checked against the policy are
			// established with the first certificate, in the same write,
			// when nobody changed them since (else the Workload reconciler
			// judges them).
			if next.Generation == 1 {
				next.Status.Labels, next.Status.Hostname = next.Spec.Labels, next.Spec.Hostname
				next.Status.AttributesGeneration = next.Generation
			}
			reconciler.MarkState(next, metav1.ConditionTrue, enrollv1.EnrolledReason, "enrolled; certificate issued")
		}
		// Conditional on the version base was read at: of two concurrent
		// requests for one workload only one records its serial.
		return next, s.Client.Status().Update(ctx, next)
	}
	next, err := record(wl)
	if apierrors.IsConflict(err) {
		// wl may have come from a cache that lags, or another request
		// recorded its certificate meanwhile: read it from the API server,
		// check it again, and write conditionally on that version.
		fresh, e := s.getWorkload(ctx, wl.Namespace, wl.Name)
		if e != nil {
			return nil, e
		}
		// wl becomes the API server's version either way: a caller judges
		// a refusal on it (a retry, a duplicate).
		*wl = *fresh
		if e := check(wl); e != nil {
			return nil, e
		}
		next, err = record(wl)
	}
	if err != nil {
		if apierrors.IsConflict(err) {
			// Written again meanwhile (a deny, another request): nothing
			// was recorded and the certificate is discarded. A retry is
			// judged afresh.
			return nil, unavailable("recording the certificate",
				fmt.Errorf("workload %s changed twice while its certificate was recorded", wl.Name))
		}
		if apierrors.IsNotFound(err) {
			return nil, &apiError{status: http.StatusNotFound, reason: enrollapi.ReasonWorkloadNotFound,
				msg: fmt.Sprintf("workload %s was deleted; enroll again with a join token", wl.Name)}
		}
		return nil, unavailable("recording the certificate", err)
	}
	*wl = *next
	if renewal {
		metrics.Renewed(wl.Namespace)
	} else {
		metrics.Enrolled(wl.Namespace)
	}
	return certificateResponse(wl, uri.String(), string(issued.CertificatePEM), string(issued.ChainPEM), bundle, &na, policy), nil
}

// checkIssued refuses a certificate that is not exactly what was asked for:
// the CSR's key, the one URI, no other SAN. It guards against an external
// issuer that adds what it likes.
func checkIssued(cert *x509.Certificate, csr *x509.CertificateRequest, uri string) error {
	if cert == nil {
		return errors.New("no certificate returned")
	}
	got, err := x509.MarshalPKIXPublicKey(cert.PublicKey)
	if err != nil {
		return err
	}
	want, err := x509.MarshalPKIXPublicKey(csr.PublicKey)
	if err != nil {
		return err
	}
	if !bytes.Equal(got, want) {
		return errors.New("the issued certificate's public key is not the request's")
	}
	if len(cert.URIs) != 1 || cert.URIs[0].String() != uri || len(cert.DNSNames)+len(cert.IPAddresses)+len(cert.EmailAddresses) > 0 {
		return errors.New("the issued certificate's subject alternative names are not exactly the workload URI")
	}
	if cert.IsCA {
		return errors.New("the issued certificate is a CA")
	}
	return nil
}

// EncodeCertificate returns cert as PEM.
func EncodeCertificate(cert *x509.Certificate) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Raw})
}
