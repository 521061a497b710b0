package profile_test

import (
	"fmt"

	"github.com/drover-sched/drover/env/profile"
)

func ExampleBuiltin() {
	f, err := profile.Builtin("imagenet")
	if err != nil {
		panic(err)
	}
	step, _ := f.Throughput([]int{4, 4}, 100)
	fmt.Printf("%s: %d epochs, batch sizes %d..%d, 8 GPUs at 100/GPU: %.2f s/iteration\n",
		f.Name(), f.MaxEpochs(), f.InitBatchSize(), f.MaxBatchSize(), step)
	fmt.Println(profile.BuiltinNames())
	// Output:
	// imagenet: 90 epochs, batch sizes 200..12800, 8 GPUs at 100/GPU: 0.57 s/iteration
	// [bert cifar10 deepspeech2 imagenet ncf yolov3]
}
