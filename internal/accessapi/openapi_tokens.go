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
	joinTokenRequestType       = typePrefix + "JoinTokenRequest"
	joinTokenRequestSpecType   = typePrefix + "JoinTokenRequestSpec"
	joinTokenRequestStatusType = typePrefix + "JoinTokenRequestStatus"
)

// joinTokenDefinitions returns the OpenAPI models of JoinTokenRequest.
func joinTokenDefinitions(ref common.ReferenceCallback) map[string]common.OpenAPIDefinition {
	duration := metav1.Duration{}.OpenAPIModelName()
	return map[string]common.OpenAPIDefinition{
		joinTokenRequestType: object("JoinTokenRequest mints a join token from an EnrollmentPolicy and returns it once. Create-only.",
			map[string]spec.Schema{
				"apiVersion": str("APIVersion defines the versioned schema of this representation of an object."),
				"kind":       str("Kind is a string value representing the REST resource this object represents."),
				"metadata":   refTo(ref, metav1.ObjectMeta{}.OpenAPIModelName(), "Standard object's metadata."),
				"spec":       refTo(ref, joinTokenRequestSpecType, "Spec names the policy."),
				"status":     refTo(ref, joinTokenRequestStatusType, "Status is the response, filled by the server."),
			}, []string{"spec"}, metav1.ObjectMeta{}.OpenAPIModelName(), joinTokenRequestSpecType, joinTokenRequestStatusType),
		joinTokenRequestSpecType: object("JoinTokenRequestSpec asks for a join token of an EnrollmentPolicy.", map[string]spec.Schema{
			"policy":      str("Policy is an EnrollmentPolicy in the request's namespace."),
			"lifetime":    {SchemaProps: spec.SchemaProps{Description: "Lifetime of the token; at most, and by default, the policy's tokenLifetime.", Ref: ref(duration)}},
			"description": str("Description is recorded in the JoinToken."),
		}, []string{"policy"}, duration),
		joinTokenRequestStatusType: object("JoinTokenRequestStatus is the response: the token, once.", map[string]spec.Schema{
			"token":     str("Token is <id>.<secret>. Only a hash of the secret is stored."),
			"id":        str("ID is the token's id: the name of its JoinToken record."),
			"expiresAt": timeRef(ref, "ExpiresAt is when the token stops enrolling."),
		}, nil, metav1.Time{}.OpenAPIModelName()),
	}
}
