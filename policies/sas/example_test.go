package sas_test

import (
	"fmt"

	"github.com/drover-sched/drover/policies/sas"
)

// A slow parameter server hands shards to the others until it no longer
// holds the job back.
func ExampleReassign() {
	sizes := []float64{1, 1, 1, 1, 1, 1}
	server := []int{0, 1, 2, 0, 1, 2}
	speed := []float64{1, 1, 0.5} // server 2 runs at half speed
	r := sas.Reassign(sizes, server, speed, 0.2)
	fmt.Println(r.Server, r.Before, r.After)
	// Output: [0 1 0 0 1 2] 4 3
}
