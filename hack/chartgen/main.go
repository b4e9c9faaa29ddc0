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

// chartgen writes credo's Helm chart, generated from config/, to
// charts/credo (make manifests), removing the files it no longer generates.
//
//	go run ./hack/chartgen [-config config] [-out charts/credo]
package main

import (
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/credo-dev/credo/internal/publish/chart"
)

func main() {
	configDir := flag.String("config", "config", "The config/ directory to generate the chart from.")
	out := flag.String("out", filepath.Join("charts", chart.Name), "The chart's directory, replaced.")
	flag.Parse()
	if err := run(*configDir, *out); err != nil {
		fmt.Fprintln(os.Stderr, "chartgen:", err)
		os.Exit(1)
	}
}

func run(configDir, out string) error {
	files, err := chart.Generate(configDir)
	if err != nil {
		return err
	}
	// Stale files: those under out that Generate no longer returns.
	if err := filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
		if os.IsNotExist(err) {
			return filepath.SkipDir
		}
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(out, p)
		if err != nil {
			return err
		}
		if _, ok := files[filepath.ToSlash(rel)]; !ok {
			return os.Remove(p)
		}
		return nil
	}); err != nil {
		return err
	}
	for name, data := range files {
		p := filepath.Join(out, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			return err
		}
	}
	return removeEmptyDirs(out)
}

// removeEmptyDirs removes the directories under dir left empty.
func removeEmptyDirs(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		sub := filepath.Join(dir, e.Name())
		if err := removeEmptyDirs(sub); err != nil {
			return err
		}
		if left, err := os.ReadDir(sub); err == nil && len(left) == 0 {
			if err := os.Remove(sub); err != nil {
				return err
			}
		}
	}
	return nil
}
