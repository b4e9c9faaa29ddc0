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
	"errors"
	"fmt"
	"testing"

	. "github.com/onsi/gomega"

	"github.com/credo-dev/credo/internal/migrate"
)

func TestExitCode(t *testing.T) {
	g := NewWithT(t)
	g.Expect(exitCode(errors.New("any failure"))).To(Equal(1))
	g.Expect(exitCode(fmt.Errorf("wrapped: %w", &migrate.SkippedError{Listed: 1}))).To(Equal(2),
		"releases left skipped by migrate exit with 2")
}
