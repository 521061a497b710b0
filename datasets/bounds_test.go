package datasets

import (
	"errors"
	"strings"
	"testing"
)

// TestTimeBounds checks the issue-18 reproductions: a duration of 1e12 s
// (jobs table or Philly) or a submit time of 1e300 made drover sim run for
// ever. Every format now refuses a submit time (after rebasing) or a
// duration beyond MaxSeconds with an error naming the file, the line and
// the column, and SkipBad skips and counts such rows.
func TestTimeBounds(t *testing.T) {
	const jobsHdr = "name,submit,gpus,duration,model,batch_size,cluster,status,cpu_milli,memory_mib,arch,ps_shards\n"
	const phillyHdr = "timestamp,duration,num_gpus,gpu_time,cluster\n"
	const heliosHdr = "job_id,user,tenant,class,submit_time,num_chips,chip_type,num_nodes,duration_s,walltime_limit_s,final_status\n"
	const alibabaHdr = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n"
	const pod = "p0,1,1,1,1000,,LS,Running,0,100,0\n"
	tests := []struct {
		name   string
		format Format
		data   string
		want   string // "FILE:LINE: field COLUMN"
		reason string
	}{
		{"jobs duration 1e12", FormatJobs, jobsHdr + "a,0,4,1e12,cifar10,0,,,0,0,ring,0\nb,10,2,100,cifar10,0,,,0,0,ring,0\n", "w.csv:2: field duration", ReasonBadDuration},
		{"jobs duration just past", FormatJobs, jobsHdr + "b,10,2,100,cifar10,0,,,0,0,ring,0\na,0,4,100000001,cifar10,0,,,0,0,ring,0\n", "w.csv:3: field duration", ReasonBadDuration},
		{"jobs submit 1e300", FormatJobs, jobsHdr + "a,0,4,100,cifar10,0,,,0,0,ring,0\nb,1e300,2,100,cifar10,0,,,0,0,ring,0\n", "w.csv:3: field submit", ReasonBadSubmit},
		{"philly duration 1e12", FormatPhilly, phillyHdr + "2017-10-09 07:01:55,1e12,1,66.0,c\n2017-10-09 07:02:55,66,1,66.0,c\n", "w.csv:2: field duration", ReasonBadDuration},
		{"philly span", FormatPhilly, phillyHdr + "2017-10-09 07:01:55,66,1,66.0,c\n9999-10-09 07:01:55,66,1,66.0,c\n", "w.csv:3: field timestamp", ReasonBadSubmit},
		{"helios span", FormatHelios, heliosHdr + "1,u,t,c,5835000000,1,,1,24.0,24.0,DONE\n2,u,t,c,1e300,1,,1,24.0,24.0,DONE\n", "w.csv:3: field submit_time", ReasonBadSubmit},
		{"alibaba duration", FormatAlibaba, alibabaHdr + pod + "p1,1,1,1,1000,,LS,Running,0,1000000000000,0\n", "w.csv:3: field deletion_time", ReasonBadDuration},
		{"pollux time", FormatPollux, "name,time,application,num_replicas,batch_size\na,0,cifar10,1,128\nb,1e12,cifar10,1,128\n", "w.csv:3: field time", ReasonBadSubmit},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Decode(tt.format, []byte(tt.data), Options{Source: "w.csv"})
			var pe *ParseError
			if !errors.As(err, &pe) || !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Decode = %v, want a ParseError (%v) with %q", err, ErrTooLarge, tt.want)
			}
			w, err := Decode(tt.format, []byte(tt.data), Options{Source: "w.csv", SkipBad: true})
			if err != nil {
				t.Fatalf("SkipBad: %v", err)
			}
			checkInvariants(t, w)
			if len(w.Jobs) != 1 || w.Skipped != 1 || w.SkipReasons[tt.reason] != 1 {
				t.Errorf("SkipBad: %d jobs, %d skipped (%v), want 1 job and 1 %q", len(w.Jobs), w.Skipped, w.SkipReasons, tt.reason)
			}
		})
	}
	// The bound itself is accepted.
	w, err := Decode(FormatJobs, []byte(jobsHdr+"a,100000000,4,100000000,cifar10,0,,,0,0,ring,0\n"), Options{Source: "w.csv"})
	if err != nil || w.Jobs[0].Submit != MaxSeconds || w.Jobs[0].Duration != MaxSeconds {
		t.Errorf("at the bound: %v", err)
	}
}

// TestBatchSizeBound: a batch size of 99999999999999 beside a duration
// was taken silently (issue 32, item 7); beyond MaxBatchSize a row is now
// refused naming its file, line and column in each format with a batch
// size (SkipBad skips and counts it), and MaxBatchSize itself is taken.
func TestBatchSizeBound(t *testing.T) {
	const jobsHdr = "name,submit,gpus,duration,model,batch_size,cluster,status,cpu_milli,memory_mib,arch,ps_shards\n"
	const polluxHdr = "name,time,application,num_replicas,batch_size\n"
	tests := []struct {
		name   string
		format Format
		data   string
		want   string
	}{
		{"jobs", FormatJobs, jobsHdr + "a,0,4,100,cifar10,128,,,0,0,ring,0\nb,10,2,100,cifar10,99999999999999,,,0,0,ring,0\n", "w.csv:3: field batch_size"},
		{"jobs just past", FormatJobs, jobsHdr + "b,10,2,100,cifar10,16777217,,,0,0,ring,0\na,0,4,100,cifar10,128,,,0,0,ring,0\n", "w.csv:2: field batch_size"},
		{"pollux", FormatPollux, polluxHdr + "a,0,cifar10,1,128\nb,10,cifar10,1,99999999999999\n", "w.csv:3: field batch_size"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Decode(tt.format, []byte(tt.data), Options{Source: "w.csv"})
			if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "16777216") {
				t.Fatalf("Decode = %v, want %v with %q and the bound", err, ErrTooLarge, tt.want)
			}
			w, err := Decode(tt.format, []byte(tt.data), Options{Source: "w.csv", SkipBad: true})
			if err != nil || len(w.Jobs) != 1 || w.SkipReasons[ReasonBadResources] != 1 {
				t.Errorf("SkipBad: %v, %d jobs, skipped %v; want 1 job and 1 %q", err, len(w.Jobs), w.SkipReasons, ReasonBadResources)
			}
		})
	}
	w, err := Decode(FormatJobs, []byte(jobsHdr+"a,0,4,100,cifar10,16777216,,,0,0,ring,0\n"), Options{Source: "w.csv"})
	if err != nil || w.Jobs[0].BatchSize != MaxBatchSize {
		t.Errorf("at the bound: %v", err)
	}
}
