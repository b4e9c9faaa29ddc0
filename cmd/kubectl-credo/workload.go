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

package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/spf13/pflag"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	enrollv1 "github.com/credo-dev/credo/api/enrollment/v1alpha1"
	"github.com/credo-dev/credo/internal/caller"
	"github.com/credo-dev/credo/internal/fieldowner"
)

// fieldManager is the field manager of what the plugin writes.
const fieldManager = fieldowner.Plugin

const workloadUsage = `usage:
  kubectl credo workload deny <uuid> --reason text [-n namespace | -A]
  kubectl credo workload undeny <uuid> [-n namespace | -A]
  kubectl credo workload label <uuid> key=value... key-... [--hostname name] [-n namespace | -A]

kubectl credo workload <command> --help shows a command's flags.`

const (
	workloadDenyUsage = `usage: kubectl credo workload deny <uuid> --reason text [-n namespace | -A]

Deny an enrolled workload (spec.denied, with you as its author): its next renewal is refused, and
its current certificate stays valid until its notAfter. The workload is looked up in the namespace
-n names, else the current context's (as kubectl does); -A looks in every namespace.`
	workloadUndenyUsage = `usage: kubectl credo workload undeny <uuid> [-n namespace | -A]

Lift a workload's denial (remove spec.denied): it renews again, within its policy's grace. The
workload is looked up in the namespace -n names, else the current context's (as kubectl does);
-A looks in every namespace.`
	workloadLabelUsage = `usage: kubectl credo workload label <uuid> key=value... key-... [--hostname name] [-n namespace | -A]

Relabel an enrolled workload without re-enrollment: key=value sets a label, key- removes one, and
--hostname changes its hostname (spec.labels, spec.hostname, with you as spec.changedBy). It takes
the verb relabel on the Workload (ClusterRole credo-workload-relabeler, which the platform binds).
The enrollment-controller establishes the change when the workload's policy allows every label
(status.labels; AttributesRefused says why not), and the agent gets it at its next renewal. The
workload is looked up in the namespace -n names, else the current context's (as kubectl does); -A
looks in every namespace.`
)

// workloadCmd dispatches the workload commands.
func workloadCmd(args []string, stdout io.Writer) error {
	return subcommands("workload", workloadUsage, args, stdout, map[string]verb{
		"deny": workloadDeny, "undeny": workloadUndeny, "label": workloadLabel,
	})
}

// workloadDeny sets spec.denied on a Workload, naming the caller as
// kube-apiserver authenticates it.
//
//	kubectl credo workload deny 3f1c2b8e-... --reason "laptop reported stolen" -n tenant-demo
func workloadDeny(args []string, stdout io.Writer) error {
	cmd := newCommand("workload deny", workloadDenyUsage)
	reason := cmd.fs.String("reason", "", "why the workload is denied, at most 1024 characters; required, and told to the refused agent")
	cmd.check(func() error {
		if strings.TrimSpace(*reason) == "" {
			return errors.New("--reason is required: say why the workload is denied (the refused agent is told it)")
		}
		return nil
	})
	return onWorkload(cmd, args, stdout, oneArg, func(ctx context.Context, c client.Client, wl *enrollv1.Workload) error {
		user, err := caller.Username(ctx, c)
		if err != nil {
			return fmt.Errorf("%w: nobody to record as the author of the deny", err)
		}
		previous := wl.Spec.Denied
		previousBy := deniedBy(wl)
		patch, err := json.Marshal(map[string]any{"spec": map[string]any{"denied": enrollv1.WorkloadDenial{Reason: *reason, By: user}}})
		if err != nil {
			return err
		}
		if err := c.Patch(ctx, wl, client.RawPatch(types.MergePatchType, patch), client.FieldOwner(fieldManager)); err != nil {
			return fmt.Errorf("denying workload %s/%s: %w", wl.Namespace, wl.Name, err)
		}
		return printDenied(stdout, wl, previous, previousBy, time.Now())
	})
}

// workloadUndeny removes spec.denied from a Workload.
func workloadUndeny(args []string, stdout io.Writer) error {
	cmd := newCommand("workload undeny", workloadUndenyUsage)
	return onWorkload(cmd, args, stdout, oneArg, func(ctx context.Context, c client.Client, wl *enrollv1.Workload) error {
		previous, previousBy := wl.Spec.Denied, deniedBy(wl)
		patch := client.RawPatch(types.MergePatchType, []byte(`{"spec":{"denied":null}}`))
		if err := c.Patch(ctx, wl, patch, client.FieldOwner(fieldManager)); err != nil {
			return fmt.Errorf("lifting the denial of workload %s/%s: %w", wl.Namespace, wl.Name, err)
		}
		return printUndenied(stdout, wl, previous, previousBy)
	})
}

// onWorkload is the opening of the workload verbs, then the verb: it binds
// -A, refuses -n with -A before contacting the cluster, and runs verb on
// the workload the first argument names (see findWorkload); want counts
// the arguments, that one included.
func onWorkload(cmd *command, args []string, stdout io.Writer, want argCount, verb func(ctx context.Context, c client.Client, wl *enrollv1.Workload) error) error {
	all := bindAllNamespaces(cmd.fs)
	cl := cmd.cluster()
	cmd.check(func() error {
		if *all && !cl.namespaceFromContext() {
			return errors.New("pass -n <namespace> or -A, not both")
		}
		return nil
	})
	return cmd.run(args, stdout, want, func(ctx context.Context, c client.Client, ns string) error {
		wl, err := findWorkload(ctx, c, ns, cl.namespaceFromContext(), *all, cmd.fs.Arg(0))
		if err != nil {
			return err
		}
		return verb(ctx, c, wl)
	})
}

// bindAllNamespaces binds -A, --all-namespaces, as kubectl names it.
func bindAllNamespaces(fs *pflag.FlagSet) *bool {
	return fs.BoolP("all-namespaces", "A", false, "look for the workload in every namespace (its name, a UUID, is unique), if you may list workloads cluster-wide")
}

// findWorkload reads the Workload named uuid: in ns, the namespace -n
// names, else the current context's (fromContext; kubectl's default
// namespace, "default" when the context names none), or, with all, in whichever namespace
// holds it (names are UUIDs, unique across namespaces).
func findWorkload(ctx context.Context, c client.Client, ns string, fromContext, all bool, uuid string) (*enrollv1.Workload, error) {
	if !all {
		var wl enrollv1.Workload
		switch err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: uuid}, &wl); {
		case apierrors.IsNotFound(err) && fromContext:
			return nil, fmt.Errorf("no workload %s in %s, the current context's namespace: pass -n <namespace>, or -A to look in every namespace", uuid, ns)
		case apierrors.IsForbidden(err) && fromContext:
			return nil, fmt.Errorf("reading workload %s in %s, the current context's namespace: pass -n <namespace>, or -A to look in every namespace: %w", uuid, ns, err)
		case apierrors.IsNotFound(err):
			return nil, fmt.Errorf("no workload %s in %s (kubectl get workloads -n %s)", uuid, ns, ns)
		case err != nil:
			return nil, fmt.Errorf("reading workload %s/%s: %w", ns, uuid, err)
		}
		return &wl, nil
	}
	var list enrollv1.WorkloadList
	switch err := c.List(ctx, &list, client.MatchingFields{"metadata.name": uuid}); {
	case apierrors.IsForbidden(err):
		return nil, fmt.Errorf("looking for workload %s in every namespace: you may not list workloads cluster-wide; pass -n <namespace> instead of -A: %w", uuid, err)
	case err != nil:
		return nil, fmt.Errorf("looking for workload %s in every namespace: %w", uuid, err)
	}
	switch len(list.Items) {
	case 0:
		return nil, fmt.Errorf("no workload %s in any namespace (kubectl get workloads -A)", uuid)
	case 1:
		return &list.Items[0], nil
	}
	namespaces := make([]string, 0, len(list.Items))
	for _, wl := range list.Items {
		namespaces = append(namespaces, wl.Namespace)
	}
	return nil, fmt.Errorf("workload %s is in %d namespaces (%s): pass -n <namespace>", uuid, len(namespaces), strings.Join(namespaces, ", "))
}

// deniedBy returns who denied wl, as the record a tenant cannot forge
// says: status.deniedBy, which the enrollment-controller writes (namespace
// admins may write spec.denied, not the status) only when the admission
// policy credo-workload-denials admitted every write of spec.denied, so
// that spec.denied.by names the denial's writer; and only when the Ready
// condition (reason Denied) observed the Workload's current generation, so
// that it is about the denial as read. Otherwise it returns "": the plugin
// cannot tell whether the policy is installed, and spec.denied.by alone is
// whatever a namespace admin wrote there.
func deniedBy(wl *enrollv1.Workload) string {
	d := wl.Spec.Denied
	if d == nil || d.By == "" || wl.Status.DeniedBy != d.By {
		return ""
	}
	ready := apimeta.FindStatusCondition(wl.Status.Conditions, meta.ReadyCondition)
	if ready == nil || ready.Reason != enrollv1.DeniedReason || ready.ObservedGeneration != wl.Generation {
		return ""
	}
	return d.By
}

// notEstablished says that spec.denied.by's name, by, is not the
// established author of the denial.
func notEstablished(by string) string {
	return fmt.Sprintf("Who denied it is not established: spec.denied.by says %q, which names its writer only where the admission policy "+
		"credo-workload-denials admitted it, and the enrollment-controller has not recorded that it did (status.deniedBy; the Ready condition says why).\n", by)
}

// printDenied says what deny did, when it takes effect, and how long the
// workload's current certificate stays valid. The denial's author is the
// caller, as the plugin wrote it; previousBy is the established author of
// the denial it replaces (see deniedBy).
func printDenied(w io.Writer, wl *enrollv1.Workload, previous *enrollv1.WorkloadDenial, previousBy string, now time.Time) error {
	ew := &errWriter{w: w}
	d := wl.Spec.Denied
	if d == nil {
		return fmt.Errorf("workload %s/%s: the API server answered the deny without spec.denied", wl.Namespace, wl.Name)
	}
	ew.printf("workload %s/%s%s denied by %s: %s\n", wl.Namespace, wl.Name, describeWorkload(wl), d.By, d.Reason)
	if previous != nil {
		switch {
		case previousBy != "":
			ew.printf("(it replaces the denial by %s: %s)\n", previousBy, previous.Reason)
		case previous.By != "":
			ew.printf("(it replaces a denial: %s)\n%s", previous.Reason, notEstablished(previous.By))
		default:
			ew.printf("(it replaces a denial: %s)\n", previous.Reason)
		}
	}
	ew.printf("The deny takes effect at the workload's next renewal: the enrollment server refuses it (WorkloadDenied) and credo-agent exits 4.\n")
	switch st := wl.Status; {
	case st.NotAfter == nil:
		ew.printf("The workload has no certificate on record (status.notAfter is empty).\n")
	case now.Before(st.NotAfter.Time):
		ew.printf("Its current certificate (serial %s) stays valid until its notAfter, %s (%s): a deny revokes nothing already issued.\n",
			orDash(st.Serial), st.NotAfter.UTC().Format(time.RFC3339), expiry(st.NotAfter, now))
	default:
		ew.printf("Its certificate (serial %s) expired at %s.\n", orDash(st.Serial), st.NotAfter.UTC().Format(time.RFC3339))
	}
	ew.printf("Lift it with: kubectl credo workload undeny %s -n %s\n", wl.Name, wl.Namespace)
	return ew.err
}

// printUndenied says what undeny did; previousBy is the established author
// of the denial lifted (see deniedBy).
func printUndenied(w io.Writer, wl *enrollv1.Workload, previous *enrollv1.WorkloadDenial, previousBy string) error {
	if previous == nil {
		_, err := fmt.Fprintf(w, "workload %s/%s%s was not denied; nothing changed\n", wl.Namespace, wl.Name, describeWorkload(wl))
		return err
	}
	notAfter := "-"
	if wl.Status.NotAfter != nil {
		notAfter = wl.Status.NotAfter.UTC().Format(time.RFC3339)
	}
	ew := &errWriter{w: w}
	if previousBy != "" {
		ew.printf("workload %s/%s%s is no longer denied (was denied by %s: %s)\n", wl.Namespace, wl.Name, describeWorkload(wl), previousBy, previous.Reason)
	} else {
		ew.printf("workload %s/%s%s is no longer denied (was denied: %s)\n", wl.Namespace, wl.Name, describeWorkload(wl), previous.Reason)
		if previous.By != "" {
			ew.printf("%s", notEstablished(previous.By))
		}
	}
	ew.printf("Its next renewal is accepted again if its certificate (notAfter %s) has not passed its policy's renewal grace; after that, it must enroll again with a join token.\n", notAfter)
	return ew.err
}

// describeWorkload is " (hostname h, policy p)", to recognise the UUID.
func describeWorkload(wl *enrollv1.Workload) string {
	if wl.Spec.Hostname == "" {
		return fmt.Sprintf(" (policy %s)", wl.Spec.Policy)
	}
	return fmt.Sprintf(" (hostname %s, policy %s)", wl.Spec.Hostname, wl.Spec.Policy)
}
