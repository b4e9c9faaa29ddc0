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

	k8slabels "k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"

	enrollv1 "github.com/credo-dev/credo/api/enrollment/v1alpha1"
	"github.com/credo-dev/credo/internal/caller"
)

// manyArgs is the workload's UUID, then up to 64 label changes.
var manyArgs = argCount{1, 65}

// labelChanges are the labels a relabel sets (key=value) and removes (key-).
type labelChanges struct {
	set    map[string]string
	remove []string
}

// parseLabelChanges reads key=value and key- arguments as kubectl label
// does, refusing an invalid key or value, a key named twice, and anything
// else, before the cluster is contacted.
func parseLabelChanges(args []string) (labelChanges, error) {
	ch := labelChanges{set: map[string]string{}}
	seen := map[string]bool{}
	for _, a := range args {
		var key string
		switch k, v, ok := strings.Cut(a, "="); {
		case ok:
			if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
				return ch, fmt.Errorf("the value of label %q is not valid: %s", k, errs[0])
			}
			key = k
			ch.set[k] = v
		case strings.HasSuffix(a, "-"):
			key = strings.TrimSuffix(a, "-")
			ch.remove = append(ch.remove, key)
		default:
			return ch, fmt.Errorf("%q is neither key=value (set a label) nor key- (remove one)", a)
		}
		if errs := validation.IsQualifiedName(key); len(errs) > 0 {
			return ch, fmt.Errorf("label key %q is not valid: %s", key, errs[0])
		}
		if seen[key] {
			return ch, fmt.Errorf("label %q is named twice", key)
		}
		seen[key] = true
	}
	return ch, nil
}

// patch is the changes as a JSON merge patch of a labels map: each label
// set with its value, each removed as null.
func (ch labelChanges) patch() map[string]any {
	out := make(map[string]any, len(ch.set)+len(ch.remove))
	for k, v := range ch.set {
		out[k] = v
	}
	for _, k := range ch.remove {
		out[k] = nil
	}
	return out
}

// workloadLabel changes a Workload's labels and hostname, naming the caller
// as kube-apiserver authenticates it in spec.changedBy, as
// credo-workload-attributes requires.
//
//	kubectl credo workload label 3f1c2b8e-... role=api zone- --hostname api-1.example.org -n tenant-demo
func workloadLabel(args []string, stdout io.Writer) error {
	cmd := newCommand("workload label", workloadLabelUsage)
	hostname := cmd.fs.String("hostname", "", "the workload's new hostname, a DNS name")
	var changes labelChanges
	cmd.check(func() error {
		var err error
		if changes, err = parseLabelChanges(cmd.fs.Args()[1:]); err != nil {
			return err
		}
		if errs := validation.IsDNS1123Subdomain(strings.ToLower(*hostname)); *hostname != "" && len(errs) > 0 {
			return fmt.Errorf("--hostname %q is not a DNS name: %s", *hostname, errs[0])
		}
		if len(changes.set)+len(changes.remove) == 0 && *hostname == "" {
			return errors.New("nothing to change: name labels (key=value, key-) or --hostname")
		}
		return nil
	})
	return onWorkload(cmd, args, stdout, manyArgs, func(ctx context.Context, c client.Client, wl *enrollv1.Workload) error {
		user, err := caller.Username(ctx, c)
		if err != nil {
			return fmt.Errorf("%w: nobody to record as the author of the relabel", err)
		}
		before, beforeHost := wl.Spec.Labels, wl.Spec.Hostname
		spec := map[string]any{"changedBy": user}
		// A merge patch of the keys changed (null removes one), conditional
		// on the version read, so that a relabel made meanwhile is not
		// undone.
		spec["labels"] = changes.patch()
		if *hostname != "" {
			spec["hostname"] = *hostname
		}
		patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"resourceVersion": wl.ResourceVersion}, "spec": spec})
		if err != nil {
			return err
		}
		if err := c.Patch(ctx, wl, client.RawPatch(types.MergePatchType, patch), client.FieldOwner(fieldManager)); err != nil {
			return fmt.Errorf("relabelling workload %s/%s: %w", wl.Namespace, wl.Name, err)
		}
		return printRelabelled(stdout, wl, user, before, beforeHost)
	})
}

// printRelabelled says what label changed, and when it takes effect.
func printRelabelled(w io.Writer, wl *enrollv1.Workload, user string, before map[string]string, beforeHost string) error {
	ew := &errWriter{w: w}
	ew.printf("workload %s/%s (policy %s) relabelled by %s: labels %s (were %s)", wl.Namespace, wl.Name, wl.Spec.Policy,
		user, k8slabels.FormatLabels(wl.Spec.Labels), k8slabels.FormatLabels(before))
	if wl.Spec.Hostname != beforeHost {
		ew.printf(", hostname %s (was %s)", orDash(wl.Spec.Hostname), orDash(beforeHost))
	}
	ew.printf("\nThe registry answers them once the enrollment-controller has established them within policy %s "+
		"(status.labels; kubectl get workload %s -n %s shows AttributesRefused if the policy does not allow them), "+
		"and the agent gets them with its next certificate.\n", wl.Spec.Policy, wl.Name, wl.Namespace)
	return ew.err
}
