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

// Package doctest extracts the shell blocks of the Markdown docs that the
// docs test (tests/e2e, TestDocs) runs against `make dev`'s environment.
//
// A shell block (a fence of sh, bash, shell or console) is preceded by one
// marker, an HTML comment GitHub does not render, on the line before its
// fence:
//
//	<!-- credo:run -->                    run it on make dev
//	<!-- credo:run hide-output -->        run it, never print its output (it prints a password or a token)
//	<!-- credo:run timeout=3m -->         run it with a longer timeout than DefaultTimeout
//	<!-- credo:run exit=2 -->             run it; it succeeds when it exits with 2 (a documented status)
//	<!-- credo:run tty -->                run it at a terminal (a pseudo-terminal), as typed by a reader
//	<!-- credo:needs-cluster -->          not run: needs a real cluster, a host or a service make dev has not
//	<!-- credo:not-run -->                not run: not a command against a cluster (make dev itself, placeholders)
//
// A block runs with its output a pipe, as from a script or an editor's
// pane, unless its marker says tty: a block written for a terminal says so.
//
// An unmarked shell block is an error, so that every new block says which it is.
// A console block's commands are its lines that start with "$ " (and the
// lines continuing them after a trailing backslash); the rest is output, not
// compared. A block of the other languages is a script as a whole.
package doctest

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// DefaultTimeout bounds a block that names no timeout.
const DefaultTimeout = time.Minute

// Marker is what a block's marker says of it.
type Marker string

const (
	// Run marks a block that runs on make dev as written.
	Run Marker = "run"
	// NeedsCluster marks a block that needs what make dev does not have.
	NeedsCluster Marker = "needs-cluster"
	// NotRun marks a block that is not a command against a cluster.
	NotRun Marker = "not-run"
)

// Block is one shell block of a document.
type Block struct {
	// Line is the line of the block's opening fence, from 1.
	Line int
	// Lang is the fence's info string: sh, bash, shell or console.
	Lang string
	// Marker is what the block's marker says.
	Marker Marker
	// HideOutput: the block's output is never printed.
	HideOutput bool
	// Timeout bounds the block's run.
	Timeout time.Duration
	// Exit is the exit status the block succeeds with (0 unless the marker
	// names one).
	Exit int
	// TTY: the block runs at a pseudo-terminal, not a pipe.
	TTY bool
	// Script is what runs: the block, or a console block's commands.
	Script string
}

var shellLangs = map[string]bool{"sh": true, "bash": true, "shell": true, "console": true}

const markerPrefix = "<!-- credo:"

// Parse returns the shell blocks of a Markdown document in document order,
// or an error naming the line of an unmarked block or a malformed marker.
func Parse(r io.Reader) ([]Block, error) {
	var (
		blocks  []Block
		cur     *Block
		body    []string
		marker  string // the marker on the line before, if any
		markAt  int
		fence   string
		lineNum int
	)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for sc.Scan() {
		lineNum++
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		if cur != nil || fence != "" {
			if strings.HasPrefix(trimmed, fence) && strings.Trim(trimmed, "`~") == "" {
				if cur != nil {
					cur.Script = script(cur.Lang, body)
					blocks = append(blocks, *cur)
				}
				cur, body, fence = nil, nil, ""
			} else if cur != nil {
				body = append(body, line)
			}
			continue
		}
		if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
			fence = trimmed[:3]
			lang := strings.Fields(strings.TrimLeft(trimmed, "`~") + " ")
			m := marker
			if markAt != lineNum-1 {
				m = ""
			}
			marker = ""
			if len(lang) == 0 || !shellLangs[lang[0]] {
				if m != "" {
					return nil, fmt.Errorf("line %d: a credo marker before a block that is not sh, bash, shell or console", lineNum)
				}
				continue
			}
			b, err := parseMarker(m)
			if err != nil {
				return nil, fmt.Errorf("line %d: %w", lineNum, err)
			}
			b.Line, b.Lang = lineNum, lang[0]
			cur = &b
			continue
		}
		if strings.HasPrefix(trimmed, markerPrefix) {
			marker, markAt = trimmed, lineNum
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if cur != nil {
		return nil, fmt.Errorf("line %d: the block is not closed", cur.Line)
	}
	return blocks, nil
}

// parseMarker reads a marker comment; "" is an unmarked block.
func parseMarker(m string) (Block, error) {
	if m == "" {
		return Block{}, fmt.Errorf("a shell block without a marker: put <!-- credo:run -->, " +
			"<!-- credo:needs-cluster --> or <!-- credo:not-run --> on the line before its fence (docs/development.md)")
	}
	if !strings.HasSuffix(m, "-->") {
		return Block{}, fmt.Errorf("marker %q: not closed on its line", m)
	}
	fields := strings.Fields(strings.TrimSuffix(strings.TrimPrefix(m, markerPrefix), "-->"))
	if len(fields) == 0 {
		return Block{}, fmt.Errorf("marker %q: names nothing", m)
	}
	b := Block{Marker: Marker(fields[0]), Timeout: DefaultTimeout}
	switch b.Marker {
	case Run:
	case NeedsCluster, NotRun:
		return b, nil // the rest of the comment is free text
	default:
		return Block{}, fmt.Errorf("marker %q: unknown, want run, needs-cluster or not-run", m)
	}
	for _, f := range fields[1:] {
		switch {
		case f == "hide-output":
			b.HideOutput = true
		case f == "tty":
			b.TTY = true
		case strings.HasPrefix(f, "exit="):
			n, err := strconv.Atoi(strings.TrimPrefix(f, "exit="))
			if err != nil || n < 0 || n > 255 {
				return Block{}, fmt.Errorf("marker %q: exit: want a status from 0 to 255", m)
			}
			b.Exit = n
		case strings.HasPrefix(f, "timeout="):
			d, err := time.ParseDuration(strings.TrimPrefix(f, "timeout="))
			if err != nil || d <= 0 {
				return Block{}, fmt.Errorf("marker %q: timeout: want a positive duration", m)
			}
			b.Timeout = d
		default:
			return Block{}, fmt.Errorf("marker %q: unknown option %q", m, f)
		}
	}
	return b, nil
}

// script is what a block runs: a console block's commands, any other
// block as written.
func script(lang string, body []string) string {
	if lang != "console" {
		return strings.Join(body, "\n") + "\n"
	}
	var out []string
	continued := false
	for _, l := range body {
		switch {
		case continued:
			out = append(out, l)
		case strings.HasPrefix(l, "$ "):
			out = append(out, strings.TrimPrefix(l, "$ "))
		default:
			continue
		}
		continued = strings.HasSuffix(l, "\\")
	}
	return strings.Join(out, "\n") + "\n"
}

// Files are the documents the docs test reads, relative to the repository
// root: README.md, then docs/guides/*.md in name order, then
// docs/security.md (whose RBAC checks run as the demo tenant).
func Files(root string) ([]string, error) {
	guides, err := filepath.Glob(filepath.Join(root, "docs", "guides", "*.md"))
	if err != nil {
		return nil, err
	}
	sort.Strings(guides)
	files := []string{"README.md"}
	for _, g := range guides {
		rel, err := filepath.Rel(root, g)
		if err != nil {
			return nil, err
		}
		files = append(files, rel)
	}
	return append(files, filepath.Join("docs", "security.md")), nil
}

// ParseFile parses the document at root/name.
func ParseFile(root, name string) ([]Block, error) {
	f, err := os.Open(filepath.Join(root, name))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	blocks, err := Parse(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return blocks, nil
}
