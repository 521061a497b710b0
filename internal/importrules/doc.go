// Package importrules keeps Drover's layers (DESIGN.md's architecture)
// from drifting: Rules is a table of which packages may not depend on
// which, and a test fails the build when a forbidden arrow appears, the
// way Go's go/build/deps_test.go and Kubernetes' import-restrictions do.
//
// The layers, from DESIGN.md's picture: datasets (workloads) feed env (the
// simulator and its drivers); policies decide on env's views; agents learn
// networks; train trains them, checkpoints store them, serve answers with
// them, and cmd wires everything. A package may depend on the layers
// before its own, never on those after it, and nothing imports cmd. Each
// rule says, in its Reason, which part of that picture it keeps.
//
// A rule governs the build graph that go list -deps reports: the packages
// a governed package imports, directly or through others, under the
// default build tags, without its tests (a test may run the layers above
// it: env/trace's tests replay real policies). A rule whose Pending field
// is set does not hold yet: its violations are logged, not failed, until
// the work it names lands and clears the field.
//
// Beside the rules, Folders and FolderCycle check that no top-level
// folder depends on itself through the others (TestNoFolderCycle): on
// 8e257c2 agents -> env -> internal -> serve -> agents was one (env
// imported policies, policies/direct agents/nn, internal/agent serve).
//
// # Usage
//
// The check is go test ./internal/importrules. The same from code:
//
//	g, err := importrules.Load(ctx, importrules.Module+"/...")
//	for _, v := range importrules.Check(g, importrules.Rules) {
//		if v.Rule.Pending == "" {
//			fmt.Println(v) // e.g. env/trace must not depend on policies/firstfit (...): env/trace -> policies/firstfit
//		}
//	}
//
// A new rule is a new entry of Rules; a new layer, new entries and a line
// in DESIGN.md.
package importrules
