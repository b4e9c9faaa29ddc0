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

// Command release builds, pushes and keys credo's releases (make release):
//
//	release build --version v0.1.0 --out dist/v0.1.0 --key dist/credo-release.key
//	release push --layout dist/v0.1.0/oci [--to localhost:5000/credo-dev]
//	release export --layout dist/v0.1.0/oci --platform linux/amd64 --tag ghcr.io/credo-dev/credo:e2e --out credo.tar
//	release keygen --out dist/credo-release.key
//
// build needs nothing but the Go toolchain, git and Debian's
// ca-certificates; no container engine, no registry.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/spf13/pflag"

	"github.com/credo-dev/credo/internal/publish"
	"github.com/credo-dev/credo/internal/publish/signing"
)

// KeyPasswordEnv holds the password of an encrypted signing key (the one
// `cosign generate-key-pair` writes asks for it too).
const KeyPasswordEnv = "COSIGN_PASSWORD"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "release:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return errors.New("usage: release build|push|export|keygen [flags]")
	}
	fs := pflag.NewFlagSet("release "+args[0], pflag.ContinueOnError)
	switch args[0] {
	case "build":
		return build(ctx, fs, args[1:])
	case "push":
		return push(ctx, fs, args[1:])
	case "keygen":
		return keygen(fs, args[1:])
	case "export":
		return export(fs, args[1:])
	}
	return fmt.Errorf("unknown command %q: build, push, export or keygen", args[0])
}

func build(ctx context.Context, fs *pflag.FlagSet, args []string) error {
	var (
		o       publish.Options
		keyFile string
	)
	fs.StringVar(&o.Version, "version", "", "the release, v<semver>")
	fs.StringVar(&o.Out, "out", "", "the directory to build the release into (replaced)")
	fs.StringVar(&o.Root, "root", ".", "the checkout to build")
	fs.StringVar(&o.Registry, "registry", publish.DefaultRegistry, "where the artifacts are named to go")
	fs.StringVar(&o.Source, "source", publish.DefaultSource, "the source repository's URL")
	fs.StringSliceVar(&o.Platforms, "platforms", publish.DefaultPlatforms, "platforms to build")
	fs.StringVar(&o.CACertificates, "ca-certificates", publish.DefaultCACertificates, "the CA bundle the image carries")
	fs.StringVar(&keyFile, "key", "", "the signing key (PEM; encrypted with $"+KeyPasswordEnv+" if cosign made it)")
	fs.BoolVar(&o.AllowDirty, "allow-dirty", false, "build a work tree with uncommitted changes")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if o.Version == "" || o.Out == "" || keyFile == "" {
		return errors.New("build needs --version, --out and --key")
	}
	key, err := os.ReadFile(keyFile)
	if err != nil {
		return err
	}
	if o.Signer, err = signing.NewSigner(key, []byte(os.Getenv(KeyPasswordEnv))); err != nil {
		return err
	}
	r, err := publish.Release(ctx, o)
	if err != nil {
		return err
	}
	fmt.Printf("credo %s (commit %s) in %s\n", o.Version, r.Commit, o.Out)
	for _, a := range []publish.Artifact{r.Image, r.Manifests, r.Chart} {
		fmt.Printf("  %s@%s\n", a.Ref, a.Digest)
	}
	fmt.Printf("  signed with the key of %s; SBOMs in %s\n",
		filepath.Join(o.Out, "cosign.pub"), filepath.Join(o.Out, "sbom"))
	return nil
}

func push(ctx context.Context, fs *pflag.FlagSet, args []string) error {
	var dir, from, to string
	fs.StringVar(&dir, "layout", "", "the release's OCI layout (<out>/oci)")
	fs.StringVar(&from, "from", publish.DefaultRegistry, "the registry the release was built for")
	fs.StringVar(&to, "to", "", "push there instead (the same repositories under another registry prefix)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if dir == "" {
		return errors.New("push needs --layout")
	}
	pushed, err := publish.Push(ctx, dir, from, strings.TrimSuffix(to, "/"), remote.WithAuthFromKeychain(authn.DefaultKeychain))
	if err != nil {
		return err
	}
	for _, p := range pushed {
		fmt.Printf("pushed %s@%s\n", p.Ref, p.Digest)
	}
	return nil
}

func keygen(fs *pflag.FlagSet, args []string) error {
	var out string
	fs.StringVar(&out, "out", "", "where to write the new private key (its public key goes beside it, .pub)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if out == "" {
		return errors.New("keygen needs --out")
	}
	if _, err := os.Stat(out); err == nil {
		return fmt.Errorf("%s exists: a release key is never replaced by accident", out)
	}
	key, err := signing.GenerateKey()
	if err != nil {
		return err
	}
	s, err := signing.NewSigner(key, nil)
	if err != nil {
		return err
	}
	pub, err := s.PublicKeyPEM()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o700); err != nil {
		return err
	}
	if err := os.WriteFile(out, key, 0o600); err != nil {
		return err
	}
	pubFile := strings.TrimSuffix(out, filepath.Ext(out)) + ".pub"
	if err := os.WriteFile(pubFile, pub, 0o644); err != nil { //nolint:gosec // a public key
		return err
	}
	fmt.Printf("wrote %s and %s\n", out, pubFile)
	return nil
}

func export(fs *pflag.FlagSet, args []string) error {
	var dir, platform, tag, out string
	fs.StringVar(&dir, "layout", "", "the release's OCI layout (<out>/oci)")
	fs.StringVar(&platform, "platform", "linux/amd64", "the platform's image to export")
	fs.StringVar(&tag, "tag", "", "the tag the tarball names the image by")
	fs.StringVar(&out, "out", "", "the docker save tarball to write")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if dir == "" || tag == "" || out == "" {
		return errors.New("export needs --layout, --tag and --out")
	}
	return publish.Export(dir, platform, tag, out)
}
