// Package extender is a kube-scheduler extender over Drover's policy
// Core: an http.Handler that answers the scheduler's filter and
// prioritize calls (POST <urlPrefix>/filter and <urlPrefix>/prioritize,
// with the JSON of k8s.io/kube-scheduler/extender/v1's types, which
// types.go declares for the fields it reads), so that a
// Kubernetes cluster places GPU training pods where Drover's policy,
// learned or heuristic, would. It has no bind verb: kube-scheduler binds.
// docs/kube-scheduler-extender.md has a scheduler configuration.
//
// # From pods to jobs
//
// Drover places jobs; kube-scheduler places pods, one at a time. A
// distributed job's workers are separate pods that carry the same job id,
// and each pod's call asks about one of the job's tasks. The first call
// for a job asks the Core (Place) where the whole job goes, over the
// candidate nodes of that call; the placement is cached by job id (for
// Config.TTL, at most Config.MaxJobs jobs, oldest dropped first), so every
// pod of the job gets answers from one placement. Filter keeps the nodes
// where the placement put at least one task of the pod's role and fails
// the others with a reason; prioritize scores each node 0..10
// (MaxExtenderPriority) by how many of those tasks the
// placement put there, 10 for the node with the most. kube-scheduler's own
// filters (NodeResourcesFit) keep checking that the pod's GPUs fit, and
// the extender does not track which pods were bound: when none of the
// placement's nodes is a candidate any more, the job is placed afresh.
//
// A pod's job comes from its annotations and its nvidia.com/gpu request
// (the containers' sum, or the largest init container; limits, else
// requests):
//
//	drover.io/job-id               job id shared by the job's pods (default: the pod's name);
//	                               the Core sees "<namespace>/<job-id>"
//	drover.io/workers              total GPU workers of the job (default: the pod's GPU request)
//	drover.io/model                model profile: bert, cifar10, deepspeech2, imagenet, ncf, yolov3, ...
//	drover.io/arch                 ring (default) or ps
//	drover.io/ps-shards            parameter servers of a ps job
//	drover.io/role                 worker (default) or ps: which placement the pod follows
//	drover.io/batch-size           global batch size
//	drover.io/expected-duration    expected run time, a Go duration ("90m")
//
// A pod with no drover.io/ annotation and no GPU request is not Drover's:
// every node passes its filter and scores 0. The sync strategy Drover
// chooses is in the Core's decision (the decision log, Status) but has no
// place in the extender's answers.
//
// # From nodes to the cluster
//
// Each candidate node becomes a node of the Place request's cluster:
//
//	id             the node's name
//	gpus           allocatable nvidia.com/gpu (a node without one cannot host a worker)
//	free_gpus      annotation drover.io/free-gpus, kept current by a node agent or
//	               controller; without it, every allocatable GPU counts as free
//	rack           label drover.io/rack, else topology.kubernetes.io/zone; racks are
//	               numbered in the sorted order of their names
//	cpu_util, mem_bw_util, net_util
//	               annotations drover.io/cpu-util, drover.io/mem-bw-util, drover.io/net-util
//	               (shares; default 0)
//	speed          annotation drover.io/gpu-speed (default 1)
//	nic_gbps       annotation drover.io/nic-gbps
//	gpu_type       label nvidia.com/gpu.product
//	cpus, memory_gib  allocatable cpu and memory
//
// A node the Core would refuse (no GPU, an annotation that is not a
// number, free GPUs above allocatable, a utilisation out of range) is
// checked on its own and fails alone, in FailedAndUnresolvableNodes with
// the reason, instead of failing the whole request.
//
// With nodeCacheCapable: true kube-scheduler sends node names only;
// Config.Nodes (a NodeGetter such as NodeStore, fed from an informer:
// json.Marshal an informer's core/v1 Node and json.Unmarshal it into a
// Node) must resolve them. `drover serve -extender-addr` has no node cache and
// is configured with nodeCacheCapable: false.
//
// # Errors and HTTP status
//
// kube-scheduler treats every answer but 200 as a failed call. The
// extender keeps 4xx for requests that are not extender calls at all, or
// that it will not read: a body that is not JSON or not an ExtenderArgs,
// a missing Pod, or neither Nodes nor NodeNames answer 400 with a
// RequestError naming the field ({"field": "Pod", "error": "missing"});
// a body over Config.MaxBodyBytes, or more nodes (or node names) than the
// Core's Limits.MaxNodes, 413 (the node cap is checked while the nodes
// are read, so a request of 240,000 nodes costs the memory of 4,096, not
// of 240,000); a body not read within Config.ReadTimeout 408; a call
// beyond Config.MaxConcurrent at once, or whose bytes would take the
// calls in progress past Config.MaxBufferedBytes, 429 with Retry-After;
// another path is 404, another method 405.
//
// # Slow clients
//
// kube-scheduler gives an extender call HTTPTimeout (30 s by default),
// and with ignorable: true it schedules without Drover when the call
// fails, so a client that holds the extender busy silently switches
// Drover off. A call therefore takes one of the MaxConcurrent slots only
// once its body has been read and decoded, and gives it back before its
// answer is written (with a 10 s write deadline): four connections
// trickling a partial body, which kept the extender at 429 before
// (issue 32), hold no slot. Bodies still arriving are bounded instead by
// Config.ReadTimeout (5 s from the handler's start, per connection) and
// by the bytes all calls in progress have read (Config.MaxBufferedBytes,
// MaxConcurrent x MaxBodyBytes by default), so a slow client holds
// little memory and a fast one must send its bytes to hold any. `drover
// serve` also bounds the extender listener's connections
// (serve.LimitHTTP: 128, 32 per peer; when full, the connection the
// longest without a complete request, its headers or body still
// arriving or idle, gives its slot to a new one) and its http.Server the
// headers (5 s), the whole request (15 s), the answer's write (20 s)
// and idle keep-alive connections (2 minutes). A well-formed call that Drover cannot
// answer (a malformed pod annotation, a job the Core refuses, such as
// "job.workers: want > 0 (got 0)", an overloaded or closing Core) is a
// scheduling-level failure: 200 with ExtenderFilterResult.Error, which
// kube-scheduler reports on the pod (or ignores, for an ignorable
// extender). Prioritize, whose answer has no error field and whose
// errors kube-scheduler ignores, scores every node 0 then.
//
// # Usage
//
// The server's main loop, as `drover serve -extender-addr` runs it
// beside the gRPC service, over the same Core:
//
//	core, _ := serve.NewCore()
//	ext, _ := extender.New(core, extender.Config{})
//	hs := &http.Server{Handler: ext, ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 15 * time.Second,
//		WriteTimeout: 20 * time.Second, IdleTimeout: 2 * time.Minute}
//	lis, _ := net.Listen("tcp", "127.0.0.1:8888")
//	lis = serve.LimitHTTP(hs, lis, "extender", serve.DefaultHTTPConns, metrics)
//	go hs.Serve(lis)
//	<-sigterm
//	hs.Shutdown(ctx) // finish the calls in progress
//	core.Close()
//
// and each scheduling cycle of kube-scheduler, for a pod that requests
// nvidia.com/gpu, is two calls (see Example):
//
//	POST /filter      {"Pod": {...}, "Nodes": {"items": [...]}}  -> ExtenderFilterResult
//	POST /prioritize  {"Pod": {...}, "Nodes": {"items": [...]}}  -> HostPriorityList
package extender
