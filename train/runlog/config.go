package runlog

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/drover-sched/drover/internal/atomicfile"
	"github.com/drover-sched/drover/internal/inputfile"
	"go.yaml.in/yaml/v3"
)

// ConfigFile is the name of the effective config in a run directory.
const ConfigFile = "config.yaml"

// ErrConfig wraps every problem OverlayConfig and LoadConfig find in a
// YAML config.
var ErrConfig = errors.New("runlog: config")

// Section is one top-level key of a run's YAML config and the struct its
// keys set. `drover train` uses the sections "ppo" (ppo.Config), "dqn"
// (dqn.Config), "env" (the environment's settings) and "train" (the
// command's own: steps, seed, output).
//
// Inside a section, a field is set by the key SnakeCase(field name)
// (LR -> lr, AnnealLR -> anneal_lr, NumEnvs -> num_envs, GPUsPerNode ->
// gpus_per_node), or by the name in its `yaml:"name"` tag when it has one;
// `yaml:"-"` and unexported fields are left out. Fields of kinds YAML
// cannot express (func, chan, map, interface, pointer) are left out too.
// A struct-valued field is a nested mapping, a slice a YAML sequence that
// replaces the whole slice, a time.Duration a string such as "90s".
type Section struct {
	// Name is the section's top-level key, e.g. "ppo".
	Name string
	// Config points to the struct the section sets, e.g. &cfg with cfg a
	// ppo.Config holding the defaults.
	Config any
}

// LoadConfig reads the YAML file at path and overlays it onto sections,
// as OverlayConfig does.
func LoadConfig(path string, sections ...Section) error {
	data, err := inputfile.ReadFile(path, inputfile.Document)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrConfig, err)
	}
	return OverlayConfig(path, data, sections...)
}

// OverlayConfig sets the fields of sections' structs that the YAML
// document data names, leaving the others as they are, so that a config
// file need only list what differs from the defaults. It is strict: an
// unknown section or key, a key given twice, a null, or a value of the
// wrong type is an error wrapping ErrConfig that names
// file:line:column (file is name) and the key. On error no struct is
// changed. An empty document changes nothing, and a leading UTF-8
// byte-order mark is skipped.
//
// A Section whose Config is not a non-nil pointer to a struct, two
// sections of one name, or two fields with one key are programmer
// errors: OverlayConfig panics.
func OverlayConfig(name string, data []byte, sections ...Section) error {
	checkSections(sections)
	dec := yaml.NewDecoder(bytes.NewReader(inputfile.TrimBOM(data)))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if err == io.EOF {
			return nil
		}
		return syntaxError(name, err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err != io.EOF {
		if err != nil {
			return syntaxError(name, err)
		}
		return fmt.Errorf("%w: %s:%d: a second YAML document; want one", ErrConfig, name, extra.Line)
	}
	root := deref(&doc)
	if root.Kind == yaml.DocumentNode {
		if len(root.Content) == 0 {
			return nil
		}
		root = deref(root.Content[0])
	}
	if root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
		return nil
	}
	// Overlay onto copies, then commit them all.
	copies := make([]reflect.Value, len(sections))
	for i, s := range sections {
		v := reflect.ValueOf(s.Config).Elem()
		copies[i] = reflect.New(v.Type()).Elem()
		copies[i].Set(v)
	}
	o := overlay{file: name}
	names := make([]string, len(sections))
	for i, s := range sections {
		names[i] = s.Name
	}
	err := o.mapping(root, "", names, func(key *yaml.Node, val *yaml.Node) error {
		i := slices.Index(names, key.Value)
		return o.structure(val, sections[i].Name, copies[i])
	})
	if err != nil {
		return err
	}
	for i, s := range sections {
		reflect.ValueOf(s.Config).Elem().Set(copies[i])
	}
	return nil
}

// syntaxError turns the parser's "yaml: line N: msg" into "name:N: msg".
func syntaxError(name string, err error) error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		if line, m, ok := strings.Cut(rest, ": "); ok {
			return fmt.Errorf("%w: %s:%s: %s", ErrConfig, name, line, m)
		}
	}
	return fmt.Errorf("%w: %s: %s", ErrConfig, name, msg)
}

type overlay struct{ file string }

func (o overlay) errorf(n *yaml.Node, format string, args ...any) error {
	return fmt.Errorf("%w: %s:%d:%d: %s", ErrConfig, o.file, n.Line, n.Column, fmt.Sprintf(format, args...))
}

// mapping checks that n is a mapping whose keys are all in known, each
// once, and calls f for each key and value. path names n in errors ("" for
// the document).
func (o overlay) mapping(n *yaml.Node, path string, known []string, f func(key, val *yaml.Node) error) error {
	what := "the document"
	if path != "" {
		what = path
	}
	n = deref(n)
	if n.Kind != yaml.MappingNode {
		return o.errorf(n, "%s must be a mapping of keys to values", what)
	}
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		key, val := deref(n.Content[i]), n.Content[i+1]
		if key.Kind != yaml.ScalarNode {
			return o.errorf(key, "a key of %s is not a scalar", what)
		}
		full := key.Value
		if path != "" {
			full = path + "." + key.Value
		}
		if line, ok := seen[key.Value]; ok {
			return o.errorf(key, "key %q given twice (first at line %d)", full, line)
		}
		seen[key.Value] = key.Line
		if !slices.Contains(known, key.Value) {
			kind := "key"
			if path == "" {
				kind = "section"
			}
			return o.errorf(key, "unknown %s %q (%s has: %s)", kind, full, what, strings.Join(known, ", "))
		}
		if v := deref(val); v.Kind == yaml.ScalarNode && v.Tag == "!!null" {
			return o.errorf(val, "key %q has no value", full)
		}
		if err := f(key, val); err != nil {
			return err
		}
	}
	return nil
}

// structure overlays mapping n onto the struct v.
func (o overlay) structure(n *yaml.Node, path string, v reflect.Value) error {
	fields := structFields(v.Type())
	known := make([]string, len(fields))
	for i, f := range fields {
		known[i] = f.key
	}
	return o.mapping(n, path, known, func(key, val *yaml.Node) error {
		f := fields[slices.Index(known, key.Value)]
		return o.value(val, path+"."+f.key, v.FieldByIndex(f.index))
	})
}

// value overlays n onto the settable v.
func (o overlay) value(n *yaml.Node, path string, v reflect.Value) error {
	n = deref(n)
	if nested(v.Type()) {
		return o.structure(n, path, v)
	}
	if err := o.wholeNumbers(n, path, v.Type()); err != nil {
		return err
	}
	target := reflect.New(v.Type())
	if err := n.Decode(target.Interface()); err != nil {
		msg := err.Error()
		var te *yaml.TypeError
		if errors.As(err, &te) && len(te.Errors) > 0 {
			msg = te.Errors[0]
			if _, after, ok := strings.Cut(msg, ": "); ok && strings.HasPrefix(msg, "line ") {
				msg = after
			}
		}
		return o.errorf(n, "%s: %s", path, msg)
	}
	if e := target.Elem(); e.Kind() == reflect.Slice && e.Len() == 0 {
		// An empty sequence is the zero value, as RenderConfig writes a
		// nil slice: the round trip keeps nil nil.
		v.SetZero()
		return nil
	}
	v.Set(target.Elem())
	return nil
}

// wholeNumbers rejects a float with a fraction for an integer of type t
// (or in a sequence of them), which the YAML decoder would truncate.
// Floats without one, such as 1e6, are fine.
func (o overlay) wholeNumbers(n *yaml.Node, path string, t reflect.Type) error {
	n = deref(n)
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		if n.Kind == yaml.SequenceNode {
			for i, e := range n.Content {
				if err := o.wholeNumbers(e, fmt.Sprintf("%s[%d]", path, i), t.Elem()); err != nil {
					return err
				}
			}
		}
		return nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
	default:
		return nil
	}
	if t == reflect.TypeFor[time.Duration]() || n.Kind != yaml.ScalarNode || n.ShortTag() != "!!float" {
		return nil
	}
	var x float64
	if err := n.Decode(&x); err != nil || x != math.Trunc(x) {
		return o.errorf(n, "%s: %s is not a whole number, want %s", path, n.Value, t)
	}
	return nil
}

func deref(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

// field is a struct field a config key sets.
type field struct {
	key   string
	index []int
}

// structFields lists the fields of struct type t that YAML can set, in
// declaration order. Two fields with one key are a programmer error.
func structFields(t reflect.Type) []field {
	var fs []field
	seen := map[string]string{}
	for i := range t.NumField() {
		sf := t.Field(i)
		if !sf.IsExported() || !yamlKind(sf.Type) {
			continue
		}
		key := SnakeCase(sf.Name)
		if tag, ok := sf.Tag.Lookup("yaml"); ok {
			name, _, _ := strings.Cut(tag, ",")
			if name == "-" {
				continue
			}
			if name != "" {
				key = name
			}
		}
		if other, ok := seen[key]; ok {
			panic(fmt.Sprintf("runlog: %s fields %s and %s both have the config key %q", t, other, sf.Name, key))
		}
		seen[key] = sf.Name
		fs = append(fs, field{key: key, index: sf.Index})
	}
	return fs
}

// yamlKind reports whether a config field of type t can be written as
// YAML and read back: a scalar, a slice or array of scalars, or a struct.
func yamlKind(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		return scalarKind(t.Elem())
	case reflect.Struct:
		return true
	}
	return scalarKind(t)
}

func scalarKind(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Bool, reflect.String, reflect.Float32, reflect.Float64,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return true
	}
	return t == reflect.TypeFor[time.Time]()
}

// nested reports whether t is a struct written as a nested mapping.
func nested(t reflect.Type) bool {
	return t.Kind() == reflect.Struct && t != reflect.TypeFor[time.Time]()
}

// checkStruct validates s's Config and the keys of its structs.
func checkStruct(s Section) {
	v := reflect.ValueOf(s.Config)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		panic(fmt.Sprintf("runlog: section %q: Config is %T, want a non-nil pointer to a struct", s.Name, s.Config))
	}
	var check func(t reflect.Type)
	check = func(t reflect.Type) {
		for _, f := range structFields(t) {
			if ft := t.FieldByIndex(f.index).Type; nested(ft) {
				check(ft)
			}
		}
	}
	check(v.Elem().Type())
}

func checkSections(sections []Section) {
	seen := map[string]bool{}
	for _, s := range sections {
		if seen[s.Name] {
			panic(fmt.Sprintf("runlog: two sections named %q", s.Name))
		}
		seen[s.Name] = true
		checkStruct(s)
	}
}

// SnakeCase maps a Go field name to its config key: words split at each
// change from lower case or digit to upper case, and before the last
// capital of a run of capitals that a lower-case letter follows; a run of
// capitals followed by a lone "s" is a plural acronym and keeps it. So
// LR -> lr, AnnealLR -> anneal_lr, NumEnvs -> num_envs, MaxGradNorm ->
// max_grad_norm, StartE -> start_e, HTTPServer -> http_server,
// GPUsPerNode -> gpus_per_node, AvgJCT -> avg_jct, Hidden2 -> hidden2.
func SnakeCase(name string) string {
	r := []rune(name)
	var b strings.Builder
	upper := func(i int) bool { return i < len(r) && unicode.IsUpper(r[i]) }
	lower := func(i int) bool { return i < len(r) && unicode.IsLower(r[i]) }
	for i := 0; i < len(r); i++ {
		c := r[i]
		if unicode.IsUpper(c) && i > 0 {
			prevWord := lower(i-1) || unicode.IsDigit(r[i-1])
			// The last capital of a run starts a new word when a
			// lower-case letter follows it, unless that is a plural
			// acronym's "s" (GPUs, IDs).
			acronymEnd := upper(i-1) && lower(i+1) && !(r[i+1] == 's' && !lower(i+2))
			if prevWord || acronymEnd {
				b.WriteByte('_')
			}
		}
		b.WriteRune(unicode.ToLower(c))
	}
	return b.String()
}

// RenderConfig renders sections as one YAML document: each section's
// key, then every field (per Section's mapping) with its current value,
// in declaration order. OverlayConfig reads it back to the same values;
// `drover train` logs it at start and saves it as config.yaml in the run
// directory. It panics as OverlayConfig does on a bad Section.
func RenderConfig(sections ...Section) ([]byte, error) {
	checkSections(sections)
	root := &yaml.Node{Kind: yaml.MappingNode}
	for _, s := range sections {
		val, err := renderStruct(reflect.ValueOf(s.Config).Elem())
		if err != nil {
			return nil, fmt.Errorf("runlog: render section %s: %w", s.Name, err)
		}
		root.Content = append(root.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s.Name}, val)
	}
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(root); err != nil {
		return nil, fmt.Errorf("runlog: render config: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("runlog: render config: %w", err)
	}
	return b.Bytes(), nil
}

func renderStruct(v reflect.Value) (*yaml.Node, error) {
	m := &yaml.Node{Kind: yaml.MappingNode}
	for _, f := range structFields(v.Type()) {
		fv := v.FieldByIndex(f.index)
		var val *yaml.Node
		var err error
		if nested(fv.Type()) {
			val, err = renderStruct(fv)
		} else {
			val = new(yaml.Node)
			err = val.Encode(fv.Interface())
			if val.Kind == yaml.SequenceNode {
				val.Style = yaml.FlowStyle
			}
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.key, err)
		}
		m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: f.key}, val)
	}
	return m, nil
}

// WriteConfig writes RenderConfig's text to dir/config.yaml: to a
// temporary file beside it, synced, then renamed into place, so a reader
// never sees half a config.
func WriteConfig(dir string, sections ...Section) error {
	text, err := RenderConfig(sections...)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("runlog: %w", err)
	}
	if err := atomicfile.WriteBytes(filepath.Join(dir, ConfigFile), text); err != nil {
		return fmt.Errorf("runlog: write config: %w", err)
	}
	return nil
}
