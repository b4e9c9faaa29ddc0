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

package account

import (
	"errors"
	"testing"

	. "github.com/onsi/gomega"

	credv1 "github.com/credo-dev/credo/api/credentials/v1alpha1"
	"github.com/credo-dev/credo/internal/verifier"
)

func TestFormatOf(t *testing.T) {
	tests := []struct {
		name   string
		format credv1.Format
		owner  credv1.AccountOwner
		// plaintext is spec.plaintext.
		plaintext *credv1.PlaintextDelivery
		want      string // the format's name, or "" for a refusal
		reason    string
	}{
		{name: "a built-in name resolves", format: credv1.Format{Name: verifier.SCRAMSHA256}, want: verifier.SCRAMSHA256},
		{name: "a tenant account may be plaintext", format: credv1.Format{Name: verifier.Plain}, owner: credv1.OwnerTenant, want: verifier.Plain},
		{name: "a platform account is plaintext only with its delivery", format: credv1.Format{Name: verifier.Plain}, owner: credv1.OwnerPlatform,
			reason: credv1.PlatformPlaintextReason},
		{name: "a platform account that declares its delivery may be plaintext", format: credv1.Format{Name: verifier.Plain}, owner: credv1.OwnerPlatform,
			plaintext: &credv1.PlaintextDelivery{}, want: verifier.Plain},
		{name: "an unknown name is refused", format: credv1.Format{Name: "md5"}, reason: credv1.UnknownFormatReason},
		{name: "a kind other than BuiltIn is refused", format: credv1.Format{Name: verifier.SHA256Hex, Kind: credv1.FormatWebhook},
			reason: credv1.UnsupportedFormatKindReason},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			acct := &credv1.CredentialAccount{Spec: credv1.CredentialAccountSpec{Format: tt.format, Owner: tt.owner, Plaintext: tt.plaintext}}
			f, err := FormatOf(acct)
			if tt.reason == "" {
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(f.Name()).To(Equal(tt.want))
				return
			}
			var refusal *FormatRefusal
			g.Expect(errors.As(err, &refusal)).To(BeTrue(), "error %v", err)
			g.Expect(refusal.Reason).To(Equal(tt.reason))
			g.Expect(f).To(BeNil())
		})
	}
}

// The Webhook kind is part of the API (WebhookClientConfig shape) and not
// built: the refusal says so, and names the formats that are.
func TestWebhookFormatIsRefusedAsNotBuiltYet(t *testing.T) {
	g := NewWithT(t)
	url := "https://hash.example/verifier"
	acct := &credv1.CredentialAccount{Spec: credv1.CredentialAccountSpec{Format: credv1.Format{
		Name: "custom", Kind: credv1.FormatWebhook,
		Webhook: &credv1.WebhookFormat{ClientConfig: credv1.WebhookClientConfig{URL: &url}},
	}}}
	_, err := FormatOf(acct)
	var refusal *FormatRefusal
	g.Expect(errors.As(err, &refusal)).To(BeTrue(), "error %v", err)
	g.Expect(refusal.Reason).To(Equal(credv1.UnsupportedFormatKindReason))
	g.Expect(err.Error()).To(Equal("format kind Webhook is part of the API but not built yet; " +
		"use kind BuiltIn with one of mysql-native, plaintext, scram-sha-256, sha256-hex"))
}
