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

// Package reconciler holds what every credo reconciler shares: typed errors
// that carry a reason and decide the result, and the deferred
// summarize-and-patch step written once.
package reconciler

import (
	"errors"
	"fmt"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
)

// Stalling is an error that no retry can fix: bad input, a refused source, a
// collision. The object is marked Stalled and is not requeued; the next
// change of the object or of what it watches reconciles it again.
type Stalling struct {
	// Reason is the condition reason, a constant of the API package.
	Reason string
	// Err says what is wrong. It must hold no secret material.
	Err error
}

// Error returns the message.
func (e *Stalling) Error() string { return e.Err.Error() }

// Unwrap returns the cause.
func (e *Stalling) Unwrap() error { return e.Err }

// NewStalling returns a Stalling error with a formatted message.
func NewStalling(reason, format string, args ...any) *Stalling {
	return &Stalling{Reason: reason, Err: fmt.Errorf(format, args...)}
}

// Waiting is an error that a change elsewhere will fix: a source not yet
// created, a release not yet installed. The object stays Reconciling, no
// error is logged, and it is requeued only after RequeueAfter when that is
// set; otherwise the watch that will see the change reconciles it again.
type Waiting struct {
	// Reason is the condition reason, a constant of the API package.
	Reason string
	// Err says what is awaited.
	Err error
	// RequeueAfter, when non-zero, requeues the object.
	RequeueAfter time.Duration
}

// Error returns the message.
func (e *Waiting) Error() string { return e.Err.Error() }

// Unwrap returns the cause.
func (e *Waiting) Unwrap() error { return e.Err }

// NewWaiting returns a Waiting error with a formatted message.
func NewWaiting(reason, format string, args ...any) *Waiting {
	return &Waiting{Reason: reason, Err: fmt.Errorf(format, args...)}
}

// Generic is an error that a retry may fix (an API server refusing a
// write), with the reason its condition carries. It is returned to the
// controller for a retry with backoff.
type Generic struct {
	// Reason is the condition reason, a constant of the API package.
	Reason string
	// Err is the cause.
	Err error
}

// Error returns the message.
func (e *Generic) Error() string { return e.Err.Error() }

// Unwrap returns the cause.
func (e *Generic) Unwrap() error { return e.Err }

// ReasonOf returns the condition reason a typed error carries, and
// meta.FailedReason for any other error.
func ReasonOf(err error) string {
	var s *Stalling
	var w *Waiting
	var g *Generic
	switch {
	case errors.As(err, &s):
		return s.Reason
	case errors.As(err, &w):
		return w.Reason
	case errors.As(err, &g):
		return g.Reason
	default:
		return meta.FailedReason
	}
}
