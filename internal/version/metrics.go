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

package version

import "github.com/prometheus/client_golang/prometheus"

// BuildInfoMetric is the name of the gauge Collector serves.
const BuildInfoMetric = "credo_build_info"

// Collector returns the credo_build_info gauge of the running binary:
// always 1, its labels version, commit and goversion are Get's. Which
// release runs where is then a query:
//
//	count by (version) (credo_build_info)
func Collector() prometheus.Collector {
	return collector(Get())
}

func collector(i Info) prometheus.Collector {
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
