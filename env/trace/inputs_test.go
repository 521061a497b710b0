package trace

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/drover-sched/drover/datasets"
	"github.com/drover-sched/drover/internal/inputfile"
)

// TestLoadClusterRefuses: drover sim --cluster with a device, a FIFO or a
// node list naming a node twice is refused, naming the path or both
// lines; on the code before, /dev/zero read until memory ran out, a FIFO
// blocked and the duplicate was accepted silently.
func TestLoadClusterRefuses(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	dup := filepath.Join(dir, "dup.csv")
	if err := os.WriteFile(dup, []byte("sn,cpu_milli,memory_mib,gpu,model\nn0,64000,262144,2,P100\nn0,64000,262144,2,P100\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		spec, want string
		is         error
	}{
		{"/dev/zero", "/dev/zero: not a regular file (a character device)", inputfile.ErrNotRegular},
		{fifo, fifo + ": not a regular file (a FIFO)", inputfile.ErrNotRegular},
		{dup, dup + `:3: field sn: datasets: duplicate node name: "n0", also on line 2`, datasets.ErrDuplicateNode},
	}
	for _, tt := range tests {
		_, _, err := LoadCluster(tt.spec, 0, 0)
		if !errors.Is(err, tt.is) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("LoadCluster(%s): %v, want %q", tt.spec, err, tt.want)
		}
	}
}

// TestPAIClusterDuplicate: nodes given in code are held to the node
// list's rule: two nodes of one name are refused, naming both entries.
func TestPAIClusterDuplicate(t *testing.T) {
	nodes := []datasets.Node{
		{Name: "a", CPUMilli: 8000, MemoryMiB: 1024, GPUs: 1, GPUModel: "T4"},
		{Name: "b", CPUMilli: 8000, MemoryMiB: 1024, GPUs: 1, GPUModel: "T4"},
		{Name: "a", CPUMilli: 8000, MemoryMiB: 1024, GPUs: 1, GPUModel: "T4"},
	}
	_, err := PAICluster(nodes, ClusterOptions{})
	if want := `trace: nodes 0 and 2 are both named "a"`; err == nil || err.Error() != want {
		t.Errorf("got %v, want %q", err, want)
	}
	if _, err := PAICluster(nodes[:2], ClusterOptions{}); err != nil {
		t.Errorf("distinct names: %v", err)
	}
}
