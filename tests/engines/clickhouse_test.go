//go:build engines

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

package engines

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/credo-dev/credo/internal/verifier"
	"github.com/credo-dev/credo/tests/testenv"
)

// httpClient keeps no idle connections: ClickHouse waits for open ones when
// it shuts down.
var httpClient = &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: time.Minute}

// clickhouse is a ClickHouse server started by a test.
type clickhouse struct {
	tcpPort, httpPort int
	env               []string
}

const clickhouseConfig = `<?xml version="1.0"?>
<yandex>
    <logger>
        <level>information</level>
        <log>{{dir}}/clickhouse-server.log</log>
        <errorlog>{{dir}}/clickhouse-server.err.log</errorlog>
        <console>0</console>
    </logger>
    <listen_host>127.0.0.1</listen_host>
    <tcp_port>{{tcp}}</tcp_port>
    <http_port>{{http}}</http_port>
    <path>{{dir}}/data/</path>
    <tmp_path>{{dir}}/tmp/</tmp_path>
    <user_files_path>{{dir}}/user_files/</user_files_path>
    <format_schema_path>{{dir}}/format_schemas/</format_schema_path>
    <users_config>{{dir}}/users.xml</users_config>
    <default_profile>default</default_profile>
    <default_database>default</default_database>
    <mark_cache_size>67108864</mark_cache_size>
    <uncompressed_cache_size>67108864</uncompressed_cache_size>
    <max_concurrent_queries>16</max_concurrent_queries>
</yandex>
`

// usersXML lists one user per entry of hashes, keyed by user name, each with
// its password_sha256_hex, reachable from 127.0.0.1 only.
func usersXML(names []string, hashes map[string]string) string {
	var b strings.Builder
	b.WriteString("<?xml version=\"1.0\"?>\n<yandex>\n    <profiles><default/></profiles>\n    <quotas><default/></quotas>\n    <users>\n")
	for _, n := range names {
		fmt.Fprintf(&b, "        <%s>\n            <password_sha256_hex>%s</password_sha256_hex>\n"+
			"            <networks><ip>127.0.0.1</ip></networks>\n            <profile>default</profile>\n"+
			"            <quota>default</quota>\n        </%s>\n", n, hashes[n], n)
	}
	b.WriteString("    </users>\n</yandex>\n")
	return b.String()
}

func clickhouseServer() string {
	if p, err := exec.LookPath("clickhouse-server"); err == nil {
		return p
	}
	return "/usr/sbin/clickhouse-server"
}

// startClickHouse writes config.xml and users.xml (ClickHouse 18.16 keeps its
// users nowhere else) and starts the server.
func startClickHouse(t *testing.T, names []string, hashes map[string]string) *clickhouse {
	t.Helper()
	dir := serverDir(t)
	c := &clickhouse{tcpPort: testenv.FreePort(t), httpPort: testenv.FreePort(t), env: cleanEnv([]string{"CLICKHOUSE"})}
	cfg := strings.NewReplacer("{{dir}}", dir, "{{tcp}}", strconv.Itoa(c.tcpPort), "{{http}}", strconv.Itoa(c.httpPort)).
		Replace(clickhouseConfig)
	for name, content := range map[string]string{"config.xml": cfg, "users.xml": usersXML(names, hashes)} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	srv := startServer(t, "clickhouse-server", filepath.Join(dir, "clickhouse-server.out"), syscall.SIGTERM,
		clickhouseServer(), "--config-file="+filepath.Join(dir, "config.xml"))
	srv.log = filepath.Join(dir, "clickhouse-server.err.log")
	srv.waitReady(t, 2*time.Minute, func() error {
		resp, err := httpClient.Get(fmt.Sprintf("http://127.0.0.1:%d/ping", c.httpPort))
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK || strings.TrimSpace(string(body)) != "Ok." {
			return fmt.Errorf("ping: %s", resp.Status)
		}
		return nil
	})
	return c
}

// login runs clickhouse-client over the native TCP protocol.
func (c *clickhouse) login(userName, password string) result {
	return runCmd(c.env, "", false, time.Minute, "clickhouse-client", "--host=127.0.0.1",
		"--port="+strconv.Itoa(c.tcpPort), "--user="+userName, "--password="+password, "--query=SELECT 1")
}

// loginHTTP queries the HTTP interface with basic authentication.
func (c *clickhouse) loginHTTP(userName, password string) result {
	req, err := http.NewRequest(http.MethodGet, fmt.Sprintf("http://127.0.0.1:%d/?query=SELECT%%201", c.httpPort), nil)
	if err != nil {
		return result{err: err}
	}
	req.SetBasicAuth(userName, password)
	resp, err := httpClient.Do(req)
	if err != nil {
		return result{err: err}
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return result{stderr: string(body), err: fmt.Errorf("HTTP %s", resp.Status)}
	}
	return result{stdout: string(body)}
}

func TestClickHouse(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	sec := &secrets{}
	sha, err := verifier.Lookup(verifier.SHA256Hex)
	g.Expect(err).NotTo(HaveOccurred())
	cases := credCases(t)
	name := func(i int) string { return fmt.Sprintf("c%02d", i) }
	names := make([]string, len(cases))
	hashes := map[string]string{}
	for i, c := range cases {
		v, err := sha.Verifier(name(i), c.password)
		g.Expect(err).NotTo(HaveOccurred(), c.name)
		g.Expect(v).To(MatchRegexp(`^[0-9a-f]{64}$`), c.name)
		sec.add(c.password, v)
		names[i] = name(i)
		hashes[name(i)] = v
	}
	ch := startClickHouse(t, names, hashes)

	for _, proto := range []struct {
		name  string
		login func(user, password string) result
		// denied is how a wrong password is reported.
		denied string
	}{
		{"native-client", ch.login, "Wrong password"},
		{"http-basic-auth", ch.loginHTTP, "Wrong password"},
	} {
		t.Run(proto.name, func(t *testing.T) {
			g := NewWithT(t)
			right := each(len(cases), func(i int) result { return proto.login(name(i), cases[i].password) })
			wrong := each(len(cases), func(i int) result { return proto.login(name(i), cases[i].password+"x") })
			// ClickHouse hashes the bytes it receives: no SASLprep.
			twin := each(len(cases), func(i int) result {
				if cases[i].twin == "" {
					return result{err: fmt.Errorf("no twin")}
				}
				sec.add(cases[i].twin)
				return proto.login(name(i), cases[i].twin)
			})
			for i, c := range cases {
				r := right[i]
				g.Expect(r.ok()).To(BeTrue(), "case %s: login with the right password failed: %v %s", c.name, r.err, sec.scrub(r.stderr))
				g.Expect(strings.TrimSpace(r.stdout)).To(Equal("1"), c.name)
				r = wrong[i]
				g.Expect(r.ok()).To(BeFalse(), "case %s: login with a wrong password succeeded", c.name)
				g.Expect(r.stderr).To(ContainSubstring(proto.denied), c.name)
				g.Expect(twin[i].ok()).To(BeFalse(), "case %s: the SASLprep twin logged in to ClickHouse", c.name)
			}
		})
	}
}
