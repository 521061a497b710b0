// Package mustjson decodes the parameter files that Drover's packages
// embed (fitted models, calibrated processes) at package initialisation:
// strictly, and validated, panicking with the file's name on anything
// wrong, since an embedded file that does not load is a build defect, not
// a run-time condition.
//
// # Usage
//
//	//go:embed params.json
//	var paramsJSON []byte
//
//	// Default is the fitted model.
//	var Default = mustjson.Decode[Params]("jitter: params.json", paramsJSON)
package mustjson
