package deploy

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.yaml.in/yaml/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The types below copy k8s.io/kube-scheduler/config/v1's
// KubeSchedulerConfiguration field for field (JSON names and types). That
// package imports k8s.io/component-base, which this module's go.sum does
// not hold, so the test cannot import it; TestSchedulerTypesMatchUpstream
// compares these copies with the package's source in the module cache. The
// fields from k8s.io/component-base (clientConnection, leaderElection and
// the debugging switches) are copied from its config/v1alpha1, unchecked;
// plugins and pluginConfig are kept as raw JSON, unchecked.

type schedulerConfig struct {
	APIVersion                string             `json:"apiVersion,omitempty"`
	Kind                      string             `json:"kind,omitempty"`
	Parallelism               *int32             `json:"parallelism,omitempty"`
	LeaderElection            *leaderElection    `json:"leaderElection"`
	ClientConnection          *clientConnection  `json:"clientConnection"`
	EnableProfiling           *bool              `json:"enableProfiling,omitempty"`
	EnableContentionProfiling *bool              `json:"enableContentionProfiling,omitempty"`
	PercentageOfNodesToScore  *int32             `json:"percentageOfNodesToScore,omitempty"`
	PodInitialBackoffSeconds  *int64             `json:"podInitialBackoffSeconds,omitempty"`
	PodMaxBackoffSeconds      *int64             `json:"podMaxBackoffSeconds,omitempty"`
	Profiles                  []schedulerProfile `json:"profiles,omitempty"`
	Extenders                 []extender         `json:"extenders,omitempty"`
	DelayCacheUntilActive     bool               `json:"delayCacheUntilActive,omitempty"`
}

type schedulerProfile struct {
	SchedulerName            *string `json:"schedulerName,omitempty"`
	PercentageOfNodesToScore *int32  `json:"percentageOfNodesToScore,omitempty"`
	Plugins                  rawJSON `json:"plugins,omitempty"`
	PluginConfig             rawJSON `json:"pluginConfig,omitempty"`
}

type extender struct {
	URLPrefix        string                    `json:"urlPrefix"`
	FilterVerb       string                    `json:"filterVerb,omitempty"`
	PreemptVerb      string                    `json:"preemptVerb,omitempty"`
	PrioritizeVerb   string                    `json:"prioritizeVerb,omitempty"`
	Weight           int64                     `json:"weight,omitempty"`
	BindVerb         string                    `json:"bindVerb,omitempty"`
	EnableHTTPS      bool                      `json:"enableHTTPS,omitempty"`
	TLSConfig        *extenderTLSConfig        `json:"tlsConfig,omitempty"`
	HTTPTimeout      metav1.Duration           `json:"httpTimeout,omitempty"`
	NodeCacheCapable bool                      `json:"nodeCacheCapable,omitempty"`
	ManagedResources []extenderManagedResource `json:"managedResources,omitempty"`
	Ignorable        bool                      `json:"ignorable,omitempty"`
}

type extenderManagedResource struct {
	Name               string `json:"name"`
	IgnoredByScheduler bool   `json:"ignoredByScheduler,omitempty"`
}

type extenderTLSConfig struct {
	Insecure   bool   `json:"insecure,omitempty"`
	ServerName string `json:"serverName,omitempty"`
	CertFile   string `json:"certFile,omitempty"`
	KeyFile    string `json:"keyFile,omitempty"`
	CAFile     string `json:"caFile,omitempty"`
	CertData   []byte `json:"certData,omitempty"`
	KeyData    []byte `json:"keyData,omitempty"`
	CAData     []byte `json:"caData,omitempty"`
}

// clientConnection is component-base's ClientConnectionConfiguration.
type clientConnection struct {
	Kubeconfig         string  `json:"kubeconfig"`
	AcceptContentTypes string  `json:"acceptContentTypes"`
	ContentType        string  `json:"contentType"`
	QPS                float32 `json:"qps"`
	Burst              int32   `json:"burst"`
}

// leaderElection is component-base's LeaderElectionConfiguration.
type leaderElection struct {
	LeaderElect       *bool           `json:"leaderElect"`
	LeaseDuration     metav1.Duration `json:"leaseDuration"`
	RenewDeadline     metav1.Duration `json:"renewDeadline"`
	RetryPeriod       metav1.Duration `json:"retryPeriod"`
	ResourceLock      string          `json:"resourceLock"`
	ResourceName      string          `json:"resourceName"`
	ResourceNamespace string          `json:"resourceNamespace"`
}

// rawJSON is a value the test does not look into.
type rawJSON = any

// decodeSchedulerConfig decodes a KubeSchedulerConfiguration file strictly.
func decodeSchedulerConfig(b []byte) (*schedulerConfig, error) {
	var v any
	if err := yaml.Unmarshal(b, &v); err != nil {
		return nil, err
	}
	var c schedulerConfig
	if err := decodeStrict(v, &c); err != nil {
		return nil, err
	}
	if c.APIVersion != "kubescheduler.config.k8s.io/v1" || c.Kind != "KubeSchedulerConfiguration" {
		return nil, fmt.Errorf("apiVersion %q kind %q, want kubescheduler.config.k8s.io/v1 KubeSchedulerConfiguration", c.APIVersion, c.Kind)
	}
	return &c, nil
}

// TestSchedulerTypesMatchUpstream checks that the copies above have the
// JSON fields of k8s.io/kube-scheduler/config/v1's types, read from the
// module's source (go list -m finds it; CI has it, serve/extender imports
// the module).
func TestSchedulerTypesMatchUpstream(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to find k8s.io/kube-scheduler: %v", err)
	}
	out, err := exec.Command(goBin, "list", "-m", "-f", "{{.Dir}}", "k8s.io/kube-scheduler").Output()
	dir := strings.TrimSpace(string(out))
	if err != nil || dir == "" {
		t.Fatalf("go list -m k8s.io/kube-scheduler: %v (%q)", err, out)
	}
	src := filepath.Join(dir, "config", "v1", "types.go")
	if _, err := os.Stat(src); err != nil {
		t.Fatalf("k8s.io/kube-scheduler's source is not in the module cache (go mod download k8s.io/kube-scheduler): %v", err)
	}
	upstream, err := structJSONFields(src)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		upstream string
		local    any
	}{
		{"KubeSchedulerConfiguration", schedulerConfig{}},
		{"KubeSchedulerProfile", schedulerProfile{}},
		{"Extender", extender{}},
		{"ExtenderManagedResource", extenderManagedResource{}},
		{"ExtenderTLSConfig", extenderTLSConfig{}},
	}
	for _, tt := range tests {
		t.Run(tt.upstream, func(t *testing.T) {
			want, ok := upstream[tt.upstream]
			if !ok {
				t.Fatalf("%s: no type %s", src, tt.upstream)
			}
			got := map[string]string{}
			for name, ft := range jsonFields(reflect.TypeOf(tt.local)) {
				got[name] = ft.String()
			}
			// Compare names only where the copy stands for a type of
			// another package.
			for name := range want {
				if want[name] == "" {
					got[name] = ""
				}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("JSON fields of %s (-upstream,+copy; type names as the copy spells them):\n%s", tt.upstream, diff)
			}
		})
	}
}

// structJSONFields reads a Go source file and returns, for each struct
// type, its fields' JSON names and their Go types as this test's copies
// spell them (the package's own types lowercased, as the copies name
// them; "" for the types of other packages, whose names are not compared).
// Embedded structs without a JSON name are expanded from a list of the two
// that KubeSchedulerConfiguration embeds.
func structJSONFields(path string) (map[string]map[string]string, error) {
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	inline := map[string]map[string]string{
		"metav1.TypeMeta": {"apiVersion": "string", "kind": "string"},
		"componentbaseconfigv1alpha1.DebuggingConfiguration": {"enableProfiling": "*bool", "enableContentionProfiling": "*bool"},
	}
	local := map[string]string{
		"KubeSchedulerProfile":    "deploy.schedulerProfile",
		"Extender":                "deploy.extender",
		"ExtenderManagedResource": "deploy.extenderManagedResource",
		"ExtenderTLSConfig":       "deploy.extenderTLSConfig",
		"metav1.Duration":         "v1.Duration",
	}
	out := map[string]map[string]string{}
	for _, decl := range f.Decls {
		gd, ok := decl.(*ast.GenDecl)
		if !ok || gd.Tok != token.TYPE {
			continue
		}
		for _, spec := range gd.Specs {
			ts := spec.(*ast.TypeSpec)
			st, ok := ts.Type.(*ast.StructType)
			if !ok {
				continue
			}
			fields := map[string]string{}
			for _, fl := range st.Fields.List {
				typ := exprString(fl.Type)
				name := ""
				if fl.Tag != nil {
					tag, err := strconv.Unquote(fl.Tag.Value)
					if err != nil {
						return nil, err
					}
					name, _, _ = strings.Cut(reflect.StructTag(tag).Get("json"), ",")
				}
				if len(fl.Names) == 0 && name == "" {
					in, ok := inline[typ]
					if !ok {
						return nil, fmt.Errorf("%s: %s embeds %s, which the test does not know", path, ts.Name.Name, typ)
					}
					for k, v := range in {
						fields[k] = v
					}
					continue
				}
				if name == "" || name == "-" {
					return nil, fmt.Errorf("%s: %s: a field without a JSON name", path, ts.Name.Name)
				}
				fields[name] = spellType(typ, local)
			}
			out[ts.Name.Name] = fields
		}
	}
	return out, nil
}

// spellType turns an upstream field type into the copy's spelling: "" for
// a type of another package or a struct of its own that the copy keeps
// raw.
func spellType(typ string, local map[string]string) string {
	prefix := ""
	for {
		switch {
		case strings.HasPrefix(typ, "*"):
			prefix, typ = prefix+"*", typ[1:]
			continue
		case strings.HasPrefix(typ, "[]"):
			prefix, typ = prefix+"[]", typ[2:]
			continue
		}
		break
	}
	if l, ok := local[typ]; ok {
		return prefix + l
	}
	switch typ {
	case "string", "bool", "int32", "int64", "byte", "float32":
		if typ == "byte" {
			typ = "uint8"
		}
		return prefix + typ
	}
	return "" // another package's type, or Plugins/PluginConfig (raw)
}

func exprString(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.StarExpr:
		return "*" + exprString(e.X)
	case *ast.ArrayType:
		return "[]" + exprString(e.Elt)
	case *ast.SelectorExpr:
		return exprString(e.X) + "." + e.Sel.Name
	}
	return fmt.Sprintf("%T", e)
}
