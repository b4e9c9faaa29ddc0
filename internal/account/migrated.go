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
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	credv1 "github.com/credo-dev/credo/api/credentials/v1alpha1"
	"github.com/credo-dev/credo/internal/verifier"
)

// The migration (`kubectl credo migrate`, internal/migrate) adopts the
// plaintext passwords a chart rendered into <release>-credentials. It writes
// through this writer like every other password write, and leaves two marks
// on account Secrets, both under the domain of the other keys:
//
//   - <domain>/previously-exposed on a tenant account whose password was
//     carried over (origin Migrated): the password was readable before, and
//     stays marked until a mint or a revocation replaces it (record drops
//     the mark);
//   - <domain>/migrated on a platform account the migration rotated, so
//     that a re-run never rotates it again.
//
// Both values are the time of the write (RFC 3339): nothing derived from a
// password is recorded anywhere.

// domain is the domain of k's keys (NewKeys derives every key from it).
func (k Keys) domain() string { return strings.TrimSuffix(k.Origin, "/origin") }

// PreviouslyExposed is the annotation marking a migrated tenant password as
// previously exposed, until the next mint or revocation.
func (k Keys) PreviouslyExposed() string { return k.domain() + "/previously-exposed" }

// MigratedRotation is the annotation recording that the migration rotated a
// platform account's password, which the tenant could read before.
func (k Keys) MigratedRotation() string { return k.domain() + "/migrated" }

// markMigration sets or drops, in annotations (those of the Secret to write),
// the migration's marks for the operation rec recorded at now: a carried-over
// password is previously exposed, a minted or revoked one no longer is.
func (k Keys) markMigration(annotations map[string]string, rec Record, now time.Time) {
	at := now.UTC().Truncate(time.Second).Format(time.RFC3339)
	switch rec.Origin {
	case credv1.OriginMigrated:
		annotations[k.PreviouslyExposed()] = at
	case credv1.OriginMinted, credv1.OriginRevoked:
		delete(annotations, k.PreviouslyExposed())
	}
	if rec.MigratedRotation {
		annotations[k.MigratedRotation()] = at
	}
}

// StoreMigrated carries password, the plaintext a chart rendered for acct's
// username, into acct's account Secret cur: its verifier in format f, origin
// Migrated, the operation recorded as by, and the previously-exposed mark.
// Like Store, it runs the guard on cur and applies on cur's resourceVersion
// (a forced server-side apply under credo's field manager). Only tenant
// accounts are migrated: a platform account's password is rotated instead
// (NewPassword with Record.MigratedRotation).
func (w *Writer) StoreMigrated(ctx context.Context, acct *credv1.CredentialAccount, cur *corev1.Secret, f verifier.Format, password, by string) (*corev1.Secret, error) {
	if acct.GetOwner() == credv1.OwnerPlatform {
		return nil, fmt.Errorf("Secret %s: a platform account's password is rotated, never carried over", cur.Name)
	}
	stored, err := storedValue(f, acct.Spec.Username, password)
	if err != nil {
		return nil, err
	}
	return w.Store(ctx, acct, cur, stored, Record{Origin: credv1.OriginMigrated, By: by})
}
