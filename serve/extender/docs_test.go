package extender_test

import (
	"bytes"
	"encoding/json"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
	"google.golang.org/protobuf/proto"

	"github.com/drover-sched/drover/serve/extender"
	pb "github.com/drover-sched/drover/serve/proto"
)

// schedulerConfig mirrors the part of kube-scheduler's
// KubeSchedulerConfiguration (k8s.io/kube-scheduler/config/v1, field
// names from its json tags) that the doc's example sets.
type schedulerConfig struct {
	APIVersion       string         `yaml:"apiVersion"`
	Kind             string         `yaml:"kind"`
	ClientConnection map[string]any `yaml:"clientConnection"`
	Profiles         []struct {
		SchedulerName string `yaml:"schedulerName"`
	} `yaml:"profiles"`
	Extenders []struct {
		URLPrefix        string `yaml:"urlPrefix"`
		FilterVerb       string `yaml:"filterVerb"`
		PreemptVerb      string `yaml:"preemptVerb"`
		PrioritizeVerb   string `yaml:"prioritizeVerb"`
		Weight           int64  `yaml:"weight"`
		BindVerb         string `yaml:"bindVerb"`
		EnableHTTPS      bool   `yaml:"enableHTTPS"`
		HTTPTimeout      string `yaml:"httpTimeout"`
		NodeCacheCapable bool   `yaml:"nodeCacheCapable"`
		ManagedResources []struct {
			Name               string `yaml:"name"`
			IgnoredByScheduler bool   `yaml:"ignoredByScheduler"`
		} `yaml:"managedResources"`
		Ignorable bool `yaml:"ignorable"`
	} `yaml:"extenders"`
}

// The scheduler configuration and the pod in
// docs/kube-scheduler-extender.md say what the handler serves.
func TestDocExamples(t *testing.T) {
	doc, err := os.ReadFile("../../docs/kube-scheduler-extender.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```yaml\n(.*?)```").FindAllSubmatch(doc, -1)
	var cfgYAML, podYAML []byte
	for _, b := range blocks {
		switch {
		case bytes.Contains(b[1], []byte("kind: KubeSchedulerConfiguration")):
			cfgYAML = b[1]
		case bytes.Contains(b[1], []byte("kind: Pod")):
			podYAML = b[1]
		}
	}
	if cfgYAML == nil || podYAML == nil {
		t.Fatalf("doc lacks the scheduler configuration or the pod (%d yaml blocks)", len(blocks))
	}

	var cfg schedulerConfig
	dec := yaml.NewDecoder(bytes.NewReader(cfgYAML))
	dec.KnownFields(true)
	if err := dec.Decode(&cfg); err != nil {
		t.Fatalf("scheduler configuration: %v", err)
	}
	if cfg.APIVersion != "kubescheduler.config.k8s.io/v1" || len(cfg.Extenders) != 1 {
		t.Fatalf("scheduler configuration: %+v", cfg)
	}
	e := cfg.Extenders[0]
	u, err := url.Parse(e.URLPrefix)
	if err != nil || u.Hostname() != "127.0.0.1" || u.Path != "" {
		t.Errorf("urlPrefix %q: want loopback, no path", e.URLPrefix)
	}
	if "/"+e.FilterVerb != extender.FilterPath || "/"+e.PrioritizeVerb != extender.PrioritizePath || e.BindVerb != "" || e.PreemptVerb != "" {
		t.Errorf("verbs filter %q, prioritize %q, bind %q, preempt %q", e.FilterVerb, e.PrioritizeVerb, e.BindVerb, e.PreemptVerb)
	}
	if e.Weight <= 0 || e.NodeCacheCapable || len(e.ManagedResources) != 1 || e.ManagedResources[0].Name != string(extender.ResourceGPU) {
		t.Errorf("extender %+v", e)
	}

	var m map[string]any
	if err := yaml.Unmarshal(podYAML, &m); err != nil {
		t.Fatal(err)
	}
	js, _ := json.Marshal(m)
	var pod extender.Pod
	if err := json.Unmarshal(js, &pod); err != nil {
		t.Fatal(err)
	}
	pj, ok, err := extender.JobFromPod(&pod)
	if err != nil || !ok {
		t.Fatalf("doc pod: ok %v, %v", ok, err)
	}
	want := &pb.Job{Id: "ml/resnet-42", Model: "imagenet", Workers: 8, BatchSize: 256, ExpectedDurationS: 6 * 3600}
	if !proto.Equal(pj.Job, want) || pj.GPUs != 1 {
		t.Errorf("doc pod: job %v (%d GPUs), want %v (1)", pj.Job, pj.GPUs, want)
	}
	// Every annotation the package defines is in the doc's table.
	for _, a := range []string{extender.AnnotationJobID, extender.AnnotationWorkers, extender.AnnotationModel, extender.AnnotationArch,
		extender.AnnotationPSShards, extender.AnnotationRole, extender.AnnotationBatchSize, extender.AnnotationExpectedDuration,
		extender.AnnotationFreeGPUs, extender.AnnotationCPUUtil, extender.AnnotationMemBWUtil, extender.AnnotationNetUtil,
		extender.AnnotationGPUSpeed, extender.AnnotationNICGbps, extender.LabelRack, extender.LabelGPUProduct} {
		if !strings.Contains(string(doc), "`"+a+"`") {
			t.Errorf("doc does not mention %s", a)
		}
	}
}
