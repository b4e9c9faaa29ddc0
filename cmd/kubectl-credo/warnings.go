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
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
)

// stderr is where the server's warnings are printed; a variable for tests.
var stderr io.Writer = os.Stderr

// warnings receives the Warning headers of the responses (e.g. a mint for
// a suspended HelmRelease): it prints each on stderr as kubectl does, once,
// and keeps them for the command's own output.
type warnings struct {
	mu    sync.Mutex
	texts []string
}

// HandleWarningHeaderWithContext implements rest.WarningHandlerWithContext.
func (w *warnings) HandleWarningHeaderWithContext(_ context.Context, code int, _ string, text string) {
	if code != 299 || text == "" {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, seen := range w.texts {
		if seen == text {
			return
		}
	}
	w.texts = append(w.texts, text)
	_, _ = fmt.Fprintf(stderr, "Warning: %s\n", text)
}

// warningLines is the warnings as lines of a command's human output,
// after a blank line; "" without any.
func warningLines(texts []string) string {
	if len(texts) == 0 {
		return ""
	}
	return "\nWarning: " + strings.Join(texts, "\nWarning: ") + "\n"
}
