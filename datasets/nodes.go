package datasets

import (
	"fmt"
	"io"
)

// Node is one machine of the Alibaba PAI v2023 cluster
// (openb_node_list_*.csv), usable to size a simulated cluster.
type Node struct {
	Name      string // sn, e.g. "openb-node-0000"
	CPUMilli  int64  // CPU capacity in milli-cores
	MemoryMiB int64  // memory capacity in MiB
	GPUs      int    // GPU count (0 for CPU-only nodes)
	GPUModel  string // GPU type (G2, T4, P100, V100M16, ...), "" without GPUs
}

// DecodePAINodes parses an openb_node_list_*.csv table (sn,cpu_milli,
// memory_mib,gpu,model). Negative or malformed values, and a node name
// (sn) seen on an earlier line (ErrDuplicateNode, naming both lines), are
// errors, or are skipped under o.SkipBad. An empty list is an error.
func DecodePAINodes(data []byte, o Options) ([]Node, error) {
	t, err := openTable(data, o.Source, false, "sn", "cpu_milli", "memory_mib", "gpu")
	if err != nil {
		return nil, err
	}
	var nodes []Node
	seen := map[string]int{} // node name -> its line
	r := &row{t: t}
	for {
		rec, line, err := t.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			if !o.SkipBad {
				return nil, &ParseError{File: o.Source, Line: line, Field: "row", Err: err}
			}
			continue
		}
		r.rec, r.field, r.err = rec, "", nil
		n := Node{
			Name:      r.str("sn"),
			CPUMilli:  r.int("cpu_milli"),
			MemoryMiB: r.int("memory_mib"),
			GPUs:      r.gpus("gpu"),
			GPUModel:  r.str("model"),
		}
		switch {
		case r.err != nil:
		case n.CPUMilli < 0:
			r.fail("cpu_milli", fmt.Errorf("%w: %d", ErrNegative, n.CPUMilli))
		case n.MemoryMiB < 0:
			r.fail("memory_mib", fmt.Errorf("%w: %d", ErrNegative, n.MemoryMiB))
		case n.GPUs < 0:
			r.fail("gpu", fmt.Errorf("%w: %d", ErrNegative, n.GPUs))
		case seen[n.Name] > 0:
			r.fail("sn", fmt.Errorf("%w: %q, also on line %d", ErrDuplicateNode, n.Name, seen[n.Name]))
		default:
			seen[n.Name] = line
		}
		if r.err != nil {
			if !o.SkipBad {
				return nil, &ParseError{File: o.Source, Line: line, Field: r.field, Err: r.err}
			}
			continue
		}
		nodes = append(nodes, n)
	}
	if len(nodes) == 0 {
		return nil, &ParseError{File: o.Source, Field: "row", Err: ErrEmpty}
	}
	return nodes, nil
}

// ReadPAINodes reads and decodes an openb_node_list_*.csv file.
func ReadPAINodes(path string) ([]Node, error) {
	return readWith(path, "node list", Options{}, DecodePAINodes)
}
