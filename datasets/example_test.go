package datasets_test

import (
	"fmt"

	"github.com/drover-sched/drover/datasets"
)

// Decode a Pollux workload and look at its jobs.
func Example() {
	data := []byte("name,time,application,num_replicas,batch_size\n" +
		"deepspeech2-1,110,deepspeech2,6,320\n" +
		"cifar10-0,107,cifar10,6,2048\n")
	w, err := datasets.Decode(datasets.FormatAuto, data, datasets.Options{Source: "workload.csv"})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, j := range w.Jobs {
		fmt.Println(j.Name, j.Submit, j.Model, j.GPUs, j.BatchSize)
	}
	// Output:
	// cifar10-0 107 cifar10 6 2048
	// deepspeech2-1 110 deepspeech2 6 320
}

// Bad rows name the file, line and field.
func ExampleDecode_error() {
	data := []byte("name,time,application,num_replicas,batch_size\n" +
		"a-0,1,cifar10,0,128\n")
	_, err := datasets.Decode(datasets.FormatPollux, data, datasets.Options{Source: "w.csv"})
	fmt.Println(err)
	// Output:
	// w.csv:2: field num_replicas: datasets: gpus must be >= 1: got 0
}

// The embedded default workload.
func ExampleBuiltin() {
	w := datasets.Builtin()
	fmt.Println(w.Name, len(w.Jobs))
	// Output:
	// builtin 400
}
