package mmscale_test

import (
	"fmt"

	"github.com/drover-sched/drover/policies/mmscale"
)

// ModServe's initial sizes and one tick of its rule, by hand: 20 images
// a second at 0.25 s an encode keep 5 encoders busy; a median of 2 images
// a request gives 3 text instances. A period whose busiest minute brought
// 35,000 image tokens and 5,001 prompt tokens a second asks for
// ceil(35,000 / 10,000) = 4 Image and ceil(5,001 / 5,000) = 2 Text
// Instances.
func ExampleModServe() {
	prof := mmscale.Profile{ImageTokensPerSec: 10000, TextTokensPerSec: 5000, MonoRequestsPerSec: 2, EncodeSeconds: 0.25}
	init := mmscale.InitialSizes(mmscale.History{ImageQPS: 20, RequestQPS: 10, ImagesPerRequest: 2}, prof)
	s, err := mmscale.NewModServe(mmscale.DefaultConfig(), prof, init)
	if err != nil {
		panic(err)
	}
	fmt.Printf("initial %d image, %d text\n", s.Initial().Image, s.Initial().Text)
	w := mmscale.Window{Seconds: 300, Peak: mmscale.Rates{ImageTokens: 35000, TextLoad: 5001}}
	next := s.Decide(w, s.Initial(), true)
	fmt.Printf("after the period %d image, %d text\n", next.Image, next.Text)
	// Output:
	// initial 5 image, 3 text
	// after the period 4 image, 2 text
}
