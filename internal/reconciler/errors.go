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

// Package reconciler holds what every credo reconciler shares: the opening
// of Reconcile (Run), typed errors that carry a reason, an event and log
// policy and decide the result, and the deferred summarize-and-patch step
// (Finish, or FinishState for a kind whose Ready is a lifecycle state).
package reconciler

import (
	"errors"
	"fmt"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	corev1 "k8s.io/api/core/v1"
)

// EventTypeNone is the Config.Event of an error that records no event.
const EventTypeNone = "None"

// Config is the event and log policy a typed error carries, so that no
// reconciler decides it on its own. An unset Config is the default of the
// error's type; an error that needs another policy sets its Config.
type Config struct {
	// Event is the type of the event the failure records when it is new:
	// corev1.EventTypeWarning, corev1.EventTypeNormal or EventTypeNone.
	Event string
	// Log logs the error when the reconcile ends: at error level with a
	// Warning event, else at info level. An error returned to the
	// controller is logged by controller-runtime and needs no Log.
	Log bool
}

// Stalling defaults: no retry fixes it and nothing else logs it.
var stallingConfig = Config{Event: corev1.EventTypeWarning, Log: true}

// Waiting defaults: a change elsewhere fixes it; worth a Normal event.
var waitingConfig = Config{Event: corev1.EventTypeNormal}

// Generic defaults: returned to the controller, which logs it.
var genericConfig = Config{Event: corev1.EventTypeWarning}

// PolicyOf returns the event and log policy of err: its Config when it is a
// typed error whose Config is set, the type's default when it is not, and
// a Warning event without a log (the controller logs what is returned to
// it) for any other error.
func PolicyOf(err error) Config {
	_, c := classify(err)
	return c
}

func orDefault(c, def Config) Config {
	if c.Event == "" {
		return def
	}
	return c
}

// Stalling is an error that no retry can fix: bad input, a refused source, a
// collision. The object is marked Stalled and is not requeued; the next
// change of the object or of what it watches reconciles it again.
type Stalling struct {
	// Reason is the condition reason, a constant of the API package.
	Reason string
	// Err says what is wrong. It must hold no secret material.
	Err error
	// Config is the event and log policy; a Warning event and an error log
	// when unset.
	Config
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
	// Config is the event and log policy; a Normal event and no log when
	// unset.
	Config
}

// Warn gives e a Warning event: what it waits for needs someone to act.
func (e *Waiting) Warn() *Waiting {
	e.Config = Config{Event: corev1.EventTypeWarning}
	return e
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
	// Config is the event and log policy; a Warning event and no log of
	// its own when unset.
	Config
}

// NewGeneric returns a Generic error with the reason its condition carries.
func NewGeneric(reason string, err error) *Generic {
	return &Generic{Reason: reason, Err: err}
}

// Error returns the message.
func (e *Generic) Error() string { return e.Err.Error() }

// Unwrap returns the cause.
func (e *Generic) Unwrap() error { return e.Err }

// ReasonOf returns the condition reason a typed error carries, and
// meta.FailedReason for any other error.
func ReasonOf(err error) string {
	r, _ := classify(err)
	return r
}

// classify returns the reason and the policy of err.
func classify(err error) (string, Config) {
	var s *Stalling
	var w *Waiting
	var g *Generic
	switch {
	case errors.As(err, &s):
		return s.Reason, orDefault(s.Config, stallingConfig)
	case errors.As(err, &w):
		return w.Reason, orDefault(w.Config, waitingConfig)
	case errors.As(err, &g):
		return g.Reason, orDefault(g.Config, genericConfig)
	default:
		return meta.FailedReason, genericConfig
	}
}
