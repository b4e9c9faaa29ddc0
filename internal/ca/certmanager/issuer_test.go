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
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/credo-dev/credo/tests/testpki"
)

// Issuer names the test issuer answers to, each with its own behaviour.
const (
	issuerSigner      = "signer"       // approves and signs with the root
	issuerChainSigner = "chain-signer" // approves and signs with an intermediate
	issuerDenier      = "denier"       // denies
	issuerFailer      = "failer"       // approves, then fails
	issuerSANAdder    = "san-adder"    // approves and signs with an extra DNS SAN
	issuerKeySwapper  = "key-swapper"  // approves and signs another public key
	issuerSilent      = "silent"       // never answers

	deniedMessage = "workload URIs are not allowed by policy test-policy"
	failedMessage = "the signing backend refused the request"
)

// testPKI is the test issuer's CA: a root and an intermediate under it.
type testPKI struct {
	root, inter *testpki.Cert
	// intermediate and rootPEM are what the tests compare with.
	intermediate *x509.Certificate
	rootPEM      []byte
}

func newTestPKI() (*testPKI, error) {
	notAfter := testpki.NotAfter(time.Now().Add(24 * time.Hour))
	root, err := testpki.NewCA("test issuer root", notAfter)
	if err != nil {
		return nil, err
	}
	inter, err := root.NewIntermediate("test issuer intermediate", notAfter)
	if err != nil {
		return nil, err
	}
	return &testPKI{root: root, inter: inter, intermediate: inter.Cert, rootPEM: root.CertPEM()}, nil
}

// testIssuer plays an external cert-manager issuer: it watches
// CertificateRequests, approves (or denies) them through the status
// subresource, then signs them, as external issuers do.
type testIssuer struct {
	client client.WithWatch
	pki    *testPKI

	mu   sync.Mutex
	seen map[string]map[string]any // namespace/name → spec, as created
}

// run lists and watches CertificateRequests until ctx ends.
func (ti *testIssuer) run(ctx context.Context) {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(CertificateRequestGVK.GroupVersion().WithKind("CertificateRequestList"))
	for ctx.Err() == nil {
		if err := ti.client.List(ctx, list); err != nil {
			time.Sleep(100 * time.Millisecond)
			continue
		}
		for i := range list.Items {
			ti.handle(ctx, &list.Items[i])
		}
		watchList := &unstructured.UnstructuredList{}
		watchList.SetGroupVersionKind(list.GroupVersionKind())
		w, err := ti.client.Watch(ctx, watchList,
			&client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: list.GetResourceVersion()}})
		if err != nil {
			continue
		}
		for ev := range w.ResultChan() {
			if ev.Type != watch.Added {
				continue
			}
			if u, ok := ev.Object.(*unstructured.Unstructured); ok {
				ti.handle(ctx, u)
			}
		}
		w.Stop()
	}
}

// handle answers a new CertificateRequest according to its issuer's name.
func (ti *testIssuer) handle(ctx context.Context, cr *unstructured.Unstructured) {
	if conds, _, _ := unstructured.NestedSlice(cr.Object, "status", "conditions"); len(conds) > 0 {
		return
	}
	spec, _, _ := unstructured.NestedMap(cr.Object, "spec")
	ti.mu.Lock()
	ti.seen[key(cr)] = spec
	ti.mu.Unlock()
	issuer, _, _ := unstructured.NestedString(cr.Object, "spec", "issuerRef", "name")
	switch issuer {
	case issuerSilent:
		return
	case issuerDenier:
		ti.setStatus(ctx, cr, nil,
			condition("Denied", "True", "PolicyDenied", deniedMessage),
			condition("Ready", "False", "Denied", "The CertificateRequest was denied by an approval controller"))
		return
	}
	cr = ti.setStatus(ctx, cr, nil, condition("Approved", "True", "test-approver", "approved by the test"))
	if cr == nil {
		return
	}
	if issuer == issuerFailer {
		ti.setStatus(ctx, cr, nil, condition("Approved", "True", "test-approver", "approved by the test"),
			condition("Ready", "False", "Failed", failedMessage))
		return
	}
	leafPEM, caPEM, err := ti.sign(issuer, spec)
	if err != nil {
		ti.setStatus(ctx, cr, nil, condition("Approved", "True", "test-approver", "approved by the test"),
			condition("Ready", "False", "Failed", err.Error()))
		return
	}
	ti.setStatus(ctx, cr, map[string]any{
		"certificate": base64.StdEncoding.EncodeToString(leafPEM),
		"ca":          base64.StdEncoding.EncodeToString(caPEM),
	}, condition("Approved", "True", "test-approver", "approved by the test"),
		condition("Ready", "True", "Issued", "Certificate fetched from issuer successfully"))
}

// sign signs the CSR of spec as the named issuer behaves.
func (ti *testIssuer) sign(issuer string, spec map[string]any) (leafPEM, caPEM []byte, err error) {
	reqB64, _ := spec["request"].(string)
	csrPEM, err := base64.StdEncoding.DecodeString(reqB64)
	if err != nil {
		return nil, nil, err
	}
	block, _ := pem.Decode(csrPEM)
	if block == nil || block.Type != "CERTIFICATE REQUEST" {
		return nil, nil, fmt.Errorf("spec.request is not a PEM CSR")
	}
	csr, err := x509.ParseCertificateRequest(block.Bytes)
	if err != nil {
		return nil, nil, err
	}
	if err := csr.CheckSignature(); err != nil {
		return nil, nil, err
	}
	durStr, _ := spec["duration"].(string)
	dur, err := time.ParseDuration(durStr)
	if err != nil {
		return nil, nil, err
	}
	now := time.Now()
	parent := ti.pki.root
	opts := []testpki.Option{testpki.PublicKey(csr.PublicKey), testpki.Subject(csr.Subject), testpki.URIs(csr.URIs...),
		testpki.Validity(now, now.Add(dur))}
	switch issuer {
	case issuerChainSigner:
		parent = ti.pki.inter
	case issuerSANAdder:
		opts = append(opts, testpki.Template(func(c *x509.Certificate) { c.DNSNames = []string{"extra.example.org"} }))
	case issuerKeySwapper:
		other, err := testpki.NewKey()
		if err != nil {
			return nil, nil, err
		}
		opts = append(opts, testpki.PublicKey(other.Public()))
	}
	leaf, err := parent.NewLeaf(opts...)
	if err != nil {
		return nil, nil, err
	}
	leafPEM = leaf.CertPEM()
	if issuer == issuerChainSigner {
		leafPEM = append(leafPEM, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ti.pki.intermediate.Raw})...)
	}
	return leafPEM, ti.pki.rootPEM, nil
}

// setStatus writes status through the status subresource; it returns the
// updated object, or nil on failure.
func (ti *testIssuer) setStatus(ctx context.Context, cr *unstructured.Unstructured, fields map[string]any, conds ...map[string]any) *unstructured.Unstructured {
	out := cr.DeepCopy()
	status := map[string]any{}
	for k, v := range fields {
		status[k] = v
	}
	list := make([]any, 0, len(conds))
	for _, c := range conds {
		list = append(list, c)
	}
	status["conditions"] = list
	out.Object["status"] = status
	if err := ti.client.Status().Update(ctx, out); err != nil {
		return nil
	}
	return out
}

func condition(t, status, reason, message string) map[string]any {
	return map[string]any{"type": t, "status": status, "reason": reason, "message": message,
		"lastTransitionTime": time.Now().UTC().Format(time.RFC3339)}
}
