package deploy

import (
	"fmt"
	"net"
	"net/url"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// flagLister returns the flags of `drover <cmd>`: name -> whether the flag
// takes a value (false for a boolean flag).
type flagLister func(cmd string) (map[string]bool, error)

// workload is a manifest that runs pods.
type workload struct {
	m           manifest
	labels      map[string]string // the pod template's
	selector    *metav1.LabelSelector
	spec        *corev1.PodSpec
	longRunning bool // Deployment, DaemonSet: probed, restarted
}

// checker collects the problems of one set of manifests.
type checker struct {
	ms        []manifest
	flags     flagLister
	workloads []*workload
	errs      []error
}

func (c *checker) errorf(m manifest, format string, args ...any) {
	c.errs = append(c.errs, fmt.Errorf("%s: %s", m, fmt.Sprintf(format, args...)))
}

// check runs every semantic check on ms and returns all problems found.
func check(ms []manifest, flags flagLister) []error {
	c := &checker{ms: ms, flags: flags}
	for _, m := range ms {
		switch o := m.obj.(type) {
		case *appsv1.Deployment:
			c.workloads = append(c.workloads, &workload{m, o.Spec.Template.Labels, o.Spec.Selector, &o.Spec.Template.Spec, true})
		case *appsv1.DaemonSet:
			c.workloads = append(c.workloads, &workload{m, o.Spec.Template.Labels, o.Spec.Selector, &o.Spec.Template.Spec, true})
		case *batchv1.Job:
			c.workloads = append(c.workloads, &workload{m, o.Spec.Template.Labels, o.Spec.Selector, &o.Spec.Template.Spec, false})
		}
	}
	c.namespaces()
	for _, w := range c.workloads {
		c.workload(w)
	}
	c.images()
	for _, m := range ms {
		switch o := m.obj.(type) {
		case *corev1.Service:
			c.service(m, o)
		case *corev1.ConfigMap:
			c.configMap(m, o)
		case *corev1.PersistentVolumeClaim:
			if _, ok := o.Spec.Resources.Requests[corev1.ResourceStorage]; !ok {
				c.errorf(m, "no storage request")
			}
		case *corev1.Secret:
			if o.Type == corev1.SecretTypeTLS {
				for _, k := range []string{corev1.TLSCertKey, corev1.TLSPrivateKeyKey} {
					if !c.hasKey("Secret", m.namespace, m.name, k) {
						c.errorf(m, "type %s without the key %q, which the API server requires", o.Type, k)
					}
				}
			}
		}
	}
	for _, w := range c.workloads {
		for _, ct := range w.spec.Containers {
			args := droverArgs(ct.Args, nil)
			if v, ok := args.values["server"]; ok {
				c.serviceRef(w.m, "-server "+v, v, "addr", clientTLS{
					tls:  args.values["tls-ca"] != "",
					cert: args.values["tls-cert"] != "" && args.values["tls-key"] != "",
					how:  "-tls-ca",
					cred: "-tls-cert and -tls-key",
				})
			}
		}
	}
	return c.errs
}

// namespaces: one Namespace, applied first, holding every other object.
func (c *checker) namespaces() {
	var ns []manifest
	for _, m := range c.ms {
		if m.kind == "Namespace" {
			ns = append(ns, m)
		}
	}
	if len(ns) != 1 {
		c.errs = append(c.errs, fmt.Errorf("%d Namespace objects, want 1", len(ns)))
		return
	}
	if c.ms[0].kind != "Namespace" {
		c.errorf(c.ms[0], "applied before Namespace %s (kubectl apply -f DIR goes in file name order): it would fail on a new cluster", ns[0].name)
	}
	for _, m := range c.ms {
		if m.kind != "Namespace" && m.namespace != ns[0].name {
			c.errorf(m, "namespace %q, want %q", m.namespace, ns[0].name)
		}
	}
}

func (c *checker) find(kind, namespace, name string) (manifest, bool) {
	for _, m := range c.ms {
		if m.kind == kind && m.namespace == namespace && m.name == name {
			return m, true
		}
	}
	return manifest{}, false
}

func (c *checker) workload(w *workload) {
	m, spec := w.m, w.spec
	switch {
	case w.selector == nil && w.longRunning:
		c.errorf(m, "no spec.selector")
	case w.selector != nil:
		sel, err := metav1.LabelSelectorAsSelector(w.selector)
		switch {
		case err != nil:
			c.errorf(m, "spec.selector: %v", err)
		case sel.Empty():
			c.errorf(m, "spec.selector selects everything")
		case !sel.Matches(labels.Set(w.labels)):
			c.errorf(m, "spec.selector %s does not select the pod template's labels %v", sel, w.labels)
		}
	}
	if len(spec.Containers) == 0 {
		c.errorf(m, "no containers")
	}
	volumes := map[string]corev1.Volume{}
	for _, v := range spec.Volumes {
		volumes[v.Name] = v
		c.volume(m, v)
	}
	refersToSvc, usesIndex := false, false
	for _, ct := range append(slices.Clone(spec.InitContainers), spec.Containers...) {
		c.container(w, ct, volumes)
		for _, a := range ct.Args {
			refersToSvc = refersToSvc || strings.Contains(a, ".svc")
			usesIndex = usesIndex || strings.Contains(a, "JOB_COMPLETION_INDEX")
		}
		for _, e := range ct.Env {
			if e.ValueFrom != nil && e.ValueFrom.FieldRef != nil && strings.Contains(e.ValueFrom.FieldRef.FieldPath, "job-completion-index") {
				usesIndex = true
			}
		}
	}
	if spec.HostNetwork && refersToSvc && spec.DNSPolicy != corev1.DNSClusterFirstWithHostNet {
		c.errorf(m, "hostNetwork pod names a cluster Service but dnsPolicy is %q: only ClusterFirstWithHostNet resolves it", spec.DNSPolicy)
	}
	if job, ok := m.obj.(*batchv1.Job); ok && usesIndex {
		if job.Spec.CompletionMode == nil || *job.Spec.CompletionMode != batchv1.IndexedCompletion {
			c.errorf(m, "uses the completion index but completionMode is not Indexed")
		}
	}
}

// volume: the Secret, ConfigMap or claim a volume names is among the
// manifests.
func (c *checker) volume(m manifest, v corev1.Volume) {
	switch {
	case v.Secret != nil:
		if _, ok := c.find("Secret", m.namespace, v.Secret.SecretName); !ok {
			c.errorf(m, "volume %s: no Secret %q", v.Name, v.Secret.SecretName)
		}
	case v.ConfigMap != nil:
		if _, ok := c.find("ConfigMap", m.namespace, v.ConfigMap.Name); !ok {
			c.errorf(m, "volume %s: no ConfigMap %q", v.Name, v.ConfigMap.Name)
		}
	case v.PersistentVolumeClaim != nil:
		if _, ok := c.find("PersistentVolumeClaim", m.namespace, v.PersistentVolumeClaim.ClaimName); !ok {
			c.errorf(m, "volume %s: no PersistentVolumeClaim %q", v.Name, v.PersistentVolumeClaim.ClaimName)
		}
	case v.Projected != nil:
		for _, src := range v.Projected.Sources {
			switch {
			case src.Secret != nil:
				if _, ok := c.find("Secret", m.namespace, src.Secret.Name); !ok {
					c.errorf(m, "volume %s: no Secret %q", v.Name, src.Secret.Name)
				}
			case src.ConfigMap != nil:
				if _, ok := c.find("ConfigMap", m.namespace, src.ConfigMap.Name); !ok {
					c.errorf(m, "volume %s: no ConfigMap %q", v.Name, src.ConfigMap.Name)
				}
			}
		}
	}
}

var resourceNames = []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory}

func (c *checker) container(w *workload, ct corev1.Container, volumes map[string]corev1.Volume) {
	m := w.m
	where := func(format string, args ...any) {
		c.errorf(m, "container %s: %s", ct.Name, fmt.Sprintf(format, args...))
	}

	// Resources: requests and limits of CPU and memory, request <= limit.
	for _, r := range resourceNames {
		if _, ok := ct.Resources.Requests[r]; !ok {
			where("no %s request", r)
		}
		if _, ok := ct.Resources.Limits[r]; !ok {
			where("no %s limit", r)
		}
	}
	for r, req := range ct.Resources.Requests {
		if lim, ok := ct.Resources.Limits[r]; ok && req.Cmp(lim) > 0 {
			where("%s request %s above its limit %s", r, req.String(), lim.String())
		}
	}

	// Probes, on ports the container has.
	if w.longRunning && (ct.LivenessProbe == nil || ct.ReadinessProbe == nil) {
		where("a long-running container without a liveness and a readiness probe")
	}
	probes := []struct {
		name string
		p    *corev1.Probe
	}{{"liveness", ct.LivenessProbe}, {"readiness", ct.ReadinessProbe}, {"startup", ct.StartupProbe}}
	for _, pr := range probes {
		if port, ok := probePort(pr.p); ok {
			if _, found := containerPort(ct, port); !found {
				where("%s probe on port %s, which the container does not declare", pr.name, port.String())
			}
		}
	}

	// Security: read-only root, no privilege escalation, no capabilities,
	// not root.
	sc := ct.SecurityContext
	switch {
	case sc == nil:
		where("no securityContext")
	default:
		if sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
			where("readOnlyRootFilesystem is not true")
		}
		if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
			where("allowPrivilegeEscalation is not false")
		}
		if sc.Capabilities == nil || !slices.Contains(sc.Capabilities.Drop, "ALL") {
			where("capabilities do not drop ALL")
		}
	}
	nonRoot := sc != nil && sc.RunAsNonRoot != nil && *sc.RunAsNonRoot
	if psc := w.spec.SecurityContext; !nonRoot && (sc == nil || sc.RunAsNonRoot == nil) && psc != nil && psc.RunAsNonRoot != nil {
		nonRoot = *psc.RunAsNonRoot
	}
	if !nonRoot {
		where("runAsNonRoot is not true")
	}

	// Mounts name volumes of the pod.
	for _, vm := range ct.VolumeMounts {
		if _, ok := volumes[vm.Name]; !ok {
			where("volumeMount %s: no such volume", vm.Name)
		}
	}

	// Env references name Secrets and ConfigMaps that hold the key.
	env := map[string]bool{}
	for _, e := range ct.Env {
		env[e.Name] = true
		if e.ValueFrom == nil {
			continue
		}
		if r := e.ValueFrom.SecretKeyRef; r != nil && !c.hasKey("Secret", m.namespace, r.Name, r.Key) {
			where("env %s: no key %q in Secret %q", e.Name, r.Key, r.Name)
		}
		if r := e.ValueFrom.ConfigMapKeyRef; r != nil && !c.hasKey("ConfigMap", m.namespace, r.Name, r.Key) {
			where("env %s: no key %q in ConfigMap %q", e.Name, r.Key, r.Name)
		}
	}

	// The command line: drover's entrypoint, a drover command, its flags.
	if len(ct.Command) > 0 {
		where("command %q: the image has no shell and its entrypoint is /drover; pass the drover command in args", ct.Command)
	}
	for _, a := range append(slices.Clone(ct.Command), ct.Args...) {
		for _, v := range envRefs(a) {
			if !env[v] && len(ct.EnvFrom) == 0 {
				where("argument %q refers to $(%s), which the container's env does not define (Kubernetes would pass it literally)", a, v)
			}
		}
	}
	if len(ct.Args) == 0 || strings.HasPrefix(ct.Args[0], "-") {
		where("args %q: want a drover command first", ct.Args)
		return
	}
	known, err := c.flags(ct.Args[0])
	if err != nil {
		where("drover %s: %v", ct.Args[0], err)
	}
	args := droverArgs(ct.Args, known)
	if args.err != nil {
		where("args: %v", args.err)
	}
	for _, f := range args.order {
		if known == nil {
			break
		}
		if _, ok := known[f]; !ok {
			where("drover %s has no flag -%s", args.cmd, f)
		}
	}
	for _, f := range args.bare {
		if takes, ok := known[f]; ok && takes {
			where("drover %s -%s needs a value", args.cmd, f)
		}
	}
	if len(args.rest) > 0 {
		where("drover %s: arguments after the flags, %q (drover's commands take none; a flag after them is ignored)", args.cmd, args.rest)
	}

	// The bearer token travels over TLS only, as drover serve and its
	// clients insist at start (or, for the agent, at every call).
	if err := tokenTransport(args); err != nil {
		where("%v", err)
	}

	// Listen flags (-addr, -*-addr) bind declared ports, and every declared
	// port is bound by one.
	listening := map[int32]string{}
	for _, f := range args.order {
		if f != "addr" && !strings.HasSuffix(f, "-addr") {
			continue
		}
		_, p, err := net.SplitHostPort(args.values[f])
		port, err2 := strconv.Atoi(p)
		if err != nil || err2 != nil {
			where("-%s %q: want HOST:PORT", f, args.values[f])
			continue
		}
		listening[int32(port)] = f
		if _, ok := containerPort(ct, intstr.FromInt32(int32(port))); !ok {
			where("-%s listens on %d, which the container does not declare", f, port)
		} else if a := listenAddr(args.values[f]); loopbackAddr(a) {
			where("-%s %s binds %s, which the kubelet and the Service cannot reach (a port alone binds 127.0.0.1): name the host, 0.0.0.0:%d", f, args.values[f], a, port)
		}
	}
	for _, p := range ct.Ports {
		if _, ok := listening[p.ContainerPort]; !ok {
			where("port %s (%d): no -addr or -*-addr flag listens on it", p.Name, p.ContainerPort)
		}
	}

	// Paths: with a read-only root filesystem, every file a flag names is
	// on a volume; a file on a Secret or ConfigMap volume is one of its
	// keys.
	for _, f := range args.order {
		if v := args.values[f]; strings.HasPrefix(v, "/") {
			if err := c.onVolume(m, ct, volumes, v); err != nil {
				where("-%s %s: %v", f, v, err)
			}
		}
	}
}

// onVolume reports whether p lies on a volume mount, or holds one (-root
// /host with /host/proc mounted).
func (c *checker) onVolume(m manifest, ct corev1.Container, volumes map[string]corev1.Volume, p string) error {
	p = path.Clean(p)
	var best *corev1.VolumeMount
	for i, vm := range ct.VolumeMounts {
		mp := path.Clean(vm.MountPath)
		if strings.HasPrefix(mp+"/", p+"/") {
			return nil // p is the mount or above it
		}
		if strings.HasPrefix(p, mp+"/") && (best == nil || len(mp) > len(best.MountPath)) {
			best = &ct.VolumeMounts[i]
		}
	}
	if best == nil {
		return fmt.Errorf("not on any volume mount (the root filesystem is read-only)")
	}
	rel := strings.TrimPrefix(p, path.Clean(best.MountPath)+"/")
	if best.SubPath != "" {
		return nil
	}
	v := volumes[best.Name]
	switch {
	case v.Secret != nil:
		if !c.hasFile("Secret", m.namespace, v.Secret.SecretName, v.Secret.Items, rel) {
			return fmt.Errorf("Secret %q mounted at %s has no key %q", v.Secret.SecretName, best.MountPath, rel)
		}
	case v.ConfigMap != nil:
		if !c.hasFile("ConfigMap", m.namespace, v.ConfigMap.Name, v.ConfigMap.Items, rel) {
			return fmt.Errorf("ConfigMap %q mounted at %s has no key %q", v.ConfigMap.Name, best.MountPath, rel)
		}
	case v.Projected != nil:
		// The file is one source's: the item whose path it is, or, for a
		// source without items, one of its keys. A Downward API or token
		// source is not checked.
		for _, src := range v.Projected.Sources {
			var kind, name string
			var items []corev1.KeyToPath
			switch {
			case src.Secret != nil:
				kind, name, items = "Secret", src.Secret.Name, src.Secret.Items
			case src.ConfigMap != nil:
				kind, name, items = "ConfigMap", src.ConfigMap.Name, src.ConfigMap.Items
			default:
				return nil
			}
			if i := slices.IndexFunc(items, func(it corev1.KeyToPath) bool { return it.Path == rel }); i >= 0 {
				if !c.hasKey(kind, m.namespace, name, items[i].Key) {
					return fmt.Errorf("%s %q has no key %q (projected at %s)", kind, name, items[i].Key, path.Join(best.MountPath, rel))
				}
				return nil
			}
			if len(items) == 0 && c.hasKey(kind, m.namespace, name, rel) {
				return nil
			}
		}
		return fmt.Errorf("no source of the projected volume %s mounted at %s has the file %q", v.Name, best.MountPath, rel)
	}
	return nil
}

// hasFile reports whether a Secret or ConfigMap volume shows the file rel.
func (c *checker) hasFile(kind, namespace, name string, items []corev1.KeyToPath, rel string) bool {
	if len(items) == 0 {
		return c.hasKey(kind, namespace, name, rel)
	}
	for _, it := range items {
		if it.Path == rel {
			return c.hasKey(kind, namespace, name, it.Key)
		}
	}
	return false
}

// hasKey reports whether the Secret or ConfigMap among the manifests holds
// key.
func (c *checker) hasKey(kind, namespace, name, key string) bool {
	m, ok := c.find(kind, namespace, name)
	if !ok {
		return false
	}
	switch o := m.obj.(type) {
	case *corev1.Secret:
		_, a := o.Data[key]
		_, b := o.StringData[key]
		return a || b
	case *corev1.ConfigMap:
		_, a := o.Data[key]
		_, b := o.BinaryData[key]
		return a || b
	}
	return false
}

// images: one image everywhere.
func (c *checker) images() {
	seen := map[string]manifest{}
	for _, w := range c.workloads {
		for _, ct := range append(slices.Clone(w.spec.InitContainers), w.spec.Containers...) {
			if _, ok := seen[ct.Image]; !ok {
				seen[ct.Image] = w.m
			}
		}
	}
	if len(seen) > 1 {
		var list []string
		for img, m := range seen {
			list = append(list, fmt.Sprintf("%s (%s)", img, m))
		}
		slices.Sort(list)
		c.errs = append(c.errs, fmt.Errorf("more than one image: %s", strings.Join(list, ", ")))
	}
}

// service: selects a Deployment, and every target port is a port of every
// pod it selects.
func (c *checker) service(m manifest, svc *corev1.Service) {
	if len(svc.Spec.Selector) == 0 {
		c.errorf(m, "no selector")
		return
	}
	sel := labels.SelectorFromSet(svc.Spec.Selector)
	var selected []*workload
	deployment := false
	for _, w := range c.workloads {
		if w.m.namespace == m.namespace && sel.Matches(labels.Set(w.labels)) {
			selected = append(selected, w)
			deployment = deployment || w.m.kind == "Deployment"
		}
	}
	if !deployment {
		c.errorf(m, "selector %s selects no Deployment", sel)
	}
	for _, sp := range svc.Spec.Ports {
		target := sp.TargetPort
		if target.Type == intstr.Int && target.IntVal == 0 {
			target = intstr.FromInt32(sp.Port)
		}
		for _, w := range selected {
			if _, _, ok := podPort(w.spec, target); !ok {
				c.errorf(m, "port %s targets %s, which %s does not declare", sp.Name, target.String(), w.m)
			}
		}
	}
}

// configMap: a KubeSchedulerConfiguration inside is strictly valid, calls
// drover's two verbs, and its extender URL reaches drover serve's
// -extender-addr.
func (c *checker) configMap(m manifest, cm *corev1.ConfigMap) {
	for _, key := range sortedKeys(cm.Data) {
		data := cm.Data[key]
		if !strings.Contains(data, "KubeSchedulerConfiguration") {
			continue
		}
		cfg, err := decodeSchedulerConfig([]byte(data))
		if err != nil {
			c.errorf(m, "data[%s]: %v", key, err)
			continue
		}
		if len(cfg.Extenders) == 0 {
			c.errorf(m, "data[%s]: no extenders", key)
		}
		for i, e := range cfg.Extenders {
			where := fmt.Sprintf("data[%s] extenders[%d]", key, i)
			if e.FilterVerb != "filter" || e.PrioritizeVerb != "prioritize" || e.PreemptVerb != "" || e.BindVerb != "" {
				c.errorf(m, "%s: verbs filter %q prioritize %q preempt %q bind %q; drover serves filter and prioritize only", where, e.FilterVerb, e.PrioritizeVerb, e.PreemptVerb, e.BindVerb)
			}
			if !slices.ContainsFunc(e.ManagedResources, func(r extenderManagedResource) bool { return r.Name == "nvidia.com/gpu" }) {
				c.errorf(m, "%s: nvidia.com/gpu is not a managed resource: every pod would wait on drover", where)
			}
			u, err := url.Parse(e.URLPrefix)
			if err != nil || u.Host == "" {
				c.errorf(m, "%s: urlPrefix %q: not a URL", where, e.URLPrefix)
				continue
			}
			if (u.Scheme == "https") != e.EnableHTTPS {
				c.errorf(m, "%s: urlPrefix %q with enableHTTPS %v", where, e.URLPrefix, e.EnableHTTPS)
			}
			tc := e.TLSConfig
			if tc == nil {
				tc = &extenderTLSConfig{}
			}
			switch {
			case e.EnableHTTPS && tc.Insecure:
				c.errorf(m, "%s: tlsConfig.insecure: kube-scheduler would not check drover's certificate", where)
			case e.EnableHTTPS && tc.CAFile == "" && len(tc.CAData) == 0:
				c.errorf(m, "%s: enableHTTPS without tlsConfig.caFile or caData: kube-scheduler then checks no certificate at all (it turns insecure on)", where)
			}
			c.serviceRef(m, where+" urlPrefix "+e.URLPrefix, u.Host, "extender-addr", clientTLS{
				tls:  u.Scheme == "https",
				cert: (tc.CertFile != "" || len(tc.CertData) > 0) && (tc.KeyFile != "" || len(tc.KeyData) > 0),
				how:  "an https:// urlPrefix with enableHTTPS and tlsConfig.caFile",
				cred: "tlsConfig.certFile and keyFile",
			})
		}
	}
}

var svcHost = regexp.MustCompile(`^([a-z0-9-]+)\.([a-z0-9-]+)\.svc(\.cluster\.local)?\.?$`)

// clientTLS is how a client of drover serve reaches it.
type clientTLS struct {
	tls  bool   // over TLS
	cert bool   // presenting a client certificate
	how  string // what turns TLS on in the client, for messages
	cred string // what gives it a client certificate, for messages
}

// serviceRef checks an in-cluster address NAME.NAMESPACE.svc:PORT: the
// Service exists and has that port, the container behind it listens
// there with the flag -flag, and the client speaks TLS (with a client
// certificate) exactly when drover serve does (asks for one).
func (c *checker) serviceRef(m manifest, what, addr, flag string, client clientTLS) {
	host, p, err := net.SplitHostPort(addr)
	port, err2 := strconv.Atoi(p)
	sm := svcHost.FindStringSubmatch(host)
	if err != nil || err2 != nil || sm == nil {
		c.errorf(m, "%s: want SERVICE.NAMESPACE.svc:PORT", what)
		return
	}
	sman, ok := c.find("Service", sm[2], sm[1])
	if !ok {
		c.errorf(m, "%s: no Service %s in namespace %s", what, sm[1], sm[2])
		return
	}
	svc := sman.obj.(*corev1.Service)
	i := slices.IndexFunc(svc.Spec.Ports, func(sp corev1.ServicePort) bool { return int(sp.Port) == port })
	if i < 0 {
		c.errorf(m, "%s: Service %s has no port %d", what, svc.Name, port)
		return
	}
	target := svc.Spec.Ports[i].TargetPort
	if target.Type == intstr.Int && target.IntVal == 0 {
		target = intstr.FromInt32(svc.Spec.Ports[i].Port)
	}
	sel := labels.SelectorFromSet(svc.Spec.Selector)
	for _, w := range c.workloads {
		if w.m.namespace != svc.Namespace || len(svc.Spec.Selector) == 0 || !sel.Matches(labels.Set(w.labels)) {
			continue
		}
		ct, cport, ok := podPort(w.spec, target)
		if !ok {
			continue // service() reports it
		}
		server := droverArgs(ct.Args, nil)
		listen := server.values[flag]
		if _, lp, err := net.SplitHostPort(listen); err != nil || lp != strconv.Itoa(int(cport)) {
			c.errorf(m, "%s: Service port %d leads to %s's port %d, where drover listens with -%s=%q", what, port, w.m, cport, flag, listen)
			continue
		}
		serverTLS := server.values["tls-cert"] != ""
		switch {
		case serverTLS && !client.tls:
			c.errorf(m, "%s: drover serve (%s) serves TLS there (-tls-cert), the client speaks plaintext: it needs %s", what, w.m, client.how)
		case !serverTLS && client.tls:
			c.errorf(m, "%s: the client speaks TLS, drover serve (%s) does not (no -tls-cert)", what, w.m)
		case serverTLS && server.values["tls-client-ca"] != "" && !client.cert:
			c.errorf(m, "%s: drover serve (%s) requires a client certificate (-tls-client-ca), the client presents none: it needs %s", what, w.m, client.cred)
		}
	}
}

// tokenTransport mirrors drover's own rule for the bearer token: `drover
// serve -token-file` needs -tls-cert and -tls-key unless its -addr is
// loopback (a port alone binds 127.0.0.1), and a client (`drover agent`,
// `drover place`) with -token-file needs -tls-ca unless its server
// address is loopback. -tls-cert and -tls-key go together, and serve's
// -tls-client-ca needs them.
func tokenTransport(d droverCall) error {
	_, token := d.values["token-file"]
	switch d.cmd {
	case "serve":
		cert, key := d.values["tls-cert"] != "", d.values["tls-key"] != ""
		if cert != key || d.values["tls-client-ca"] != "" && !cert {
			return fmt.Errorf("drover serve: -tls-cert and -tls-key go together, and -tls-client-ca needs them")
		}
		addr, ok := d.values["addr"]
		if !ok {
			addr = "127.0.0.1:50051" // drover serve's default
		}
		if token && !cert && !loopbackAddr(listenAddr(addr)) {
			return fmt.Errorf("drover serve -token-file without -tls-cert and -tls-key on -addr %s, not loopback: drover serve refuses to start (the token would travel in plaintext)", addr)
		}
	case "agent", "place":
		flag := map[string]string{"agent": "server", "place": "addr"}[d.cmd]
		if (d.values["tls-cert"] != "") != (d.values["tls-key"] != "") {
			return fmt.Errorf("drover %s: -tls-cert and -tls-key go together", d.cmd)
		}
		addr, ok := d.values[flag]
		if !ok {
			addr = "127.0.0.1:50051" // the clients' default
		}
		if token && d.values["tls-ca"] == "" && !loopbackAddr(addr) {
			return fmt.Errorf("drover %s -token-file without -tls-ca to -%s %s, not loopback: drover %s refuses to send the token in plaintext", d.cmd, flag, addr, d.cmd)
		}
	}
	return nil
}

// listenAddr is the address a listen flag binds: a port alone (":8888",
// "8888") binds 127.0.0.1, as drover serve's flags do.
func listenAddr(addr string) string {
	if !strings.Contains(addr, ":") {
		addr = ":" + addr
	}
	if host, port, err := net.SplitHostPort(addr); err == nil && host == "" {
		return net.JoinHostPort("127.0.0.1", port)
	}
	return addr
}

// loopbackAddr reports whether addr (host:port, a gRPC target such as
// dns:///host:port, or a host alone) is this machine as drover decides it
// (serve.LoopbackHost): a loopback IP, "localhost", or no host.
func loopbackAddr(addr string) bool {
	if i := strings.Index(addr, ":///"); i >= 0 {
		addr = addr[i+4:]
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	host = strings.Trim(host, "[]")
	if host == "" || strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// probePort is the port a probe connects to.
func probePort(p *corev1.Probe) (intstr.IntOrString, bool) {
	switch {
	case p == nil:
	case p.HTTPGet != nil:
		return p.HTTPGet.Port, true
	case p.TCPSocket != nil:
		return p.TCPSocket.Port, true
	case p.GRPC != nil:
		return intstr.FromInt32(p.GRPC.Port), true
	}
	return intstr.IntOrString{}, false
}

// containerPort finds a port of the container by name or number.
func containerPort(ct corev1.Container, port intstr.IntOrString) (int32, bool) {
	for _, p := range ct.Ports {
		if (port.Type == intstr.String && p.Name == port.StrVal) || (port.Type == intstr.Int && p.ContainerPort == port.IntVal) {
			return p.ContainerPort, true
		}
	}
	return 0, false
}

// podPort finds the container of a pod that has the port.
func podPort(spec *corev1.PodSpec, port intstr.IntOrString) (corev1.Container, int32, bool) {
	for _, ct := range spec.Containers {
		if p, ok := containerPort(ct, port); ok {
			return ct, p, true
		}
	}
	return corev1.Container{}, 0, false
}

var envRef = regexp.MustCompile(`\$\$|\$\(([A-Za-z_][A-Za-z0-9_]*)\)`)

// envRefs returns the variables $(VAR) refers to in a Kubernetes argument
// ($$ escapes a $).
func envRefs(s string) []string {
	var out []string
	for _, sm := range envRef.FindAllStringSubmatch(s, -1) {
		if sm[1] != "" {
			out = append(out, sm[1])
		}
	}
	return out
}

// droverCall is a container's args read as `drover <cmd> [flags]`.
type droverCall struct {
	cmd    string
	order  []string          // flag names, as given
	values map[string]string // flag -> value ("" for a bare flag)
	bare   []string          // flags given without a value (-quiet)
	rest   []string          // arguments after the flags
	err    error
}

// droverArgs reads args as Go's flag package reads `drover <cmd>`'s flags.
// known (from flagLister) says which flags take a value; without it, or for
// a flag it lacks, a flag followed by a word that does not start with "-"
// takes that word as its value.
func droverArgs(args []string, known map[string]bool) droverCall {
	d := droverCall{values: map[string]string{}}
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		d.err = fmt.Errorf("%q: want a drover command first", args)
		return d
	}
	d.cmd = args[0]
	for i := 1; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			d.rest = args[i+1:]
			break
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			d.rest = args[i:]
			break
		}
		name := strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-")
		name, val, hasVal := strings.Cut(name, "=")
		takes, isKnown := known[name]
		if !hasVal && i+1 < len(args) && (takes || !isKnown && !strings.HasPrefix(args[i+1], "-")) {
			val, hasVal = args[i+1], true
			i++
		}
		if _, dup := d.values[name]; dup {
			d.err = fmt.Errorf("flag -%s given twice", name)
		}
		d.order = append(d.order, name)
		d.values[name] = val
		if !hasVal {
			d.bare = append(d.bare, name)
		}
	}
	return d
}
