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

package migrate

import (
	"fmt"
	"io"
	"sort"
	"text/tabwriter"
)

// Print writes what a run did (or would do) to w: one line per account of
// the releases migrated, then the releases listed in the report. It prints
// names, actions and reasons only: Result holds nothing else.
func Print(w io.Writer, res *Result, report string) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	_, _ = fmt.Fprintln(tw, "NAMESPACE\tRELEASE\tACCOUNT\tUSERNAME\tOWNER\tACTION\tREASON")
	for _, r := range res.Releases {
		if r.Skip != nil && r.Skip.Reason != WriteFailedReason {
			_, _ = fmt.Fprintf(tw, "%s\t%s\t-\t-\t-\tskip release\t%s\n", r.Namespace, r.Name, r.Skip.Reason)
			continue
		}
		for _, s := range r.Steps {
			_, _ = fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Namespace, r.Name, s.Account, s.Username, s.Owner, s.Action, s.Reason)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	verb := "listed in"
	if !res.Applied {
		verb = "that would be listed in"
	}
	if len(res.Listed) == 0 {
		_, _ = fmt.Fprintf(w, "\nNo skipped releases %s %s.\n", verb, report)
	} else {
		_, _ = fmt.Fprintf(w, "\nSkipped releases %s %s (%d):\n", verb, report, len(res.Listed))
		keys := make([]string, 0, len(res.Listed))
		for k := range res.Listed {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			_, _ = fmt.Fprintf(w, "  %s: %s\n", k, res.Listed[k])
		}
	}
	if !res.Applied {
		_, err := fmt.Fprintln(w, "\nDry run: nothing was written. Run again with --apply to migrate.")
		return err
	}
	return nil
}
