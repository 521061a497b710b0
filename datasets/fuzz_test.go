package datasets

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// fuzzDecode decodes data in format f with and without SkipBad and checks
// the invariants of any workload that comes back.
func fuzzDecode(t *testing.T, f Format, data []byte) {
	t.Helper()
	for _, skip := range []bool{false, true} {
		w, err := Decode(f, data, Options{Source: "fuzz", SkipBad: skip})
		if err != nil {
			continue
		}
		checkInvariants(t, w)
		if w.Format != f {
			t.Fatalf("format %q, want %q", w.Format, f)
		}
	}
}

func FuzzDecodePollux(f *testing.F) {
	f.Add([]byte("")) // past crasher: csv.Reader.FieldPos panicked on an empty file
	f.Add([]byte("name,time,application,num_replicas,batch_size\ncifar10-0,107,cifar10,6,2048\nncf-2,1,ncf,1,32768\n"))
	f.Add([]byte("name,time,application,num_replicas,batch_size\nx,NaN,bert,1,1\n"))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzDecode(t, FormatPollux, data) })
}

func FuzzDecodePhilly(f *testing.F) {
	f.Add([]byte("")) // past crasher: csv.Reader.FieldPos panicked on an empty file
	f.Add([]byte("timestamp,duration,num_gpus,gpu_time,cluster\n2017-10-09 07:01:55,66.0,1,66.0,11cb48\n2017-09-29 07:58:32,860662.0,8,1.0,6c71a0\n"))
	f.Add([]byte("timestamp,duration,num_gpus\n0000-02-30 24:00:00,1,1\n"))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzDecode(t, FormatPhilly, data) })
}

func FuzzDecodeHelios(f *testing.F) {
	f.Add([]byte("")) // past crasher: csv.Reader.FieldPos panicked on an empty file
	f.Add([]byte("# c\njob_id,user,tenant,class,submit_time,num_chips,chip_type,num_nodes,duration_s,walltime_limit_s,final_status\n765563,u,vcvGl,finetune,5835000000,128,,16,24.0,24.0,CANCELED\n"))
	f.Add([]byte("\ufeff# c\njob_id,submit_time,num_chips,duration_s\n1,0,1,1\n")) // a BOM before a comment line
	f.Fuzz(func(t *testing.T, data []byte) { fuzzDecode(t, FormatHelios, data) })
}

func FuzzDecodeAlibaba(f *testing.F) {
	f.Add([]byte("")) // past crasher: csv.Reader.FieldPos panicked on an empty file
	f.Add([]byte("name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\nopenb-pod-0000,12000,16384,1,1000,,LS,Running,0,12537496,0\np1,1,1,1,460,,BE,Pending,5,6,\n"))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzDecode(t, FormatAlibaba, data) })
}

func FuzzDecodeJobs(f *testing.F) {
	f.Add([]byte("")) // past crasher: csv.Reader.FieldPos panicked on an empty file
	f.Add(builtinCSV[:min(len(builtinCSV), 2000)])
	f.Add([]byte("name,submit,gpus,duration,model,batch_size,cluster,status,cpu_milli,memory_mib\n\"a,\"\"b\",1e308,1,0,bert,,,,0,0\n"))
	// Version 2: the arch columns, with a said, an unsaid and a bad row.
	f.Add([]byte("name,submit,gpus,duration,model,batch_size,cluster,status,cpu_milli,memory_mib,arch,ps_shards\n" +
		"a,0,8,60,ncf,0,,,0,0,ps,8\nb,1,4,60,bert,0,,,0,0,,\nc,2,2,1,ncf,0,,,0,0,ring,3\nd,3,2,1,ncf,0,,,0,0,PS,-1\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzDecode(t, FormatJobs, data)
		// What decodes also re-encodes to the same jobs.
		w, err := Decode(FormatJobs, data, Options{})
		if err != nil {
			return
		}
		w2, err := Decode(FormatJobs, Encode(w, nil), Options{})
		if err != nil {
			t.Fatalf("re-decode: %v", err)
		}
		if len(w2.Jobs) != len(w.Jobs) {
			t.Fatalf("re-decode: %d jobs, want %d", len(w2.Jobs), len(w.Jobs))
		}
		for i, j := range w2.Jobs {
			if j.Arch != w.Jobs[i].Arch || j.PSShards != w.Jobs[i].PSShards {
				t.Fatalf("re-decode: job %s is %s/%d, was %s/%d", j.Name, j.Arch, j.PSShards, w.Jobs[i].Arch, w.Jobs[i].PSShards)
			}
		}
	})
}

func FuzzDecodePAINodes(f *testing.F) {
	f.Add([]byte("")) // past crasher: csv.Reader.FieldPos panicked on an empty file
	f.Add([]byte("sn,cpu_milli,memory_mib,gpu,model\nopenb-node-0000,64000,262144,2,P100\nn1,1,1,0,\n"))
	f.Add([]byte("\ufeffsn,cpu_milli,memory_mib,gpu,model\nn0,1,1,0,\nn0,1,1,0,\n")) // a BOM, a duplicate
	f.Fuzz(func(t *testing.T, data []byte) {
		nodes, err := DecodePAINodes(data, Options{Source: "fuzz"})
		if err != nil {
			return
		}
		names := map[string]bool{}
		for _, n := range nodes {
			if n.GPUs < 0 || n.CPUMilli < 0 || n.MemoryMiB < 0 {
				t.Fatalf("negative capacity in %+v", n)
			}
			if names[n.Name] {
				t.Fatalf("node %q twice", n.Name)
			}
			names[n.Name] = true
		}
	})
}

// FuzzReadParquet mutates a valid file: the seed is the random seed of the
// workload written, plus byte edits chosen by the fuzzer.
func FuzzReadParquet(f *testing.F) {
	f.Add(uint64(1), uint32(0), byte(0), []byte{})
	f.Add(uint64(2), uint32(100), byte(0xff), []byte("PAR1"))
	f.Add(uint64(3), uint32(0), byte(0), []byte{}) // 6 jobs, one of them PS (the arch and ps_shards columns)
	f.Fuzz(func(t *testing.T, seed uint64, at uint32, xor byte, tail []byte) {
		r := rand.New(rand.NewPCG(seed, seed))
		wl := Synthetic(DefaultParams(), 1+r.IntN(20), rand.NewPCG(seed, 1))
		var buf bytes.Buffer
		if err := WriteParquet(&buf, wl); err != nil {
			t.Fatal(err)
		}
		data := buf.Bytes()
		if len(data) > 0 {
			data[int(at)%len(data)] ^= xor
		}
		if len(tail) > 0 {
			data = append(data[:max(0, len(data)-len(tail))], tail...)
		}
		w, err := ReadParquet(data, Options{Source: "fuzz"})
		if err != nil {
			return
		}
		checkInvariants(t, w)
	})
}
