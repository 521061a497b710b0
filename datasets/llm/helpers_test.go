package llm

import "math/rand/v2"

// newSource is the tests' seeded source.
func newSource(seed uint64) rand.Source { return rand.NewPCG(seed, seed) }
