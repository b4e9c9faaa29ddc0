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

package accessapi

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/kube-openapi/pkg/common"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

const (
	accountType          = typePrefix + "Account"
	accountListType      = typePrefix + "AccountList"
	accountSpecType      = typePrefix + "AccountSpec"
	accountStatusType    = typePrefix + "AccountStatus"
	accountOperationType = typePrefix + "AccountOperation"
	accountAppliedType   = typePrefix + "AccountApplied"
	accountReadyType     = typePrefix + "AccountReady"
)

// accountKinds are the kinds among the account models, tagged with their
// group, version and kind by definitionNamer.
var accountKinds = map[string]string{accountType: "Account", accountListType: "AccountList"}

// accountDefinitions returns the OpenAPI models of Account and AccountList.
func accountDefinitions(ref common.ReferenceCallback) map[string]common.OpenAPIDefinition {
	objectMeta, listMeta, t := metav1.ObjectMeta{}.OpenAPIModelName(), metav1.ListMeta{}.OpenAPIModelName(), metav1.Time{}.OpenAPIModelName()
	return map[string]common.OpenAPIDefinition{
		accountType: object("Account is a read-only view of a CredentialAccount and its Secret, never its password. "+
			"Its subresources mint and revocation name the account in the URL, and so in kube-apiserver's audit log.",
			map[string]spec.Schema{
				"apiVersion": str("APIVersion defines the versioned schema of this representation of an object."),
				"kind":       str("Kind is a string value representing the REST resource this object represents."),
				"metadata":   refTo(ref, objectMeta, "Standard object's metadata: the CredentialAccount's."),
				"spec":       refTo(ref, accountSpecType, "Spec is what the CredentialAccount declares."),
				"status":     refTo(ref, accountStatusType, "Status is the account Secret's version and record."),
			}, nil, objectMeta, accountSpecType, accountStatusType),
		accountListType: object("AccountList is a list of Accounts.", map[string]spec.Schema{
			"apiVersion": str("APIVersion defines the versioned schema of this representation of an object."),
			"kind":       str("Kind is a string value representing the REST resource this object represents."),
			"metadata":   refTo(ref, listMeta, "Standard list metadata."),
			"items":      arrayOf(ref, accountType, "Items are the accounts."),
		}, []string{"items"}, listMeta, accountType),
		accountSpecType: object("AccountSpec is what the CredentialAccount declares.", map[string]spec.Schema{
			"release":    str("Release is the HelmRelease the account belongs to."),
			"username":   str("Username is the account's username in the engine."),
			"owner":      str("Owner is tenant (minted through this API) or platform (generated and kept by credo)."),
			"format":     str("Format is the name of the format the password is stored in."),
			"formatKind": str("FormatKind is where the verifier is computed: BuiltIn or Webhook."),
			"suspend":    boolean("Suspend is the CredentialAccount's spec.suspend: while set, the controller does not reconcile the account."),
		}, nil),
		accountStatusType: object("AccountStatus is the account Secret as a tenant may see it: name, version and record, never the password.", map[string]spec.Schema{
			"secretName":            str("SecretName is the account Secret."),
			"secretResourceVersion": str("SecretResourceVersion is the account Secret's current resourceVersion: pass it as a Mint's spec.resourceVersion to mint only if nobody changed the account since."),
			"origin":                str("Origin of the current password: NotIssued, Migrated, Minted, Revoked or Generated."),
			"lastChange":            timeRef(ref, "LastChange is when the password last changed."),
			"history":               arrayOf(ref, accountOperationType, "History holds the last operations, newest last."),
			"applied":               refTo(ref, accountAppliedType, "Applied is the CredentialAccount's Applied condition: whether the engine is known to use the current password."),
			"ready":                 refTo(ref, accountReadyType, "Ready is the CredentialAccount's Ready condition: whether its Secret is in place and delivered, and if not, why."),
		}, nil, t, accountOperationType, accountAppliedType, accountReadyType),
		accountReadyType: object("AccountReady is the CredentialAccount's Ready condition.", map[string]spec.Schema{
			"status":  str("Status is True, False or Unknown."),
			"reason":  str("Reason is the condition's reason, e.g. Succeeded, ReleaseSuspended."),
			"message": str("Message says what is in place, or what is wrong and what to do."),
		}, []string{"status", "reason"}),
		accountAppliedType: object("AccountApplied says whether the engine is known to use the account's current password: the CredentialAccount's Applied condition.", map[string]spec.Schema{
			"status":  str("Status is True, False or Unknown."),
			"reason":  str("Reason is the condition's reason, e.g. ReleaseReconciled, RolePending, EngineNotObserved."),
			"message": str("Message names the consumers and the change of the password it reflects."),
		}, []string{"status", "reason"}),
		accountOperationType: object("AccountOperation is one entry of an account's history. It never holds a password.", map[string]spec.Schema{
			"operation": str("Operation is the origin it left: NotIssued, Minted, Revoked, Generated, Migrated."),
			"at":        timeRef(ref, "At is when."),
			"by":        str("By is who, as kube-apiserver authenticated them, or the controller."),
		}, []string{"operation", "at", "by"}, t),
	}
}

func arrayOf(ref common.ReferenceCallback, name, description string) spec.Schema {
	return spec.Schema{
		SchemaProps: spec.SchemaProps{
			Description: description,
			Type:        []string{"array"},
			Items:       &spec.SchemaOrArray{Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Default: map[string]any{}, Ref: ref(name)}}},
		},
		VendorExtensible: spec.VendorExtensible{Extensions: spec.Extensions{"x-kubernetes-list-type": "atomic"}},
	}
}

func boolean(description string) spec.Schema {
	return spec.Schema{SchemaProps: spec.SchemaProps{Description: description, Type: []string{"boolean"}, Default: false}}
}
