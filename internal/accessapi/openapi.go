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
	"maps"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	openapinamer "k8s.io/apiserver/pkg/endpoints/openapi"
	"k8s.io/kube-openapi/pkg/common"
	"k8s.io/kube-openapi/pkg/validation/spec"

	generatedopenapi "k8s.io/apiextensions-apiserver/pkg/generated/openapi"

	accessv1 "github.com/credo-dev/credo/api/access/v1alpha1"
)

// The Go type names of access.credo.dev, as kube-openapi names models that
// do not name themselves.
const (
	typePrefix          = "github.com/credo-dev/credo/api/access/v1alpha1."
	mintType            = typePrefix + "Mint"
	revocationType      = typePrefix + "Revocation"
	requestSpecType     = typePrefix + "AccountRequestSpec"
	mintStatusType      = typePrefix + "MintStatus"
	revocationStatusTyp = typePrefix + "RevocationStatus"
)

// GetOpenAPIDefinitions returns the OpenAPI models of access.credo.dev,
// written by hand, with the meta types (ObjectMeta, Time, Status, ...) as
// k8s.io/apiextensions-apiserver generates them.
func GetOpenAPIDefinitions(ref common.ReferenceCallback) map[string]common.OpenAPIDefinition {
	defs := generatedopenapi.GetOpenAPIDefinitions(ref)
	ours := map[string]common.OpenAPIDefinition{
		mintType: object("Mint generates a new password for a tenant-owned CredentialAccount, stores only its verifier, and returns the password once. Create-only.",
			rootProperties(ref, mintStatusType), []string{"spec"}, metav1.ObjectMeta{}.OpenAPIModelName(), requestSpecType, mintStatusType),
		revocationType: object("Revocation replaces a CredentialAccount's password by the verifier of a value nobody keeps. Create-only.",
			rootProperties(ref, revocationStatusTyp), []string{"spec"}, metav1.ObjectMeta{}.OpenAPIModelName(), requestSpecType, revocationStatusTyp),
		requestSpecType: object("AccountRequestSpec names the account a Mint or Revocation acts on.", map[string]spec.Schema{
			"account":         str("Account is the name of a CredentialAccount in the request's namespace."),
			"resourceVersion": str("ResourceVersion, when set, is the account Secret's resourceVersion the caller expects: the request fails with 409 Conflict if the Secret changed since."),
		}, []string{"account"}),
		mintStatusType: object("MintStatus is the response to a Mint. The password is in it once, and nowhere else.", map[string]spec.Schema{
			"username":        str("Username of the account."),
			"password":        str("Password is the new password, in plaintext. It is not stored anywhere by credo (for verifier formats)."),
			"secretName":      str("SecretName is the account Secret that now holds its verifier."),
			"resourceVersion": str("ResourceVersion is the account Secret's version after the write."),
			"mintedAt":        timeRef(ref, "MintedAt is when."),
		}, nil, metav1.Time{}.OpenAPIModelName()),
		revocationStatusTyp: object("RevocationStatus is the response to a Revocation.", map[string]spec.Schema{
			"secretName":      str("SecretName is the account Secret whose password was replaced."),
			"resourceVersion": str("ResourceVersion is the account Secret's version after the write."),
			"revokedAt":       timeRef(ref, "RevokedAt is when."),
		}, nil, metav1.Time{}.OpenAPIModelName()),
	}
	maps.Copy(defs, ours)
	maps.Copy(defs, joinTokenDefinitions(ref))
	maps.Copy(defs, accountDefinitions(ref))
	return defs
}

// definitionNamer names access.credo.dev's models
// dev.credo.access.v1alpha1.<Kind> and tags the two kinds with their
// group, version and kind, which server-side apply's type converter needs;
// every other model is named by the scheme's namer.
func definitionNamer() func(string) (string, spec.Extensions) {
	namer := openapinamer.NewDefinitionNamer(Scheme)
	kinds := map[string]string{mintType: "Mint", revocationType: "Revocation", joinTokenRequestType: "JoinTokenRequest"}
	maps.Copy(kinds, accountKinds)
	return func(name string) (string, spec.Extensions) {
		short, ok := strings.CutPrefix(name, typePrefix)
		if !ok {
			return namer.GetDefinitionName(name)
		}
		friendly := "dev.credo.access.v1alpha1." + short
		kind, isKind := kinds[name]
		if !isKind {
			return friendly, nil
		}
		return friendly, spec.Extensions{"x-kubernetes-group-version-kind": []any{map[string]any{
			"group": accessv1.GroupVersion.Group, "version": accessv1.GroupVersion.Version, "kind": kind,
		}}}
	}
}

func rootProperties(ref common.ReferenceCallback, statusType string) map[string]spec.Schema {
	return map[string]spec.Schema{
		"apiVersion": str("APIVersion defines the versioned schema of this representation of an object."),
		"kind":       str("Kind is a string value representing the REST resource this object represents."),
		"metadata":   refTo(ref, metav1.ObjectMeta{}.OpenAPIModelName(), "Standard object's metadata."),
		"spec":       refTo(ref, requestSpecType, "Spec names the account."),
		"status":     refTo(ref, statusType, "Status is the response, filled by the server."),
	}
}

func object(description string, props map[string]spec.Schema, required []string, deps ...string) common.OpenAPIDefinition {
	return common.OpenAPIDefinition{
		Schema: spec.Schema{SchemaProps: spec.SchemaProps{
			Description: description,
			Type:        []string{"object"},
			Properties:  props,
			Required:    required,
		}},
		Dependencies: deps,
	}
}

func str(description string) spec.Schema {
	return spec.Schema{SchemaProps: spec.SchemaProps{Description: description, Type: []string{"string"}, Default: ""}}
}

func refTo(ref common.ReferenceCallback, name, description string) spec.Schema {
	return spec.Schema{SchemaProps: spec.SchemaProps{Description: description, Default: map[string]any{}, Ref: ref(name)}}
}

func timeRef(ref common.ReferenceCallback, description string) spec.Schema {
	return spec.Schema{SchemaProps: spec.SchemaProps{Description: description, Ref: ref(metav1.Time{}.OpenAPIModelName())}}
}
