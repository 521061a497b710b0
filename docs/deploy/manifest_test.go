package deploy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"reflect"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// manifest is one decoded YAML document of a file in this directory.
type manifest struct {
	file       string // base name, e.g. "server.yaml"
	doc        int    // 0-based position in the file, counting non-empty documents
	apiVersion string
	kind       string
	name       string
	namespace  string
	obj        any // pointer to the k8s.io/api type of apiVersion+kind
}

func (m manifest) String() string {
	return fmt.Sprintf("%s#%d %s/%s", m.file, m.doc, m.kind, m.name)
}

// kinds maps "apiVersion kind" to a constructor of the k8s.io/api type the
// document decodes into. A kind missing here fails the test: add it here
// (and its checks) before using it in a manifest.
var kinds = map[string]func() any{
	"v1 Namespace":             func() any { return new(corev1.Namespace) },
	"v1 ServiceAccount":        func() any { return new(corev1.ServiceAccount) },
	"v1 Secret":                func() any { return new(corev1.Secret) },
	"v1 ConfigMap":             func() any { return new(corev1.ConfigMap) },
	"v1 Service":               func() any { return new(corev1.Service) },
	"v1 PersistentVolumeClaim": func() any { return new(corev1.PersistentVolumeClaim) },
	"apps/v1 Deployment":       func() any { return new(appsv1.Deployment) },
	"apps/v1 DaemonSet":        func() any { return new(appsv1.DaemonSet) },
	"batch/v1 Job":             func() any { return new(batchv1.Job) },
}

// load decodes every *.yaml file at the top of fsys, in name order (the
// order kubectl apply -f DIR applies them).
func load(fsys fs.FS) ([]manifest, error) {
	names, err := fs.Glob(fsys, "*.yaml")
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	if len(names) == 0 {
		return nil, fmt.Errorf("no *.yaml files")
	}
	var out []manifest
	for _, name := range names {
		b, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, err
		}
		ms, err := decodeFile(name, b)
		if err != nil {
			return nil, err
		}
		out = append(out, ms...)
	}
	return out, nil
}

// splitDocuments splits a multi-document YAML file on its `---` lines.
func splitDocuments(b []byte) [][]byte {
	var docs [][]byte
	var cur []byte
	for line := range bytes.Lines(b) {
		if s := strings.TrimRight(string(line), " \t\r\n"); s == "---" {
			docs = append(docs, cur)
			cur = nil
			continue
		}
		cur = append(cur, line...)
	}
	return append(docs, cur)
}

// decodeFile decodes each non-empty document of one file.
func decodeFile(name string, b []byte) ([]manifest, error) {
	var out []manifest
	for i, doc := range splitDocuments(b) {
		var v any
		if err := yaml.Unmarshal(doc, &v); err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", name, i, err)
		}
		if v == nil {
			continue // only comments
		}
		m, err := decodeObject(v)
		if err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", name, i, err)
		}
		m.file, m.doc = name, len(out)
		out = append(out, m)
	}
	return out, nil
}

// decodeObject decodes one document, already parsed into a generic value,
// strictly into the type its apiVersion and kind name.
func decodeObject(v any) (manifest, error) {
	top, ok := v.(map[string]any)
	if !ok {
		return manifest{}, fmt.Errorf("not a mapping but %T", v)
	}
	apiVersion, _ := top["apiVersion"].(string)
	kind, _ := top["kind"].(string)
	newObj, ok := kinds[apiVersion+" "+kind]
	if !ok {
		return manifest{}, fmt.Errorf("unknown kind %q of apiVersion %q (known: %s)", kind, apiVersion, knownKinds())
	}
	obj := newObj()
	if err := decodeStrict(v, obj); err != nil {
		return manifest{}, fmt.Errorf("%s: %w", kind, err)
	}
	meta := obj.(metav1.Object) // every kind embeds ObjectMeta
	m := manifest{apiVersion: apiVersion, kind: kind, name: meta.GetName(), namespace: meta.GetNamespace(), obj: obj}
	if m.name == "" {
		return manifest{}, fmt.Errorf("%s without metadata.name", kind)
	}
	return m, nil
}

func knownKinds() string {
	var ks []string
	for k := range kinds {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return strings.Join(ks, ", ")
}

// decodeStrict decodes a generic YAML value into dst through JSON, as
// kubectl does, rejecting unknown fields. encoding/json matches field names
// without regard to case, which the API server does not: checkKeys then
// rejects a key whose case differs from the field's.
func decodeStrict(v any, dst any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return err
	}
	if errs := checkKeys(v, reflect.TypeOf(dst), ""); len(errs) > 0 {
		return errs[0]
	}
	return nil
}

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

// checkKeys reports every mapping key of v that is not, exactly, the JSON
// name of a field of t (the Go type v decoded into). Types with their own
// JSON decoding (resource.Quantity, intstr.IntOrString, metav1.Duration)
// are leaves.
func checkKeys(v any, t reflect.Type, path string) []error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if reflect.PointerTo(t).Implements(unmarshalerType) || t.Implements(unmarshalerType) {
		return nil
	}
	var errs []error
	switch t.Kind() {
	case reflect.Struct:
		m, ok := v.(map[string]any)
		if !ok {
			return nil // a type error, which json.Decode reports
		}
		fields := jsonFields(t)
		for _, k := range sortedKeys(m) {
			ft, ok := fields[k]
			if !ok {
				errs = append(errs, fmt.Errorf("%s: unknown field %q", join(path, k), k))
				continue
			}
			errs = append(errs, checkKeys(m[k], ft, join(path, k))...)
		}
	case reflect.Map:
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		for _, k := range sortedKeys(m) {
			errs = append(errs, checkKeys(m[k], t.Elem(), join(path, k))...)
		}
	case reflect.Slice, reflect.Array:
		s, ok := v.([]any)
		if !ok {
			return nil // []byte is a base64 string
		}
		for i, e := range s {
			errs = append(errs, checkKeys(e, t.Elem(), fmt.Sprintf("%s[%d]", path, i))...)
		}
	}
	return errs
}

// jsonFields returns the JSON names of t's fields and their types, with the
// fields of embedded structs that have no JSON name of their own (metav1's
// TypeMeta) promoted, as encoding/json does.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for f := range t.Fields() {
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if name == "" && f.Anonymous {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				for k, v := range jsonFields(ft) {
					if _, ok := out[k]; !ok {
						out[k] = v
					}
				}
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f.Type
	}
	return out
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
