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

package v1alpha1

// WebhookClientConfig says how to reach a webhook, in the shape every
// Kubernetes webhook uses (admissionregistration.k8s.io/v1
// WebhookClientConfig, with the same JSON names), bounded: exactly one of
// url and service, and a caBundle.
// +kubebuilder:validation:XValidation:rule="has(self.url) != has(self.service)",message="exactly one of url or service is required"
type WebhookClientConfig struct {
	// url is where the webhook is served, as https://host[:port][/path]:
	// https only, with a host, without user information, a query or a
	// fragment.
	// +kubebuilder:validation:MinLength=9
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:XValidation:rule="isURL(self) && url(self).getScheme() == 'https' && url(self).getHost() != ''",message="url must be an absolute https:// URL with a host"
	// +kubebuilder:validation:XValidation:rule="!self.contains('?') && !self.contains('#')",message="url may not carry a query or a fragment"
	// +kubebuilder:validation:XValidation:rule="!self.matches('^https://[^/]*@')",message="url may not carry user information"
	// +optional
	URL *string `json:"url,omitempty"`

	// service is a Service of the cluster serving the webhook over https.
	// +optional
	Service *WebhookService `json:"service,omitempty"`

	// caBundle is the PEM bundle verifying the webhook's serving
	// certificate; the system's roots when empty.
	// +kubebuilder:validation:MaxLength=65536
	// +optional
	CABundle []byte `json:"caBundle,omitempty"`
}

// WebhookService is a Service serving a webhook.
type WebhookService struct {
	// namespace of the Service.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +required
	Namespace string `json:"namespace"`

	// name of the Service.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	// +required
	Name string `json:"name"`

	// path is the URL path of requests to the Service, starting with '/'.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:Pattern=`^/`
	// +optional
	Path *string `json:"path,omitempty"`

	// port of the Service. Defaults to 443.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	// +kubebuilder:default=443
	// +optional
	Port *int32 `json:"port,omitempty"`
}

// WebhookSource is an external service deriving the usernames of a
// release's accounts.
type WebhookSource struct {
	// clientConfig says how to reach the webhook.
	// +required
	ClientConfig WebhookClientConfig `json:"clientConfig"`

	// timeoutSeconds bounds a call. Defaults to 10.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=30
	// +optional
	TimeoutSeconds *int32 `json:"timeoutSeconds,omitempty"`
}
