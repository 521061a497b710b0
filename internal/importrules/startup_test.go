package importrules

import (
	"strings"
	"testing"
)

// unlinked are module paths no package of Drover may depend on, tests
// excepted, with why. They are not Rules: no package of the graph
// matches them, which TestRulesMatchPackages would refuse.
var unlinked = map[string]string{
	"k8s.io/api/": "the scheduler extender's JSON types are serve/extender's own (with apimachinery's resource.Quantity): " +
		"linking the Kubernetes API types cost every drover command 2,930 allocations and about 300 page faults at start-up; " +
		"tests and docs/deploy's manifest checks may use them",
	"k8s.io/kube-scheduler/": "as k8s.io/api: serve/extender declares ExtenderArgs, ExtenderFilterResult and HostPriority itself",
}

// TestUnlinked fails when a package of the module (tests excluded)
// depends on one of the unlinked modules.
func TestUnlinked(t *testing.T) {
	g, err := moduleGraph()
	if err != nil {
		t.Fatal(err)
	}
	for p := range g {
		for prefix, why := range unlinked {
			if strings.HasPrefix(p, prefix) {
				t.Errorf("%s is linked: %s", p, why)
			}
		}
	}
}
