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

package helmrecord

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
)

// MaxSize bounds what is read of a release record once decompressed: a
// chart's manifests and values, far below it in practice.
const MaxSize = 64 << 20

// gzipMagic starts a gzipped record, as Helm's driver tells one.
var gzipMagic = []byte{0x1f, 0x8b, 0x08}

// Decode decodes a record's data.release: base64 of the release as JSON,
// gzipped (a record written before Helm compressed them is read as it is).
// A record larger than MaxSize once decompressed is refused.
func Decode(data []byte) (*Release, error) {
	raw, err := base64.StdEncoding.DecodeString(string(data))
	if err != nil {
		return nil, fmt.Errorf("not base64: %w", err)
	}
	var r io.Reader = bytes.NewReader(raw)
	if bytes.HasPrefix(raw, gzipMagic) {
		zr, err := gzip.NewReader(r)
		if err != nil {
			return nil, fmt.Errorf("decompressing: %w", err)
		}
		defer func() { _ = zr.Close() }()
		r = zr
	}
	body, err := io.ReadAll(io.LimitReader(r, MaxSize+1))
	if err != nil {
		return nil, fmt.Errorf("decompressing: %w", err)
	}
	if len(body) > MaxSize {
		return nil, fmt.Errorf("larger than %d bytes", MaxSize)
	}
	var rls Release
	if err := json.Unmarshal(body, &rls); err != nil {
		return nil, fmt.Errorf("not a release record: %w", err)
	}
	return &rls, nil
}
