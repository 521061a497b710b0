// Package deploy holds no code: it exists so that `go test ./docs/deploy`
// validates the Kubernetes manifests beside it (README.md describes them)
// offline, in CI, with no cluster and no kubectl.
//
// The test reads every *.yaml file in the directory, splits it into
// documents on `---` lines, and decodes each document strictly (unknown or
// miscased fields are errors, as under kubectl's strict field validation)
// into the k8s.io/api type its apiVersion and kind name; a kind it does not
// know is an error. The kube-scheduler configuration inside the ConfigMap is
// decoded the same way into a copy of k8s.io/kube-scheduler/config/v1's
// types whose fields a test compares with that module's source.
//
// Then it checks what a schema cannot: every container has CPU and memory
// requests and limits with request <= limit; selectors select their pod
// templates; long-running containers have liveness and readiness probes;
// every port a probe, a Service or a listen flag names is a container port;
// every Service selects a Deployment; one image everywhere, run as its
// entrypoint; every flag passed to `drover <command>` is one that
// `drover <command> -h` lists (the test builds cmd/drover once); every
// in-cluster address (drover.drover-system.svc:PORT) is a Service port that
// leads to the container listening for it (not on loopback), and the client
// speaks TLS exactly when drover serve does; the bearer token travels over
// TLS only, as drover itself insists (serve's -token-file with -tls-cert
// and -tls-key unless -addr is loopback, the agent's with -tls-ca unless
// -server is); an HTTPS extender checks drover's certificate (caFile);
// every file a flag names lies on a volume (the root filesystem is
// read-only), and a Secret's file, directly or projected, on one of its
// keys; $(VAR) references are defined; the namespace is applied first. TestManifestsRejectMistakes changes the manifests one mistake at a
// time and checks that each is caught.
package deploy
