package extender

import (
	"encoding/json"

	"k8s.io/apimachinery/pkg/api/resource"
)

// The extender protocol's JSON types. They are the parts of
// k8s.io/kube-scheduler/extender/v1 and k8s.io/api/core/v1 the extender
// reads, under the same field names and JSON keys, so that a request
// decodes as it did into the Kubernetes types (quantities are
// apimachinery's resource.Quantity, parsed and rounded as Kubernetes
// does). Drover used the Kubernetes types themselves until 2026-12-05;
// they are written out here because linking k8s.io/api/core/v1 and
// k8s.io/kube-scheduler (with json-iterator, reflect2, yaml and CBOR
// behind them) cost every drover command, whatever it ran, 2,930
// allocations and 0.3 MB at package initialisation, about 0.9 ms of
// drover version's 7.5 ms of initialisers, and about 300 page faults
// (a program linking only those packages: 3.3-3.9 ms of CPU and 465
// page faults against an empty program's 0.9-1.4 ms and 155; one
// linking only resource.Quantity: 1.7-2.4 ms and 221). A Node keeps the
// JSON it was decoded from and encodes to it, so Filter answers with
// the nodes it was sent, every field included.

// MaxExtenderPriority and MinExtenderPriority are the highest and lowest
// scores of a prioritize answer (kube-scheduler's extenderv1 values).
const (
	MaxExtenderPriority int64 = 10
	MinExtenderPriority int64 = 0
)

// ResourceName is the name of a resource in a ResourceList
// (core/v1 ResourceName), e.g. "cpu", "memory", "nvidia.com/gpu".
type ResourceName string

// The resources Drover reads besides ResourceGPU, and the zone label it
// falls back to for racks (core/v1's names).
const (
	ResourceCPU       ResourceName = "cpu"
	ResourceMemory    ResourceName = "memory"
	LabelTopologyZone              = "topology.kubernetes.io/zone"
	namespaceDefault               = "default"
)

// ResourceList maps resources to quantities (core/v1 ResourceList).
type ResourceList map[ResourceName]resource.Quantity

// ObjectMeta is the part of an object's metadata the extender reads
// (meta/v1 ObjectMeta).
type ObjectMeta struct {
	Name        string            `json:"name,omitempty"`
	Namespace   string            `json:"namespace,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// Pod is the part of a pod the extender reads (core/v1 Pod): its
// metadata and its containers' resources.
type Pod struct {
	ObjectMeta `json:"metadata,omitempty"`
	Spec       PodSpec `json:"spec,omitempty"`
}

// PodSpec holds a pod's containers (core/v1 PodSpec).
type PodSpec struct {
	InitContainers []Container `json:"initContainers,omitempty"`
	Containers     []Container `json:"containers"`
}

// Container is a container's name and resources (core/v1 Container).
type Container struct {
	Name      string               `json:"name"`
	Resources ResourceRequirements `json:"resources,omitempty"`
}

// ResourceRequirements are a container's limits and requests
// (core/v1 ResourceRequirements).
type ResourceRequirements struct {
	Limits   ResourceList `json:"limits,omitempty"`
	Requests ResourceList `json:"requests,omitempty"`
}

// Node is the part of a node the extender reads (core/v1 Node): its
// metadata and allocatable resources. A Node decoded from JSON keeps
// that JSON and encodes to it.
type Node struct {
	ObjectMeta `json:"metadata,omitempty"`
	Status     NodeStatus `json:"status,omitempty"`
	raw        []byte
}

// nodeFields is Node without its methods, for encoding/json.
type nodeFields struct {
	ObjectMeta `json:"metadata,omitempty"`
	Status     NodeStatus `json:"status,omitempty"`
}

// UnmarshalJSON implements json.Unmarshaler: the fields as encoding/json
// decodes them, and a copy of b.
func (n *Node) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil
	}
	f := nodeFields{ObjectMeta: n.ObjectMeta, Status: n.Status}
	if err := json.Unmarshal(b, &f); err != nil {
		return err
	}
	n.ObjectMeta, n.Status, n.raw = f.ObjectMeta, f.Status, append([]byte(nil), b...)
	return nil
}

// MarshalJSON implements json.Marshaler: the JSON the node was decoded
// from, else its fields.
func (n Node) MarshalJSON() ([]byte, error) {
	if n.raw != nil {
		return n.raw, nil
	}
	return json.Marshal(nodeFields{ObjectMeta: n.ObjectMeta, Status: n.Status})
}

// NodeStatus holds a node's allocatable resources (core/v1 NodeStatus).
type NodeStatus struct {
	Allocatable ResourceList `json:"allocatable,omitempty"`
}

// ListMeta is a list's metadata (meta/v1 ListMeta).
type ListMeta struct {
	ResourceVersion string `json:"resourceVersion,omitempty"`
	Continue        string `json:"continue,omitempty"`
}

// NodeList is a list of nodes (core/v1 NodeList).
type NodeList struct {
	Kind       string   `json:"kind,omitempty"`
	APIVersion string   `json:"apiVersion,omitempty"`
	ListMeta   ListMeta `json:"metadata,omitempty"`
	Items      []Node   `json:"items"`
}

// ExtenderArgs is the body of a filter or prioritize call (extenderv1
// ExtenderArgs): the pod and its candidate nodes, whole (Nodes) or by
// name (NodeNames, when the extender is nodeCacheCapable).
type ExtenderArgs struct {
	Pod       *Pod
	Nodes     *NodeList
	NodeNames *[]string
}

// FailedNodesMap maps a node's name to why it was filtered out.
type FailedNodesMap map[string]string

// ExtenderFilterResult is a filter call's answer (extenderv1
// ExtenderFilterResult).
type ExtenderFilterResult struct {
	Nodes                      *NodeList
	NodeNames                  *[]string
	FailedNodes                FailedNodesMap
	FailedAndUnresolvableNodes FailedNodesMap
	Error                      string
}

// HostPriority is one node's score (extenderv1 HostPriority).
type HostPriority struct {
	Host  string
	Score int64
}

// HostPriorityList is a prioritize call's answer.
type HostPriorityList []HostPriority
