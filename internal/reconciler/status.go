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

package reconciler

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// UpdateStatus is the one conditional status write with retry, for a status
// another writer changes concurrently (a token's use count, a workload's
// duplicate record): change edits obj, then obj's status is updated
// conditional on the version obj was read at. On a conflict, obj is read
// again from reader and change applied again, up to backoff.Steps writes in
// all (retry.DefaultRetry, or wait.Backoff{Steps: n} for n at once). change
// returning false writes nothing; an error of change that is a conflict
// (change may write the object itself) also starts over. The last
// conflict, or any other error, is returned as it is; an error reading obj
// again is wrapped.
func UpdateStatus[S any, T interface {
	*S
	client.Object
}](ctx context.Context, c client.Client, reader client.Reader, backoff wait.Backoff, obj T, change func(T) (bool, error)) error {
	key := client.ObjectKeyFromObject(obj)
	again := false
	return retry.RetryOnConflict(backoff, func() error {
		if again {
			// Reset first: a decode into obj leaves fields the answer
			// omits as they were.
			var zero S
			*obj = zero
			if err := reader.Get(ctx, key, obj); err != nil {
				return fmt.Errorf("reading %s again: %w", key.Name, err)
			}
		}
		again = true
		write, err := change(obj)
		if err != nil || !write {
			return err
		}
		return c.Status().Update(ctx, obj)
	})
}
