package mmscale

import (
	"fmt"
	"math"
	"slices"

	"github.com/drover-sched/drover/datasets/llm"
)

// History is the statistics of a past trace that the initial sizes come
// from (ModServe section 4.2: "based on historical LMM inference traces").
type History struct {
	// ImageQPS is the median, over the trace's minutes, of the images
	// arriving a second.
	ImageQPS float64
	// RequestQPS is the median, over the trace's minutes, of the requests
	// arriving a second.
	RequestQPS float64
	// ImagesPerRequest is the median images of a request that carries
	// images.
	ImagesPerRequest float64
}

// HistoryOf returns the statistics of a trace, per minute from its first
// arrival's minute to its last one's (minutes without arrivals count as
// zero). It returns an error for a trace without requests or without
// images.
func HistoryOf(reqs []llm.Request) (History, error) {
	if len(reqs) == 0 {
		return History{}, fmt.Errorf("%w: empty history trace", ErrBadConfig)
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, r := range reqs {
		lo, hi = min(lo, r.Arrival), max(hi, r.Arrival)
	}
	first := math.Floor(lo / 60)
	n := int(math.Floor(hi/60)-first) + 1
	images := make([]float64, n)
	requests := make([]float64, n)
	var per []int
	for _, r := range reqs {
		m := int(math.Floor(r.Arrival/60) - first)
		requests[m]++
		if r.Images > 0 {
			images[m] += float64(r.Images)
			per = append(per, r.Images)
		}
	}
	if len(per) == 0 {
		return History{}, fmt.Errorf("%w: history trace has no images", ErrBadConfig)
	}
	slices.Sort(per)
	return History{
		ImageQPS:         median(images) / 60,
		RequestQPS:       median(requests) / 60,
		ImagesPerRequest: medianInt(per),
	}, nil
}

// median returns the median of v (sorted in place), the mean of the two
// middle values for an even length.
func median(v []float64) float64 {
	slices.Sort(v)
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}

// medianInt is median for sorted ints.
func medianInt(v []int) float64 {
	n := len(v)
	if n%2 == 1 {
		return float64(v[n/2])
	}
	return float64(v[n/2-1]+v[n/2]) / 2
}

// InitialSizes is ModServe's initial deployment (section 4.2): Image
// Instances N_i = ceil(median image QPS x median image encoding latency),
// the encoders the median load keeps busy (Little's law); Text Instances
// N_t = ceil(N_i / median images per request). Both are at least one.
func InitialSizes(h History, p Profile) Sizes {
	ni := max(1, int(math.Ceil(h.ImageQPS*p.EncodeSeconds)))
	nt := max(1, int(math.Ceil(float64(ni)/max(h.ImagesPerRequest, 1))))
	return Sizes{Image: ni, Text: nt}
}

// InitialMono is the monolith's initial deployment on the same footing:
// ceil(median request QPS / one instance's requests a second), at least
// one.
func InitialMono(h History, p Profile) int {
	return max(1, int(math.Ceil(h.RequestQPS/p.MonoRequestsPerSec)))
}
