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

import credv1 "github.com/credo-dev/credo/api/credentials/v1alpha1"

// EventMetadata is the metadata of every event recorded on acct, by the
// credential-controller and by the access API: the release, the username,
// the account Secret and the owner, plus extra key-value pairs. No value is
// ever a password or a verifier.
func EventMetadata(acct *credv1.CredentialAccount, extra ...string) map[string]string {
	md := map[string]string{
		credv1.EventReleaseKey:  acct.Spec.Release,
		credv1.EventUsernameKey: acct.Spec.Username,
		credv1.EventSecretKey:   acct.SecretName(),
		credv1.EventOwnerKey:    string(acct.GetOwner()),
	}
	for i := 0; i+1 < len(extra); i += 2 {
		md[extra[i]] = extra[i+1]
	}
	return md
}
