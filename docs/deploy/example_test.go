package deploy

import (
	"fmt"
	"log"
	"os"
)

// The objects `kubectl apply -f docs/deploy/` creates, in the order it
// creates them (file name order): the namespace first.
func Example() {
	ms, err := load(os.DirFS("."))
	if err != nil {
		log.Fatal(err)
	}
	for _, m := range ms {
		fmt.Printf("%-23s %s/%s\n", m.file, m.kind, m.name)
	}
	// Output:
	// 00-namespace.yaml       Namespace/drover-system
	// agent-daemonset.yaml    DaemonSet/drover-agent
	// eval-job.yaml           PersistentVolumeClaim/drover-eval-results
	// eval-job.yaml           Job/drover-eval
	// scheduler-extender.yaml ConfigMap/drover-scheduler-config
	// server.yaml             ServiceAccount/drover
	// server.yaml             Secret/drover-token
	// server.yaml             Secret/drover-tls
	// server.yaml             PersistentVolumeClaim/drover-state
	// server.yaml             Deployment/drover
	// server.yaml             Service/drover
}
