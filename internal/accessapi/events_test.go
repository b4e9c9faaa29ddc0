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

package accessapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	eventv1beta1 "github.com/fluxcd/pkg/apis/event/v1beta1"
	fluxevents "github.com/fluxcd/pkg/runtime/events"
	"github.com/go-logr/logr/testr"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	accessv1 "github.com/credo-dev/credo/api/access/v1alpha1"
	credv1 "github.com/credo-dev/credo/api/credentials/v1alpha1"
	"github.com/credo-dev/credo/internal/accessapi"
	"github.com/credo-dev/credo/internal/verifier"
)

// A refused mint of a platform account is recorded as a Warning on the
// CredentialAccount, naming the requester, with no password or verifier in
// it; a mint of a tenant account records nothing. The recorder is Flux's,
// posting to a receiver that speaks notification-controller's event API.
func TestRefusedMintOfAPlatformAccountIsAWarningOnTheAccount(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	platformSecret := newAccount(t, ns, "ch", "root", verifier.SHA256Hex, credv1.OwnerPlatform)
	newAccount(t, ns, "db", "app", verifier.SHA256Hex, credv1.OwnerTenant)
	received := make(chan eventv1beta1.Event, 8)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var e eventv1beta1.Event
		if json.NewDecoder(r.Body).Decode(&e) == nil {
			received <- e
		}
		w.WriteHeader(http.StatusAccepted)
	}))
	t.Cleanup(srv.Close)
	rec, err := fluxevents.NewRecorder(testr.New(t), srv.URL, "credential-controller", fluxevents.WithScheme(scheme))
	g.Expect(err).NotTo(HaveOccurred())
	ops := &accessapi.Operations{Client: platform, Keys: keys, Events: rec}

	res, err := ops.Mint(ctx, ns, accessv1.AccountRequestSpec{Account: "db"}, "alice")
	g.Expect(err).NotTo(HaveOccurred())
	_, err = ops.Revoke(ctx, ns, accessv1.AccountRequestSpec{Account: "ch"}, "mallory")
	g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "got %v", err)

	var e eventv1beta1.Event
	g.Eventually(received, 10*time.Second).Should(Receive(&e))
	g.Expect(e.Severity).To(Equal(eventv1beta1.EventSeverityError))
	g.Expect(e.Reason).To(Equal(credv1.MintRefusedReason))
	g.Expect(e.InvolvedObject.Kind).To(Equal(credv1.CredentialAccountKind))
	g.Expect(e.InvolvedObject.Name).To(Equal("ch"))
	g.Expect(e.InvolvedObject.Namespace).To(Equal(ns))
	g.Expect(e.Message).To(And(ContainSubstring("revocations"), ContainSubstring("mallory")))
	g.Expect(e.Metadata).To(And(
		HaveKeyWithValue(credv1.EventRequesterKey, "mallory"),
		HaveKeyWithValue(credv1.EventOwnerKey, string(credv1.OwnerPlatform)),
		HaveKeyWithValue(credv1.EventReleaseKey, "ch"),
		HaveKeyWithValue(credv1.EventSecretKey, platformSecret.Name),
	))
	g.Consistently(received, time.Second).ShouldNot(Receive(), "the tenant's mint recorded nothing")

	all := e.Message
	for k, v := range e.Metadata {
		all += k + v
	}
	g.Expect(strings.Contains(all, res.Password)).To(BeFalse())
	g.Expect(strings.Contains(all, string(platformSecret.Data[credv1.PasswordKey]))).To(BeFalse())
}
