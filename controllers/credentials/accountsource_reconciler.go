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

package credentials

import (
	fluxcontroller "github.com/fluxcd/pkg/runtime/controller"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/credo-dev/credo/internal/release"
	"github.com/credo-dev/credo/internal/shard"
)

// AccountSourceReconciler generates the CredentialAccounts an AccountSource
// derives from the releases it selects, and deletes the ones it no longer
// derives. Accounts of a release whose values cannot be read are kept.
type AccountSourceReconciler struct {
	client.Client
	// APIReader reads uncached; required: releases' spec.values, which the
	// cache does not hold (ReleaseCacheTransform), are read with it, and
	// when sharded it tells a release that moved to another shard (whose
	// accounts are handed over) from one that is gone (whose accounts are
	// deleted).
	APIReader client.Reader
	// Shard is the part of the releases served (--watch-label-selector).
	// Every shard derives the accounts of its own releases, labelled with
	// their shard; only the shard whose selector matches the AccountSource's
	// own labels writes its status, counting that shard's releases and
	// accounts. The zero Shard serves all.
	Shard shard.Shard
	// SourceNamespaces are the platform's source namespaces, where a
	// chartRef without a namespace looks for its source
	// (--platform-source-namespaces).
	SourceNamespaces []string
	// Limits bound what one source generates for a release and what the
	// generated accounts of a namespace may come to.
	Limits Limits
	// Notices tells a release what the source could not do for it: a
	// Warning on its HelmRelease, once per change. Nil records none.
	Notices *release.Notices
	fluxcontroller.Metrics

	// values are the keys read of releases' spec.values.
	values *releaseValues
}

// Limits bound what AccountSources generate. A limit of zero or less is
// none (Setup puts the defaults in).
type Limits struct {
	// PerRelease is the most accounts one source generates for one
	// release. A release that derives more gets no change at all: none of
	// its new accounts is created, and none of its accounts is changed or
	// deleted, until its values derive no more.
	PerRelease int
	// PerNamespace is the most generated accounts (the CredentialAccounts
	// of the namespace that an AccountSource created) a namespace may come
	// to: a release whose new accounts would take it over gets none of
	// them.
	PerNamespace int
	// PlatformPerNamespace is the most platform accounts (every
	// CredentialAccount of the namespace with owner platform, each keeping
	// a password in the platform namespace) a namespace may come to: a
	// release whose new accounts would take it over gets none of them.
	PlatformPerNamespace int
}
