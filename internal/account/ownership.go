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
	"k8s.io/apimachinery/pkg/types"
)

// annotated is what ownership needs of an object: its annotations.
type annotated interface{ GetAnnotations() map[string]string }

// BelongsTo reports whether the Secret o carries the identity of the
// CredentialAccount uid. An empty uid belongs to nothing.
func (k Keys) BelongsTo(o annotated, uid types.UID) bool {
	return uid != "" && o.GetAnnotations()[k.AccountUID] == string(uid)
}

// Claimed reports whether o carries the identity of some account.
func (k Keys) Claimed(o annotated) bool { return o.GetAnnotations()[k.AccountUID] != "" }

// Stamp records on o that it belongs to the CredentialAccount uid.
func (k Keys) Stamp(o interface {
	annotated
	SetAnnotations(map[string]string)
}, uid types.UID) {
	a := o.GetAnnotations()
	if a == nil {
		a = map[string]string{}
	}
	a[k.AccountUID] = string(uid)
	o.SetAnnotations(a)
}
