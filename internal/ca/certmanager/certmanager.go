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
	"context"
	"crypto"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/credo-dev/credo/internal/ca"
)

// CertificateRequestGVK is cert-manager's CertificateRequest.
var CertificateRequestGVK = schema.GroupVersionKind{Group: "cert-manager.io", Version: "v1", Kind: "CertificateRequest"}

// Usages asked of the issuer, in cert-manager's spelling.
var usages = []any{"client auth", "server auth", "digital signature"}

const (
	// namePrefix starts the generated name of every CertificateRequest.
	namePrefix = "credo-workload-"
	// labelManagedBy marks the CertificateRequests this package creates.
	labelManagedBy = "app.kubernetes.io/managed-by"
	managedBy      = "credo"
	// AnnotationWorkloadURI carries the URI SAN asked for, for approvers.
	AnnotationWorkloadURI = "enrollment.credo.dev/workload-uri"
	// deleteTimeout bounds the clean-up of a CertificateRequest.
	deleteTimeout = 10 * time.Second
	// rewatchPause is the pause before watching again after a failed watch.
	rewatchPause = 200 * time.Millisecond
)

// Condition types and reasons of a CertificateRequest (cert-manager.io/v1).
const (
	conditionReady          = "Ready"
	conditionDenied         = "Denied"
	conditionInvalidRequest = "InvalidRequest"
	conditionApproved       = "Approved"
	reasonFailed            = "Failed"
	reasonDenied            = "Denied"
)

// IssuerError is an issuer's final refusal of a CertificateRequest: it was
// denied, it failed, or it is invalid. Asking again gets the same answer.
type IssuerError struct {
	// Request is namespace/name of the CertificateRequest.
	Request string
	// Condition is Denied, Failed or InvalidRequest.
	Condition string
	// Reason and Message are the condition's, Message bounded and sanitised.
	Reason, Message string
}

func (e *IssuerError) Error() string {
	return fmt.Sprintf("CertificateRequest %s: %s (reason %s): %s", e.Request, e.Condition, e.Reason, e.Message)
}

// CA signs through a cert-manager issuer. It implements ca.CertificateAuthority.
type CA struct {
	opts   Options
	client client.WithWatch
	now    func() time.Time

	bundleMu sync.Mutex
	bundle   []byte
	roots    []*x509.Certificate
	bundleAt time.Time
}

var _ ca.CertificateAuthority = (*CA)(nil)

// New returns a CA that signs through the issuer of opts. c must be an
// uncached client with watch (client.NewWithWatch).
func New(opts Options, c client.WithWatch) (*CA, error) {
	if opts.BundleNamespace == "" {
		opts.BundleNamespace = opts.Namespace
	}
	if err := opts.Validate(); err != nil {
		return nil, fmt.Errorf("cert-manager CA options: %w", err)
	}
	if c == nil {
		return nil, errors.New("cert-manager CA: a client is required")
	}
	return &CA{opts: opts, client: c, now: time.Now}, nil
}

// Sign creates a CertificateRequest for req.CSR, waits for the issuer's
// answer, deletes the request, and checks the certificate. A timeout or an
// API failure wraps ca.ErrUnavailable; a refusal by the issuer is an
// *IssuerError; a certificate other than the one asked for wraps ErrRefused.
func (c *CA) Sign(ctx context.Context, req ca.SigningRequest) (*ca.Issued, error) {
	if len(req.CSR) == 0 || req.URI == nil {
		return nil, errors.New("the signing request lacks its CSR or URI")
	}
	csr, err := x509.ParseCertificateRequest(req.CSR)
	if err != nil {
		return nil, errors.New("the signing request's CSR cannot be parsed")
	}
	pub := req.PublicKey
	if pub == nil {
		pub = csr.PublicKey
	} else if eq, ok := pub.(interface{ Equal(crypto.PublicKey) bool }); !ok || !eq.Equal(csr.PublicKey) {
		return nil, errors.New("the signing request's public key is not the CSR's")
	}
	duration := req.NotAfter.Sub(req.NotBefore)
	if duration <= 0 {
		return nil, errors.New("the signing request ends before it begins")
	}
	_, roots, err := c.loadBundle(ctx)
	if err != nil {
		return nil, err
	}

	ctx, cancel := context.WithTimeout(ctx, c.opts.Timeout)
	defer cancel()
	cr := c.newCertificateRequest(req, duration)
	if err := c.client.Create(ctx, cr); err != nil {
		return nil, fmt.Errorf("%w: creating a CertificateRequest in %s: %w", ca.ErrUnavailable, c.opts.Namespace, err)
	}
	defer c.delete(ctx, cr)
	certPEM, caPEM, err := c.wait(ctx, cr)
	if err != nil {
		return nil, err
	}
	iss, err := c.checkIssued(ctx, certPEM, caPEM, roots, pub, req)
	if err != nil {
		return nil, fmt.Errorf("CertificateRequest %s (issuer %s %s): %w", key(cr), c.opts.IssuerKind, c.opts.IssuerName, err)
	}
	return &ca.Issued{Certificate: iss.leaf, CertificatePEM: iss.leafPEM, ChainPEM: iss.chainPEM}, nil
}

// checkIssued parses and checks what the issuer returned against roots.
// A certificate that does not verify against them is checked once more
// against the bundle read again: the issuer's CA may have rotated since
// the bundle was read (it is cached for RefreshAfter), and a certificate
// of the new CA is then as good as one of the old.
func (c *CA) checkIssued(ctx context.Context, certPEM, caPEM []byte, roots []*x509.Certificate,
	pub crypto.PublicKey, req ca.SigningRequest) (*issued, error) {
	iss, err := parseIssued(certPEM, caPEM, roots)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrRefused, err)
	}
	err = iss.check(pub, req.URI, roots, c.now())
	if !errors.Is(err, errUnverified) {
		return iss, err
	}
	_, fresh, rerr := c.reloadBundle(ctx)
	if rerr != nil || sameCerts(fresh, roots) {
		return nil, err
	}
	if iss, err = parseIssued(certPEM, caPEM, fresh); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrRefused, err)
	}
	return iss, iss.check(pub, req.URI, fresh, c.now())
}

// Bundle returns the PEM of the configured bundle key.
func (c *CA) Bundle(ctx context.Context) ([]byte, error) {
	b, _, err := c.loadBundle(ctx)
	return b, err
}

func (c *CA) newCertificateRequest(req ca.SigningRequest, duration time.Duration) *unstructured.Unstructured {
	csrPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: req.CSR})
	u := &unstructured.Unstructured{Object: map[string]any{
		"spec": map[string]any{
			"request":  base64.StdEncoding.EncodeToString(csrPEM),
			"duration": duration.String(),
			"usages":   usages,
			"isCA":     false,
			"issuerRef": map[string]any{
				"name":  c.opts.IssuerName,
				"kind":  c.opts.IssuerKind,
				"group": c.opts.IssuerGroup,
			},
		},
	}}
	u.SetGroupVersionKind(CertificateRequestGVK)
	u.SetNamespace(c.opts.Namespace)
	u.SetGenerateName(namePrefix)
	u.SetLabels(map[string]string{labelManagedBy: managedBy})
	u.SetAnnotations(map[string]string{AnnotationWorkloadURI: req.URI.String()})
	return u
}

// wait watches cr until the issuer answers or ctx ends. It returns
// status.certificate and status.ca, decoded.
func (c *CA) wait(ctx context.Context, cr *unstructured.Unstructured) ([]byte, []byte, error) {
	rv := cr.GetResourceVersion()
	for {
		done, certPEM, caPEM, err := outcome(cr)
		if done {
			return certPEM, caPEM, err
		}
		next, err := c.watchOnce(ctx, cr, rv)
		if err != nil {
			return nil, nil, err
		}
		if next == nil {
			// The watch ended without an answer: read the request again,
			// and watch from there.
			if err := c.pause(ctx, cr); err != nil {
				return nil, nil, err
			}
			latest := &unstructured.Unstructured{}
			latest.SetGroupVersionKind(CertificateRequestGVK)
			if err := c.client.Get(ctx, client.ObjectKeyFromObject(cr), latest); err != nil {
				if ctx.Err() != nil {
					return nil, nil, c.timedOut(ctx, cr)
				}
				return nil, nil, fmt.Errorf("%w: reading CertificateRequest %s: %w", ca.ErrUnavailable, key(cr), err)
			}
			next = latest
		}
		cr, rv = next, next.GetResourceVersion()
	}
}

// watchOnce watches cr from rv. It returns the first version of cr that
// carries an answer, or nil when the watch ended first.
func (c *CA) watchOnce(ctx context.Context, cr *unstructured.Unstructured, rv string) (*unstructured.Unstructured, error) {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(CertificateRequestGVK.GroupVersion().WithKind(CertificateRequestGVK.Kind + "List"))
	w, err := c.client.Watch(ctx, list, &client.ListOptions{
		Namespace:     cr.GetNamespace(),
		FieldSelector: fields.OneTermEqualSelector("metadata.name", cr.GetName()),
		Raw:           &metav1.ListOptions{ResourceVersion: rv},
	})
	if err != nil {
		if ctx.Err() != nil {
			return nil, c.timedOut(ctx, cr)
		}
		ctrl.LoggerFrom(ctx).V(1).Info("watching a CertificateRequest failed; reading it again", "request", key(cr), "error", err.Error())
		return nil, nil
	}
	defer w.Stop()
	last := cr
	for {
		select {
		case <-ctx.Done():
			return nil, c.timedOut(ctx, last)
		case ev, ok := <-w.ResultChan():
			if !ok {
				return nil, nil
			}
			switch ev.Type {
			case watch.Added, watch.Modified:
				u, isU := ev.Object.(*unstructured.Unstructured)
				if !isU {
					continue
				}
				if done, _, _, _ := outcome(u); done {
					return u, nil
				}
				last = u
			case watch.Deleted:
				return nil, fmt.Errorf("%w: CertificateRequest %s was deleted before the issuer answered", ca.ErrUnavailable, key(cr))
			case watch.Error:
				return nil, nil // e.g. the resourceVersion is too old: read again
			}
		}
	}
}

func (c *CA) pause(ctx context.Context, cr *unstructured.Unstructured) error {
	t := time.NewTimer(rewatchPause)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return c.timedOut(ctx, cr)
	case <-t.C:
		return nil
	}
}

// timedOut is the error of a wait that ended before the issuer answered;
// cr is the request as last seen, whose pending state it says.
func (c *CA) timedOut(ctx context.Context, cr *unstructured.Unstructured) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("%w: issuer %s %s did not answer CertificateRequest %s within %s%s",
			ca.ErrUnavailable, c.opts.IssuerKind, c.opts.IssuerName, key(cr), c.opts.Timeout, pendingState(cr))
	}
	return fmt.Errorf("%w: waiting for CertificateRequest %s: %w", ca.ErrUnavailable, key(cr), ctx.Err())
}

// delete removes cr, even when the signing context has ended.
func (c *CA) delete(ctx context.Context, cr *unstructured.Unstructured) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), deleteTimeout)
	defer cancel()
	if err := c.client.Delete(ctx, cr); err != nil && !apierrors.IsNotFound(err) {
		ctrl.LoggerFrom(ctx).Error(err, "deleting a CertificateRequest", "request", key(cr))
	}
}

// conditionOf returns cr's condition of type t.
func conditionOf(cr *unstructured.Unstructured, t string) (status, reason, message string, found bool) {
	conds, _, _ := unstructured.NestedSlice(cr.Object, "status", "conditions")
	for _, raw := range conds {
		m, ok := raw.(map[string]any)
		if !ok || m["type"] != t {
			continue
		}
		status, _ = m["status"].(string)
		reason, _ = m["reason"].(string)
		message, _ = m["message"].(string)
		return status, reason, message, true
	}
	return "", "", "", false
}

// pendingState says why a request the issuer has not answered waits, from
// its conditions: the Ready condition's reason and message (cert-manager's
// "Pending: Referenced issuer does not have a Ready status condition", ...)
// or the missing approval.
func pendingState(cr *unstructured.Unstructured) string {
	if s, r, m, ok := conditionOf(cr, conditionReady); ok && r != "" {
		return fmt.Sprintf(" (Ready %s, %s: %s)", printable(s), printable(r), safeMessage(m))
	}
	if s, _, _, _ := conditionOf(cr, conditionApproved); s != string(metav1.ConditionTrue) {
		return " (not approved)"
	}
	return ""
}

// outcome reads the issuer's answer from cr's conditions: done is false
// while it is pending.
func outcome(cr *unstructured.Unstructured) (done bool, certPEM, caPEM []byte, err error) {
	get := func(t string) (string, string, string, bool) { return conditionOf(cr, t) }
	refusal := func(condition, reason, message string) error {
		return &IssuerError{Request: key(cr), Condition: condition, Reason: printable(reason), Message: safeMessage(message)}
	}
	if s, r, m, ok := get(conditionDenied); ok && s == string(metav1.ConditionTrue) {
		return true, nil, nil, refusal(conditionDenied, r, m)
	}
	if s, r, m, ok := get(conditionInvalidRequest); ok && s == string(metav1.ConditionTrue) {
		return true, nil, nil, refusal(conditionInvalidRequest, r, m)
	}
	s, r, m, ok := get(conditionReady)
	switch {
	case !ok:
		return false, nil, nil, nil
	case s == string(metav1.ConditionFalse) && r == reasonFailed:
		return true, nil, nil, refusal(reasonFailed, r, m)
	case s == string(metav1.ConditionFalse) && r == reasonDenied:
		return true, nil, nil, refusal(conditionDenied, r, m)
	case s != string(metav1.ConditionTrue):
		return false, nil, nil, nil
	}
	certPEM, err = decodeField(cr, "certificate")
	if err == nil && len(certPEM) == 0 {
		err = errors.New("status.certificate is empty")
	}
	if err != nil {
		return true, nil, nil, fmt.Errorf("%w: CertificateRequest %s is Ready but %w", ErrRefused, key(cr), err)
	}
	caPEM, err = decodeField(cr, "ca")
	if err != nil {
		return true, nil, nil, fmt.Errorf("%w: CertificateRequest %s: %w", ErrRefused, key(cr), err)
	}
	return true, certPEM, caPEM, nil
}

// decodeField decodes status.<field>, a base64 []byte field.
func decodeField(cr *unstructured.Unstructured, field string) ([]byte, error) {
	v, _, _ := unstructured.NestedString(cr.Object, "status", field)
	out, err := base64.StdEncoding.DecodeString(v)
	if err != nil {
		return nil, fmt.Errorf("status.%s is not base64", field)
	}
	return out, nil
}

// safeMessage bounds an issuer's message and drops it if it carries PEM.
func safeMessage(m string) string {
	if strings.Contains(m, "-----BEGIN") {
		return "(message withheld: it contains PEM data)"
	}
	return printable(m)
}

// loadBundle returns the bundle, read again when older than RefreshAfter.
// A failed read keeps a bundle read before.
func (c *CA) loadBundle(ctx context.Context) ([]byte, []*x509.Certificate, error) {
	return c.bundleOlderThan(ctx, c.opts.RefreshAfter)
}

// reloadBundle is loadBundle reading the bundle again whatever its age:
// one read more for a certificate the cached bundle does not verify.
func (c *CA) reloadBundle(ctx context.Context) ([]byte, []*x509.Certificate, error) {
	return c.bundleOlderThan(ctx, 0)
}

func (c *CA) bundleOlderThan(ctx context.Context, age time.Duration) ([]byte, []*x509.Certificate, error) {
	c.bundleMu.Lock()
	defer c.bundleMu.Unlock()
	now := c.now()
	if c.bundle != nil && now.Sub(c.bundleAt) < age {
		return c.bundle, c.roots, nil
	}
	data, err := c.readBundle(ctx)
	var roots []*x509.Certificate
	if err == nil {
		if roots, err = parseCerts(data); err == nil && len(roots) == 0 {
			err = errors.New("it holds no certificate")
		}
	}
	if err != nil {
		err = fmt.Errorf("%w: trust bundle %s %s/%s key %s: %w", ca.ErrUnavailable,
			c.opts.BundleKind, c.opts.BundleNamespace, c.opts.BundleName, c.opts.BundleKey, err)
		if c.bundle != nil {
			ctrl.LoggerFrom(ctx).Error(err, "keeping the trust bundle read before")
			c.bundleAt = now
			return c.bundle, c.roots, nil
		}
		return nil, nil, err
	}
	c.bundle, c.roots, c.bundleAt = data, roots, now
	return data, roots, nil
}

func (c *CA) readBundle(ctx context.Context) ([]byte, error) {
	k := client.ObjectKey{Namespace: c.opts.BundleNamespace, Name: c.opts.BundleName}
	if c.opts.BundleKind == BundleFromConfigMap {
		var cm corev1.ConfigMap
		if err := c.client.Get(ctx, k, &cm); err != nil {
			return nil, err
		}
		if v, ok := cm.Data[c.opts.BundleKey]; ok {
			return []byte(v), nil
		}
		return cm.BinaryData[c.opts.BundleKey], nil
	}
	var s corev1.Secret
	if err := c.client.Get(ctx, k, &s); err != nil {
		return nil, err
	}
	return s.Data[c.opts.BundleKey], nil
}

func key(o client.Object) string { return o.GetNamespace() + "/" + o.GetName() }
