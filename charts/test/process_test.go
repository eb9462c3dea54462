// SPDX-License-Identifier: Apache-2.0

package charttest

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestMain removes the programs binary built.
func TestMain(m *testing.M) {
	code := m.Run()
	if built.dir != "" {
		_ = os.RemoveAll(built.dir)
	}
	os.Exit(code)
}

// built holds the repository's programs, each built once per test run.
var built struct {
	sync.Mutex
	dir   string
	paths map[string]string
}

// binary returns the path of one of the repository's programs, built on
// first use: "exporter" (the root package) or "simulator".
func binary(t *testing.T, name string) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the exporter")
	}
	pkg := map[string]string{"exporter": ".", "simulator": "./cmd/global-stability-simulator"}[name]
	built.Lock()
	defer built.Unlock()
	if p, ok := built.paths[name]; ok {
		return p
	}
	if built.dir == "" {
		dir, err := os.MkdirTemp("", "charttest")
		if err != nil {
			t.Fatal(err)
		}
		built.dir, built.paths = dir, map[string]string{}
	}
	out := filepath.Join(built.dir, name)
	cmd := exec.Command("go", "build", "-o", out, pkg)
	cmd.Dir = filepath.Join("..", "..")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, b)
	}
	built.paths[name] = out
	return out
}

// start runs a program until the test ends and returns its output; with
// addr, only once the program accepts connections there, so that nothing
// the test does next races its start-up.
func start(t *testing.T, program string, env []string, addr string, args ...string) *syncBuffer {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, program, args...)
	cmd.Env = env
	var out syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() { cancel(); <-exited })
	if addr == "" {
		return &out
	}
	deadline := time.After(30 * time.Second)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		if conn, err := net.Dial("tcp", addr); err == nil {
			conn.Close()
			return &out
		}
		select {
		case <-exited:
			t.Fatalf("%s %q ended before listening on %s:\n%s", filepath.Base(program), args, addr, &out)
		case <-deadline:
			t.Fatalf("%s %q not listening on %s after 30s:\n%s", filepath.Base(program), args, addr, &out)
		case <-tick.C:
		}
	}
}

// startSimulator runs the API's simulator, accepting keys, and returns its
// base URL once it listens.
func startSimulator(t *testing.T, keys ...string) string {
	t.Helper()
	addr := freeAddr(t)
	startSimulatorAt(t, addr, keys...)
	return "http://" + addr
}

// startSimulatorAt is startSimulator on addr (a rendering names it).
func startSimulatorAt(t *testing.T, addr string, keys ...string) {
	t.Helper()
	args := []string{"--listen-address=" + addr}
	for _, k := range keys {
		args = append(args, "--key="+k)
	}
	start(t, binary(t, "simulator"), nil, addr, args...)
}

// sample scrapes url and returns the value of the sample of the
// unlabelled metric name.
func sample(t *testing.T, url, name string, log fmt.Stringer) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("%s: %v\n%s", url, err, log)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if fields := strings.Fields(sc.Text()); len(fields) == 2 && fields[0] == name {
			return fields[1]
		}
	}
	t.Fatalf("%s has no sample %s\n%s", url, name, log)
	return ""
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// syncBuffer is a bytes.Buffer that a running program writes while the
// test reads it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestSkipsWithoutTools: without helm, kustomize or prometheus (and not in
// CI), every test here passes or skips, none fails; else a chart bug and
// a missing tool would look alike. The package's own test binary runs
// again with go alone on PATH, then with each chart tool alone.
func TestSkipsWithoutTools(t *testing.T) {
	if os.Getenv("CHARTTEST_TOOLS_HIDDEN") != "" {
		t.Skip("this is the run without tools")
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Fatal(err)
	}
	modcache, err := exec.Command(goCmd, "env", "GOMODCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	env := []string{"CHARTTEST_TOOLS_HIDDEN=1", "GOPATH=" + t.TempDir(), "GOMODCACHE=" + strings.TrimSpace(string(modcache))}
	for _, e := range os.Environ() {
		if name, _, _ := strings.Cut(e, "="); !slices.Contains([]string{"PATH", "GOPATH", "GOMODCACHE", "CI"}, name) {
			env = append(env, e)
		}
	}
	for _, only := range []string{"go", "helm", "kustomize"} {
		bin := t.TempDir()
		for _, name := range slices.Compact([]string{"go", only}) {
			p, err := filepath.EvalSymlinks(tool(t, name))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(p, filepath.Join(bin, name)); err != nil {
				t.Fatal(err)
			}
		}
		cmd := exec.Command(os.Args[0], "-test.count=1", fmt.Sprintf("-test.short=%v", testing.Short()))
		cmd.Env = append(env, "PATH="+bin)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("with %s alone on PATH: %v\n%s", only, err, out)
		}
	}
}
