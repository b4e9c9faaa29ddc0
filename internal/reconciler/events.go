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

package reconciler

import (
	"context"
	"errors"
	"fmt"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/fluxcd/pkg/runtime/conditions"
	"github.com/fluxcd/pkg/runtime/events"
	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Events records the events of one controller, with the policy its typed
// errors carry.
type Events struct {
	// Recorder records the events.
	Recorder events.Recorder
	// Action is the action of every event of the controller.
	Action string
	// Release, when set, is the HelmRelease the objects recorded on belong
	// to. A Warning is recorded on it too, with the same reason, message
	// and metadata, through the same recorder: `flux events --for
	// HelmRelease/<name>` and `kubectl describe helmrelease` show it, and
	// notification-controller receives it with the HelmRelease as involved
	// object. Normal events stay on credo's objects.
	Release *helmv2.HelmRelease
}

// Record records an event on obj with metadata as its annotations, and a
// Warning on the Release too. An event of type EventTypeNone is not
// recorded.
func (e Events) Record(obj client.Object, metadata map[string]string, eventType, reason, message string) {
	if eventType == EventTypeNone || e.Recorder == nil {
		return
	}
	e.Recorder.AnnotatedEventf(obj, nil, metadata, eventType, reason, e.Action, "%s", message)
	if eventType == corev1.EventTypeWarning && e.Release != nil {
		e.Recorder.AnnotatedEventf(e.Release, nil, metadata, eventType, reason, e.Action, "%s", message)
	}
}

// Warn records a Warning on obj and on the Release. The caller records it
// once per occurrence (a repair, a new password), never on every reconcile.
func (e Events) Warn(obj client.Object, metadata map[string]string, reason, format string, args ...any) {
	e.Record(obj, metadata, corev1.EventTypeWarning, reason, fmt.Sprintf(format, args...))
}

// Fail marks the negative-polarity condition condType True with the reason
// and message of err, a typed error, and records the event err's policy
// asks for (a Warning on the Release too) when the condition is new or its
// reason changed (a transition).
// It returns err.
func (e Events) Fail(obj conditions.Setter, condType string, err error, metadata map[string]string) error {
	reason, msg := ReasonOf(err), err.Error()
	if !conditions.IsTrue(obj, condType) || conditions.GetReason(obj, condType) != reason {
		e.Record(obj, metadata, PolicyOf(err).Event, reason, msg)
	}
	conditions.MarkTrue(obj, condType, reason, "%s", msg)
	return err
}

// logPolicy logs err when its policy asks for it: at error level when its
// event is a Warning, else at info level.
func logPolicy(ctx context.Context, err error) {
	if err == nil {
		return
	}
	p := PolicyOf(err)
	if !p.Log {
		return
	}
	log := ctrl.LoggerFrom(ctx)
	var w *Waiting
	var st *Stalling
	msg := "reconciliation failed"
	switch {
	case errors.As(err, &st):
		msg = "reconciliation stalled"
	case errors.As(err, &w):
		msg = "reconciliation waiting"
	}
	if p.Event == corev1.EventTypeWarning {
		log.Error(err, msg, "reason", ReasonOf(err))
		return
	}
	log.Info(msg, "reason", ReasonOf(err), "message", err.Error())
}
