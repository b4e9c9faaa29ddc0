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

package manager

import (
	"errors"
	"fmt"
	"os"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/credo-dev/credo/internal/version"
)

// ExitOnVersion prints the binary's version line (internal/version) to
// stdout and ends it with status 0 when --version was given; it returns
// otherwise. Call it right after parsing the flags, before anything checks
// the other flags or needs a kubeconfig.
func (o *Options) ExitOnVersion(controllerName string) {
	if !o.Version {
		return
	}
	if err := version.Print(os.Stdout, controllerName); err != nil {
		fmt.Fprintln(os.Stderr, controllerName+":", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// BuildInfoMetric is the name of the gauge BuildInfo serves.
const BuildInfoMetric = "credo_build_info"

// BuildInfo returns the credo_build_info gauge of build i: always 1, its
// labels version, commit and goversion are i's. Which release runs where is
// then a query:
//
//	count by (version) (credo_build_info)
func BuildInfo(i version.Info) prometheus.Collector {
	g := prometheus.NewGauge(prometheus.GaugeOpts{
		Name: BuildInfoMetric,
		Help: "A metric with a constant '1' value labeled by the version, commit and Go version the credo binary was built with.",
		ConstLabels: prometheus.Labels{
			"version":   i.Version,
			"commit":    i.Commit,
			"goversion": i.GoVersion,
		},
	})
	g.Set(1)
	return g
}

// announceBuild logs the binary's build once, as it starts, and registers
// its credo_build_info gauge with reg. The gauge is the same for the whole
// process: one registered before is kept.
func announceBuild(log logr.Logger, reg prometheus.Registerer, controllerName string) error {
	v := version.Get()
	log.Info("build", "binary", controllerName, "version", v.Version, "commit", v.Commit, "goversion", v.GoVersion)
	var already prometheus.AlreadyRegisteredError
	if err := reg.Register(BuildInfo(v)); err != nil && !errors.As(err, &already) {
		return fmt.Errorf("registering %s: %w", BuildInfoMetric, err)
	}
	return nil
}
