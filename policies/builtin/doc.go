// Package builtin registers every heuristic policy Drover ships.
//
// # Usage
//
//	reg := builtin.Registry()
//	p, err := reg.New("tiresias", policies.Config{Seed: 1})
//	err = sim.Run(p, nil)
package builtin
