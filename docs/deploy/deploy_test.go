package deploy

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
	"go.yaml.in/yaml/v3"
	corev1 "k8s.io/api/core/v1"
)

var (
	buildOnce sync.Once
	buildDir  string // holds the drover binary built for the flag checks
	buildErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

// droverFlags is the flagLister of the real binary: it builds cmd/drover
// once (a few seconds with a warm build cache) and reads `drover <cmd> -h`.
func droverFlags(cmd string) (map[string]bool, error) {
	buildOnce.Do(func() {
		goBin, err := exec.LookPath("go")
		if err != nil {
			buildErr = fmt.Errorf("the go command is needed to build cmd/drover: %w", err)
			return
		}
		if buildDir, buildErr = os.MkdirTemp("", "deploy-drover"); buildErr != nil {
			return
		}
		out, err := exec.Command(goBin, "build", "-o", filepath.Join(buildDir, "drover"), "../../cmd/drover").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build ./cmd/drover: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		return nil, buildErr
	}
	out, err := exec.Command(filepath.Join(buildDir, "drover"), cmd, "-h").CombinedOutput()
	flags := parseHelpFlags(out)
	if len(flags) == 0 {
		return nil, fmt.Errorf("`drover %s -h` lists no flags (%v): %s", cmd, err, bytes.TrimSpace(out))
	}
	return flags, nil
}

var helpFlag = regexp.MustCompile(`(?m)^  -([^\s=]+)( \S+)?`)

// parseHelpFlags reads the flag list that Go's flag package prints
// ("  -name type" for a flag that takes a value, "  -name" for a boolean).
func parseHelpFlags(help []byte) map[string]bool {
	flags := map[string]bool{}
	for _, sm := range helpFlag.FindAllSubmatch(help, -1) {
		flags[string(sm[1])] = len(sm[2]) > 0
	}
	return flags
}

func TestParseHelpFlags(t *testing.T) {
	help := "Usage of drover eval:\n  -log string\n    \tsummarise\n  -quiet\n    \tno progress output\n  -x int\n    \tone letter\n  -y\tshort bool\n"
	want := map[string]bool{"log": true, "quiet": false, "x": true, "y": false}
	if diff := cmp.Diff(want, parseHelpFlags([]byte(help))); diff != "" {
		t.Errorf("(-want,+got):\n%s", diff)
	}
}

// TestTokenTransport checks the mirror of drover's rule for the bearer
// token (cmd/drover serve.go and dial.go): TLS, or a loopback address.
func TestTokenTransport(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string // in the error; "" for none
	}{
		{"serve token on 0.0.0.0", []string{"serve", "-addr", "0.0.0.0:50051", "-token-file", "/t"}, "refuses to start"},
		{"serve token on a pod IP", []string{"serve", "-addr", "10.0.0.7:50051", "-token-file", "/t"}, "refuses to start"},
		{"serve token with TLS", []string{"serve", "-addr", "0.0.0.0:50051", "-token-file", "/t", "-tls-cert", "/c", "-tls-key", "/k"}, ""},
		{"serve token on 127.0.0.1", []string{"serve", "-addr", "127.0.0.1:50051", "-token-file", "/t"}, ""},
		{"serve token on ::1", []string{"serve", "-addr", "[::1]:50051", "-token-file", "/t"}, ""},
		{"serve token on localhost", []string{"serve", "-addr", "localhost:50051", "-token-file", "/t"}, ""},
		{"serve token on a port alone", []string{"serve", "-addr", ":50051", "-token-file", "/t"}, ""},
		{"serve token on the default", []string{"serve", "-token-file", "/t"}, ""},
		{"serve without token", []string{"serve", "-addr", "0.0.0.0:50051"}, ""},
		{"serve cert without key", []string{"serve", "-addr", "0.0.0.0:50051", "-tls-cert", "/c"}, "go together"},
		{"serve client CA without cert", []string{"serve", "-tls-client-ca", "/ca"}, "go together"},
		{"agent token to a Service", []string{"agent", "-server", "drover.drover-system.svc:50051", "-token-file", "/t"}, "refuses to send the token"},
		{"agent token to a Service with CA", []string{"agent", "-server", "drover.drover-system.svc:50051", "-token-file", "/t", "-tls-ca", "/ca"}, ""},
		{"agent token to loopback", []string{"agent", "-server", "127.0.0.1:50051", "-token-file", "/t"}, ""},
		{"agent token to a dns:/// loopback target", []string{"agent", "-server", "dns:///localhost:50051", "-token-file", "/t"}, ""},
		{"agent token to the default", []string{"agent", "-token-file", "/t"}, ""},
		{"agent client cert without key", []string{"agent", "-tls-ca", "/ca", "-tls-cert", "/c"}, "go together"},
		{"place token off loopback", []string{"place", "-addr", "10.1.2.3:50051", "-token-file", "/t"}, "drover place -token-file without -tls-ca"},
		{"eval is not a client", []string{"eval", "-token-file", "/t"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tokenTransport(droverArgs(tt.args, nil))
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("unexpected: %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("got %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

// TestManifests decodes every manifest strictly and runs every check, with
// the flags of the drover binary built from this tree.
func TestManifests(t *testing.T) {
	ms, err := load(os.DirFS("."))
	if err != nil {
		t.Fatal(err)
	}
	for _, err := range check(ms, droverFlags) {
		t.Error(err)
	}
}

// stubFlags lists the flags the manifests use, so that the mistakes below
// are the only problems whether or not the binary has them yet.
func stubFlags(cmd string) (map[string]bool, error) {
	known := map[string]map[string]bool{
		"serve": {"addr": true, "metrics-addr": true, "extender-addr": true, "log-dir": true, "state-dir": true, "token-file": true, "tls-cert": true, "tls-key": true, "tls-client-ca": true},
		"agent": {"server": true, "node": true, "root": true, "interval": true, "iter-addr": true, "token-file": true, "tls-ca": true, "tls-cert": true, "tls-key": true, "tls-server-name": true},
		"eval":  {"workload": true, "seeds": true, "parallel": true, "quiet": false, "out": true},
	}
	if f, ok := known[cmd]; ok {
		return f, nil
	}
	return nil, errors.New("no such command")
}

// TestManifestsRejectMistakes makes one mistake at a time in a copy of the
// manifests and checks that it is caught, so that a check that can never
// fail does not pass for one that works.
func TestManifestsRejectMistakes(t *testing.T) {
	tests := []struct {
		name      string
		file      string
		old, new  string // old occurs exactly once in file
		rename    string // or: the file's new name
		appendDoc string // or: a document appended to file
		want      string // in one of the errors; "" for none
	}{
		{name: "unchanged", want: ""},
		{name: "unknown field", file: "server.yaml", old: "  replicas: 1", new: "  replica: 1", want: `unknown field "replica"`},
		{name: "miscased field", file: "server.yaml", old: "  replicas: 1", new: "  Replicas: 1", want: `unknown field "Replicas"`},
		{name: "duplicate field", file: "server.yaml", old: "  replicas: 1\n", new: "  replicas: 1\n  replicas: 2\n", want: "already defined"},
		{name: "wrong type", file: "server.yaml", old: "  replicas: 1", new: "  replicas: one", want: "cannot unmarshal string"},
		{name: "unknown kind", file: "server.yaml", appendDoc: "apiVersion: v1\nkind: Pod\nmetadata:\n  name: x\n  namespace: drover-system\n", want: `unknown kind "Pod"`},
		{name: "no limits", file: "agent-daemonset.yaml", old: "            limits:\n              cpu: 200m\n              memory: 128Mi\n", want: "container agent: no cpu limit"},
		{name: "request above limit", file: "agent-daemonset.yaml", old: "cpu: 20m", new: "cpu: 300m", want: "cpu request 300m above its limit 200m"},
		{name: "selector misses template", file: "server.yaml", old: "    matchLabels:\n      app.kubernetes.io/name: drover\n", new: "    matchLabels:\n      app.kubernetes.io/name: drover-server\n", want: "does not select the pod template's labels"},
		{name: "no readiness probe", file: "server.yaml", old: "          readinessProbe:\n            httpGet:\n              path: /healthz\n              port: metrics\n            periodSeconds: 5\n            failureThreshold: 2\n", want: "without a liveness and a readiness probe"},
		{name: "probe on undeclared port", file: "agent-daemonset.yaml", old: "              port: iter\n            initialDelaySeconds", new: "              port: 9466\n            initialDelaySeconds", want: "liveness probe on port 9466"},
		{name: "service target port", file: "server.yaml", old: "targetPort: metrics", new: "targetPort: metric", want: "targets metric"},
		{name: "service selects nothing", file: "server.yaml", old: "  selector:\n    app.kubernetes.io/name: drover\n", new: "  selector:\n    app.kubernetes.io/name: drover-srv\n", want: "selects no Deployment"},
		{name: "second image", file: "eval-job.yaml", old: "image: ghcr.io/drover-sched/drover:latest", new: "image: ghcr.io/drover-sched/drover:v1", want: "more than one image"},
		{name: "unknown flag", file: "eval-job.yaml", old: "            - -quiet", new: "            - -quite", want: "drover eval has no flag -quite"},
		{name: "flag without value", file: "eval-job.yaml", old: "            - -out\n            - /results/shard-$(SHARD)\n", new: "            - -out\n", want: "drover eval -out needs a value"},
		{name: "listen port not declared", file: "server.yaml", old: "            - 0.0.0.0:8888", new: "            - 0.0.0.0:8889", want: "-extender-addr listens on 8889"},
		{name: "extender URL port", file: "scheduler-extender.yaml", old: "drover-system.svc:8888", new: "drover-system.svc:8889", want: "Service drover has no port 8889"},
		{name: "extender URL service", file: "scheduler-extender.yaml", old: "https://drover.drover-system", new: "https://drovr.drover-system", want: "no Service drovr"},
		{name: "extender URL on the gRPC port", file: "scheduler-extender.yaml", old: "drover-system.svc:8888", new: "drover-system.svc:50051", want: "where drover listens with -extender-addr"},
		{name: "extender verb", file: "scheduler-extender.yaml", old: "filterVerb: filter", new: "filterVerb: filters", want: "drover serves filter and prioritize only"},
		{name: "scheduler config field", file: "scheduler-extender.yaml", old: "nodeCacheCapable: false", new: "nodeCacheCapible: false", want: `unknown field "nodeCacheCapible"`},
		{name: "agent server port", file: "agent-daemonset.yaml", old: "- drover.drover-system.svc:50051", new: "- drover.drover-system.svc:9464", want: "where drover listens with -addr"},
		{name: "hostNetwork DNS", file: "agent-daemonset.yaml", old: "      dnsPolicy: ClusterFirstWithHostNet\n", want: "only ClusterFirstWithHostNet resolves it"},
		{name: "secret key", file: "server.yaml", old: "  token: REPLACE", new: "  tokn: REPLACE", want: `has no key "token"`},
		{name: "path off the volumes", file: "server.yaml", old: "/var/lib/drover/log", new: "/data/log", want: "not on any volume mount"},
		{name: "undefined variable", file: "agent-daemonset.yaml", old: "$(NODE_NAME)", new: "$(NODENAME)", want: "refers to $(NODENAME)"},
		{name: "no namespace", file: "eval-job.yaml", old: "  name: drover-eval\n  namespace: drover-system\n", new: "  name: drover-eval\n", want: `namespace "", want "drover-system"`},
		{name: "namespace applied late", file: "00-namespace.yaml", rename: "namespace.yaml", want: "applied before Namespace drover-system"},
		{name: "missing claim", file: "eval-job.yaml", old: "claimName: drover-eval-results", new: "claimName: drover-eval-result", want: `no PersistentVolumeClaim "drover-eval-result"`},
		{name: "not indexed", file: "eval-job.yaml", old: "  completionMode: Indexed\n", want: "completionMode is not Indexed"},
		{name: "shell command", file: "eval-job.yaml", old: "          args:\n            - eval", new: "          command: [sh, -c]\n          args:\n            - eval", want: "the image has no shell"},
		{name: "writable root", file: "eval-job.yaml", old: "readOnlyRootFilesystem: true", new: "readOnlyRootFilesystem: false", want: "readOnlyRootFilesystem is not true"},
		{name: "root user", file: "agent-daemonset.yaml", old: "        runAsNonRoot: true\n", want: "runAsNonRoot is not true"},
		// The bearer token over TLS only (issue 18), and both ends of each
		// connection agreeing on TLS.
		{name: "serve token without TLS", file: "server.yaml", old: "            - -tls-cert\n            - /etc/drover/tls/tls.crt\n            - -tls-key\n            - /etc/drover/tls/tls.key\n", want: "drover serve -token-file without -tls-cert and -tls-key on -addr 0.0.0.0:50051"},
		{name: "listen on a port alone", file: "server.yaml", old: "            - 0.0.0.0:50051\n", new: "            - :50051\n", want: "-addr :50051 binds 127.0.0.1:50051"},
		{name: "serve cert without key", file: "server.yaml", old: "            - -tls-key\n            - /etc/drover/tls/tls.key\n", want: "-tls-cert and -tls-key go together"},
		{name: "agent token without CA", file: "agent-daemonset.yaml", old: "            - -tls-ca\n            - /etc/drover/tls/ca.crt\n", want: "drover agent -token-file without -tls-ca to -server drover.drover-system.svc:50051"},
		{name: "agent CA not projected", file: "agent-daemonset.yaml", old: "                    - key: ca.crt\n                      path: tls/ca.crt\n", new: "                    - key: ca.crt\n                      path: ca.crt\n", want: `has the file "tls/ca.crt"`},
		{name: "TLS secret key", file: "server.yaml", old: "  tls.key: REPLACE", new: "  tls.pem: REPLACE", want: `has no key "tls.key"`},
		{name: "TLS secret missing", file: "agent-daemonset.yaml", old: "                  name: drover-tls\n", new: "                  name: drover-certs\n", want: `no Secret "drover-certs"`},
		{name: "extender over plaintext", file: "scheduler-extender.yaml", old: "urlPrefix: https://drover.drover-system.svc:8888\n        enableHTTPS: true\n", new: "urlPrefix: http://drover.drover-system.svc:8888\n", want: "serves TLS there (-tls-cert), the client speaks plaintext"},
		{name: "extender without CA", file: "scheduler-extender.yaml", old: "          caFile: /etc/kubernetes/drover/ca.crt\n", want: "enableHTTPS without tlsConfig.caFile"},
		{name: "extender insecure", file: "scheduler-extender.yaml", old: "          caFile: /etc/kubernetes/drover/ca.crt\n", new: "          insecure: true\n", want: "tlsConfig.insecure"},
		{name: "mutual TLS without client certificates", file: "server.yaml", old: "            - /etc/drover/tls/tls.key\n", new: "            - /etc/drover/tls/tls.key\n            - -tls-client-ca\n            - /etc/drover/tls/tls.crt\n", want: "requires a client certificate (-tls-client-ca), the client presents none: it needs tlsConfig.certFile"},
	}
	base := fstest.MapFS{}
	names, err := fs.Glob(os.DirFS("."), "*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		base[n] = &fstest.MapFile{Data: b}
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fsys := fstest.MapFS{}
			for n, f := range base {
				fsys[n] = f
			}
			if tt.file != "" {
				f, ok := fsys[tt.file]
				if !ok {
					t.Fatalf("no file %s", tt.file)
				}
				s := string(f.Data)
				switch {
				case tt.rename != "":
					delete(fsys, tt.file)
					fsys[tt.rename] = f
				case tt.appendDoc != "":
					fsys[tt.file] = &fstest.MapFile{Data: []byte(s + "---\n" + tt.appendDoc)}
				default:
					if n := strings.Count(s, tt.old); n != 1 {
						t.Fatalf("%q occurs %d times in %s, want once", tt.old, n, tt.file)
					}
					fsys[tt.file] = &fstest.MapFile{Data: []byte(strings.Replace(s, tt.old, tt.new, 1))}
				}
			}
			var errs []error
			ms, err := load(fsys)
			if err != nil {
				errs = []error{err}
			} else {
				errs = check(ms, stubFlags)
			}
			if tt.want == "" {
				for _, err := range errs {
					t.Errorf("unexpected: %v", err)
				}
				return
			}
			for _, err := range errs {
				if strings.Contains(err.Error(), tt.want) {
					return
				}
			}
			t.Errorf("no error contains %q; got %d:", tt.want, len(errs))
			for _, err := range errs {
				t.Log(err)
			}
		})
	}
}

func TestSplitDocuments(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"one", "a: 1\n", []string{"a: 1\n"}},
		{"two", "a: 1\n---\nb: 2\n", []string{"a: 1\n", "b: 2\n"}},
		{"leading separator and trailing spaces", "---\na: 1\n--- \r\nb: 2", []string{"", "a: 1\n", "b: 2"}},
		{"separator inside a value is not split", "a: |\n  ---x\n", []string{"a: |\n  ---x\n"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, d := range splitDocuments([]byte(tt.in)) {
				got = append(got, string(d))
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want,+got):\n%s", diff)
			}
		})
	}
}

// TestSchedulerConfigMatchesDocs checks that the ConfigMap's scheduler
// configuration is the one docs/kube-scheduler-extender.md explains but
// for the transport (urlPrefix, enableHTTPS, tlsConfig: loopback plaintext
// for the sidecar there, the Service over TLS here), and that the
// transport is the extender entry of the doc's TLS section.
func TestSchedulerConfigMatchesDocs(t *testing.T) {
	doc, err := os.ReadFile("../kube-scheduler-extender.md")
	if err != nil {
		t.Fatal(err)
	}
	var fromDocs *schedulerConfig
	var tlsDocs []extender
	for _, sm := range regexp.MustCompile("(?s)```yaml\n(.*?)```").FindAllSubmatch(doc, -1) {
		switch {
		case fromDocs == nil && bytes.Contains(sm[1], []byte("kind: KubeSchedulerConfiguration")):
			if fromDocs, err = decodeSchedulerConfig(sm[1]); err != nil {
				t.Fatalf("kube-scheduler-extender.md: %v", err)
			}
		case tlsDocs == nil && bytes.Contains(sm[1], []byte("enableHTTPS: true")):
			var v any
			if err := yaml.Unmarshal(sm[1], &v); err != nil {
				t.Fatalf("kube-scheduler-extender.md, TLS example: %v", err)
			}
			if err := decodeStrict(v, &tlsDocs); err != nil {
				t.Fatalf("kube-scheduler-extender.md, TLS example: %v", err)
			}
		}
	}
	if fromDocs == nil {
		t.Fatal("kube-scheduler-extender.md: no yaml block with a KubeSchedulerConfiguration")
	}
	if len(tlsDocs) != 1 {
		t.Fatalf("kube-scheduler-extender.md: %d extenders in the TLS example (a yaml block with enableHTTPS: true), want 1", len(tlsDocs))
	}
	ms, err := load(os.DirFS("."))
	if err != nil {
		t.Fatal(err)
	}
	var here *schedulerConfig
	for _, m := range ms {
		if cm, ok := m.obj.(*corev1.ConfigMap); ok && strings.Contains(cm.Data["config.yaml"], "KubeSchedulerConfiguration") {
			if here, err = decodeSchedulerConfig([]byte(cm.Data["config.yaml"])); err != nil {
				t.Fatalf("%s: %v", m, err)
			}
		}
	}
	if here == nil {
		t.Fatal("no ConfigMap with a KubeSchedulerConfiguration under config.yaml")
	}
	if len(here.Extenders) != 1 {
		t.Fatalf("%d extenders in the ConfigMap, want 1", len(here.Extenders))
	}
	type transport struct {
		URLPrefix   string
		EnableHTTPS bool
		TLSConfig   *extenderTLSConfig
	}
	e := here.Extenders[0]
	want := transport{tlsDocs[0].URLPrefix, tlsDocs[0].EnableHTTPS, tlsDocs[0].TLSConfig}
	if diff := cmp.Diff(want, transport{e.URLPrefix, e.EnableHTTPS, e.TLSConfig}); diff != "" {
		t.Errorf("the extender's transport differs from kube-scheduler-extender.md's TLS example (-docs,+here):\n%s", diff)
	}
	for _, c := range []*schedulerConfig{fromDocs, here} {
		for i := range c.Extenders {
			c.Extenders[i].URLPrefix, c.Extenders[i].EnableHTTPS, c.Extenders[i].TLSConfig = "", false, nil
		}
	}
	if diff := cmp.Diff(fromDocs, here); diff != "" {
		t.Errorf("the scheduler configuration differs from kube-scheduler-extender.md's (-docs,+here):\n%s", diff)
	}
}

// TestDockerfile checks what the manifests assume of the image: drover is
// its entrypoint, it runs as a non-root user, and it is the static build
// of cmd/drover on distroless/static.
func TestDockerfile(t *testing.T) {
	b, err := os.ReadFile("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	var stages [][]string
	for line := range strings.Lines(string(b)) {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if strings.HasPrefix(line, "FROM ") {
			stages = append(stages, nil)
		}
		if len(stages) == 0 {
			t.Fatalf("%q before the first FROM", line)
		}
		stages[len(stages)-1] = append(stages[len(stages)-1], line)
	}
	if len(stages) < 2 {
		t.Fatalf("%d stages, want a build stage and a final one", len(stages))
	}
	build, final := strings.Join(stages[0], "\n"), stages[len(stages)-1]
	for _, want := range []string{"FROM golang:1.26", "CGO_ENABLED=0", "./cmd/drover"} {
		if !strings.Contains(build, want) {
			t.Errorf("build stage lacks %q", want)
		}
	}
	if !strings.Contains(final[0], "distroless/static") {
		t.Errorf("final stage %q, want distroless/static", final[0])
	}
	var user, entry string
	for _, line := range final {
		if u, ok := strings.CutPrefix(line, "USER "); ok {
			user = u
		}
		if e, ok := strings.CutPrefix(line, "ENTRYPOINT "); ok {
			entry = e
		}
	}
	if entry != `["/drover"]` {
		t.Errorf(`ENTRYPOINT %s, want ["/drover"]: the manifests pass the drover command in args`, entry)
	}
	if name, _, _ := strings.Cut(user, ":"); user == "" || name == "root" || name == "0" {
		t.Errorf("USER %q, want a non-root user", user)
	}
}

// FuzzDecodeFile feeds arbitrary files to the decoder and, when they
// decode, to the checks: errors, never panics.
func FuzzDecodeFile(f *testing.F) {
	names, err := fs.Glob(os.DirFS("."), "*.yaml")
	if err != nil {
		f.Fatal(err)
	}
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec: {ports: [{port: 1}]}\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		ms, err := decodeFile("f.yaml", b)
		if err != nil || len(ms) == 0 {
			return
		}
		_ = check(ms, stubFlags)
	})
}
